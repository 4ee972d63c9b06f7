"""Summary statistics over timing samples (seconds): pure functions, numpy inside.

Timing samples are skewed and heavy-tailed, so the headline number is the
median with a distribution-free confidence interval, and outliers are
counted (never dropped) by a robust rule.
"""

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

# Above this many samples the exact binomial sum is replaced by its normal
# approximation, as Le Boudec 2010 (Thm 2.1) suggests for large n; from
# n = 1001 to 3999 it is at most one rank wider than exact, never narrower.
EXACT_CI_MAX_N = 1000

ALPHA = 0.05  # 1 - every interval's level, and each verdict family's false discovery rate
LEVEL = 1 - ALPHA  # every interval's level (0.95 exactly)
Z = NormalDist().inv_cdf(1 - ALPHA / 2)  # the normal quantile of a LEVEL interval
MAX_DF = 1e6  # t quantiles of more degrees of freedom are the normal's


def t_quantile(df, q: float = 1 - ALPHA / 2):
    """Student's t quantile q with df degrees of freedom (a float or an array): by
    default the half-width factor of a two-sided LEVEL interval."""
    from scipy.special import stdtrit  # 0.2 s to import: not before a run's figures need it
    return stdtrit(np.minimum(df, MAX_DF), q)


def t_cdf(df, x):
    """Student's t distribution function with df degrees of freedom at x."""
    from scipy.special import stdtr
    return stdtr(np.minimum(df, MAX_DF), x)

# Modified z-score outlier rule, Iglewicz & Hoaglin 1993: 0.6745 is the
# MAD of a standard normal, so 0.6745 (x - median) / MAD estimates a z-score.
MODIFIED_Z_FACTOR = 0.6745
MODIFIED_Z_THRESHOLD = 3.5
# For a normal distribution the mean absolute deviation is sigma * sqrt(2/pi),
# so sigma ~= 1.2533 * MeanAD: the fallback scale when MAD is 0.
MEAN_AD_TO_SIGMA = math.sqrt(math.pi / 2)


@dataclass(frozen=True, slots=True)
class Summary:
    """Statistics of one measured case; times in seconds."""

    n: int
    median: float
    ci_low: float | None  # CI of the median; None when n is too small (n < 6 at 95%)
    ci_high: float | None
    p05: float
    p95: float
    mean: float
    stddev: float | None  # sample standard deviation (ddof=1); None when n < 2
    min: float
    max: float
    cv: float | None  # stddev / mean; None without stddev or when mean is 0
    outliers: int
    outlier_indices: tuple[int, ...]  # positions in the samples as given


def median_ci_ranks(n: int, confidence: float = LEVEL) -> tuple[int, int] | None:
    """1-based ranks (j, k) such that [x_(j), x_(k)] is a CI of the median.

    Distribution-free, by order statistics (Le Boudec, "Performance Evaluation
    of Computer and Communication Systems", 2010, Thm 2.1 / Table A.1): j is
    the largest rank with P(Binom(n, 1/2) <= j - 1) <= (1 - confidence) / 2,
    and k = n + 1 - j. None when no such j exists (n < 6 at 95%).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n < 1:
        return None
    j = _exact_rank(n, confidence) if n <= EXACT_CI_MAX_N else _normal_rank(n, confidence)
    if j < 1:
        return None
    return j, n + 1 - j


@functools.lru_cache(maxsize=1024)
def _exact_rank(n: int, confidence: float) -> int:
    # Exact rational arithmetic: P(B <= i) = sum C(n, m) / 2^n for m <= i.
    # str() turns 0.95 into 19/20 rather than the binary float just above it.
    tail_count_limit = (1 - Fraction(str(confidence))) / 2 * 2**n
    tail_count = 0
    j = 0
    for i in range(n + 1):
        tail_count += math.comb(n, i)
        if tail_count > tail_count_limit:
            break
        j = i + 1
    return j


def _normal_rank(n: int, confidence: float) -> int:
    # Le Boudec 2010, Thm 2.1 for large n: j = floor(n/2 - 0.98 sqrt(n)) at 95%,
    # where 0.98 = z / 2 with z the normal (1 + confidence) / 2 quantile.
    # k = ceil(n/2 + 1 + 0.98 sqrt(n)) equals n + 1 - j.
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    return math.floor(n / 2 - z / 2 * math.sqrt(n))


def median_ci(
    samples: ArrayLike, confidence: float = LEVEL, *, presorted: bool = False
) -> tuple[float, float] | None:
    """Distribution-free CI (low, high) of the median; None when n is too small.

    Pass presorted=True with an ascending numpy array to skip the sort.
    """
    ordered = _as_samples(samples)
    if not presorted:
        ordered = np.sort(ordered)
    return _median_ci_of_sorted(ordered, confidence)


def _median_ci_of_sorted(ordered: np.ndarray, confidence: float) -> tuple[float, float] | None:
    ranks = median_ci_ranks(ordered.size, confidence)
    if ranks is None:
        return None
    j, k = ranks
    return float(ordered[j - 1]), float(ordered[k - 1])


def percentile(samples: ArrayLike, p: float) -> float:
    """The p-th percentile (0..100), numpy's default linear interpolation."""
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be in [0, 100], got {p}")
    return float(np.percentile(_as_samples(samples), p))


def outlier_mask(samples: ArrayLike, median: float | None = None) -> np.ndarray:
    """True where a sample is an outlier by the modified z-score rule.

    |0.6745 (x - median) / MAD| > 3.5 (Iglewicz & Hoaglin 1993). When more
    than half the samples equal the median (common with a coarse timer),
    MAD is 0 and would flag every other value; the scale then falls back to
    1.2533 * mean absolute deviation from the median, which estimates sigma
    the same way (|x - median| / (1.2533 MeanAD) > 3.5). When that is 0 too,
    all samples are equal and none is flagged.
    """
    values = _as_samples(samples)
    if median is None:
        median = float(np.median(values))
    return _outlier_mask(values, median)


def _outlier_mask(values: np.ndarray, median: float) -> np.ndarray:
    deviation = np.abs(values - median)
    mad = float(np.median(deviation))
    if mad > 0:
        return MODIFIED_Z_FACTOR * deviation / mad > MODIFIED_Z_THRESHOLD
    mean_ad = float(np.mean(deviation))
    if mean_ad > 0:
        return deviation / (MEAN_AD_TO_SIGMA * mean_ad) > MODIFIED_Z_THRESHOLD
    return np.zeros(values.shape, dtype=bool)


def summarize(samples: ArrayLike, confidence: float = LEVEL) -> Summary:
    """All statistics of one case; sorts the samples once."""
    values = _as_samples(samples)
    ordered = np.sort(values)
    n = ordered.size
    median = _median_of_sorted(ordered)
    ci = _median_ci_of_sorted(ordered, confidence)
    p05, p95 = (float(v) for v in np.percentile(ordered, [5, 95]))
    mean = float(np.mean(ordered))
    stddev = float(np.std(ordered, ddof=1)) if n >= 2 else None
    cv = stddev / mean if stddev is not None and mean != 0 else None
    outlier_indices = tuple(np.flatnonzero(_outlier_mask(values, median)).tolist())
    return Summary(
        n=n,
        median=median,
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        p05=p05,
        p95=p95,
        mean=mean,
        stddev=stddev,
        min=float(ordered[0]),
        max=float(ordered[-1]),
        cv=cv,
        outliers=len(outlier_indices),
        outlier_indices=outlier_indices,
    )


def relative_precision(s: Summary) -> float | None:
    """How far the median's CI reaches from the median, relative to it: the
    figure --precision bounds (max(median - low, high - median) / median)."""
    if s.ci_low is None or s.median <= 0:
        return None
    return max(s.median - s.ci_low, s.ci_high - s.median) / s.median


def _median_of_sorted(ordered: np.ndarray) -> float:
    mid = ordered.size // 2
    if ordered.size % 2:
        return float(ordered[mid])
    return float((ordered[mid - 1] + ordered[mid]) / 2)


def _as_samples(samples: ArrayLike) -> np.ndarray:
    values = np.asarray(samples, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"samples must be a non-empty 1-D sequence, got shape {values.shape}")
    if not np.isfinite(values).all():
        raise ValueError("samples contain NaN or infinity")
    return values


def benjamini_hochberg(p: ArrayLike) -> np.ndarray:
    """Benjamini and Hochberg's adjusted p-values (J. R. Stat. Soc. B 57, 1995): the
    smallest m p_(j) / j over j >= i, at most 1; the values scipy.stats'
    false_discovery_control gives, without its second of import (a health check adjusts a
    million at once)."""
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    ranked = p[order] * p.size / np.arange(1, p.size + 1)
    adjusted = np.empty_like(ranked)
    adjusted[order] = np.minimum(np.minimum.accumulate(ranked[::-1])[::-1], 1.0)
    return adjusted


def satterthwaite(parts: list[tuple[float, float]]) -> float:
    """Degrees of freedom of a sum of variance estimates (value, df) (Satterthwaite 1946)."""
    total = sum(v for v, _ in parts)
    denominator = sum(v * v / df for v, df in parts if df > 0 and v > 0)
    return total * total / denominator if denominator > 0 else max(df for _, df in parts)


def harrell_davis(samples: ArrayLike, q: float) -> float:
    """The q-quantile by Harrell and Davis's estimator (F. E. Harrell, C. E. Davis, "A new
    distribution-free quantile estimator", Biometrika 69(3), 1982): the order statistics
    weighted by a Beta((n + 1) q, (n + 1)(1 - q)) distribution's mass on ((i - 1)/n, i/n],
    so that every sample near the quantile counts, not the one or two that a linear
    interpolation between neighbours reads. The weights centre on rank (n + 1) q, inside
    the sample only from harrell_davis_min_samples(q) samples on."""
    from scipy.special import betainc
    ordered = np.sort(_as_samples(samples))
    n = ordered.size
    if not 0 < q < 1:
        raise ValueError(f"quantile must be in (0, 1), got {q}")
    weights = np.diff(betainc((n + 1) * q, (n + 1) * (1 - q), np.arange(n + 1) / n))
    used = weights > 0  # far order statistics' weights underflow; 0 x -inf is not 0
    return float(weights[used] @ ordered[used])


def harrell_davis_min_samples(q: float) -> int:
    """The fewest samples whose Harrell-Davis weights centre within the sample: rank
    (n + 1) q at most n, so n >= q / (1 - q) (99 for the p99). Below it the estimate is
    the largest sample or less, the (n / (n + 1))-quantile on average (the p97 of 30)."""
    return math.ceil(q / (1 - q) - 1e-9)
