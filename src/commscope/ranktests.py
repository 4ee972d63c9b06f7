"""Two-sample rank statistics: the Mann-Whitney U test, the Hodges-Lehmann shift
with its distribution-free confidence interval, and Benjamini-Hochberg adjusted
p-values. Pure functions over samples.

Convention: `a` is the baseline sample (n values), `b` the other (m values); a
shift is b - a, so a positive shift of times means b is slower. Methods are
those of Hollander & Wolfe, "Nonparametric Statistical Methods", 2nd ed. 1999,
chapter 4 (4.1 the rank sum test, 4.2 the shift estimator, 4.3 its interval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

# The null distribution of U is computed exactly when both samples are smaller
# than this and have no ties (the rule R's wilcox.test uses); otherwise the
# normal approximation with tie correction, which is close from about 10 a side.
EXACT_MAX_N = 50
# Up to this many pairwise differences are formed at once (8 bytes each);
# beyond, order statistics of b - a are found by selection without forming them.
DIRECT_MAX_PAIRS = 1 << 22
SELECT_SAMPLE = 1024  # random candidates per selection round


@dataclass(frozen=True, slots=True)
class MannWhitney:
    u: float  # pairs with b_j > a_i, plus half the pairs with b_j = a_i
    p: float  # two-sided
    exact: bool  # exact null distribution (no ties, small samples) or normal approximation


@dataclass(frozen=True, slots=True)
class Shift:
    estimate: float  # Hodges-Lehmann: median of all b_j - a_i
    ci_low: float | None  # None when the samples are too small for the confidence asked
    ci_high: float | None


def _samples(values: ArrayLike, name: str) -> np.ndarray:
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return x


def mann_whitney(a: ArrayLike, b: ArrayLike) -> MannWhitney:
    """Two-sided Mann-Whitney U test of "a and b come from one distribution".

    U from mid-ranks of the pooled sample: U = R_b - m(m+1)/2 (Mann & Whitney
    1947; Hollander & Wolfe 1999, 4.1). Exact p from the null distribution
    when both samples are small and tie-free; else the normal approximation
    with tie-corrected variance and continuity correction.
    """
    a, b = _samples(a, "a"), _samples(b, "b")
    n, m = a.size, b.size
    values, inverse, ties = np.unique(np.concatenate([a, b]), return_inverse=True,
                                      return_counts=True)
    midranks = np.cumsum(ties) - (ties - 1) / 2
    u = float(midranks[inverse[n:]].sum() - m * (m + 1) / 2)
    if _exact_applies(n, m, ties):
        return MannWhitney(u, _exact_p(n, m, round(u)), True)
    sigma = _u_sigma(n, m, ties)
    if sigma == 0:  # every value equal: no evidence of any difference
        return MannWhitney(u, 1.0, False)
    z = max(abs(u - n * m / 2) - 0.5, 0) / sigma
    return MannWhitney(u, min(1.0, math.erfc(z / math.sqrt(2))), False)


def _exact_applies(n: int, m: int, ties: np.ndarray) -> bool:
    return n < EXACT_MAX_N and m < EXACT_MAX_N and bool((ties == 1).all())


def _u_sigma(n: int, m: int, ties: np.ndarray) -> float:
    """Standard deviation of U under the null, ties corrected (Hollander & Wolfe 1999, 4.1)."""
    total = n + m
    tie_term = float((ties.astype(np.float64) ** 3 - ties).sum()) / (total * (total - 1))
    return math.sqrt(n * m / 12 * (total + 1 - tie_term))


@lru_cache(maxsize=32)
def _u_null_counts(n: int, m: int) -> tuple[int, ...]:
    """How many of the C(n+m, n) equally likely orderings give U = 0, 1, ..., nm.

    U counts (a, b) pairs out of order, so these are the numbers of partitions
    of u into at most n parts of at most m: the coefficients of the Gaussian
    binomial [n+m, n]_q = prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i) (Andrews,
    "The Theory of Partitions" 1976, Thm 3.1). Integers throughout, so exact;
    truncating at degree nm is safe as dividing by 1 - q^i only looks down.
    """
    n, m = min(n, m), max(n, m)
    top = n * m
    counts = [1] + [0] * top
    for i in range(1, n + 1):
        for k in range(top, m + i - 1, -1):
            counts[k] -= counts[k - m - i]
        for k in range(i, top + 1):
            counts[k] += counts[k - i]
    return tuple(counts)


def _exact_p(n: int, m: int, u: int) -> float:
    counts = _u_null_counts(n, m)
    total = math.comb(n + m, n)
    lower = Fraction(sum(counts[:u + 1]), total)
    upper = Fraction(sum(counts[u:]), total)
    return float(min(Fraction(1), 2 * min(lower, upper)))


def _interval_rank(n: int, m: int, ties: np.ndarray, confidence: float) -> int | None:
    """The rank k such that [D_(k), D_(nm+1-k)] of the ordered b - a is the CI of the shift.

    The number of differences below the true shift is distributed as U under
    the null, so P(D_(k) > shift) = P(U <= k - 1); k is the largest rank with
    that at most (1 - confidence) / 2 (Hollander & Wolfe 1999, 4.3). Large or
    tied samples: k = round(nm/2 - z sigma_U), their normal approximation.
    """
    if _exact_applies(n, m, ties):
        counts = _u_null_counts(n, m)
        # str() turns 0.95 into 19/20 rather than the binary float just above it
        limit = (1 - Fraction(str(confidence))) / 2 * math.comb(n + m, n)
        k, below = 0, 0
        while below + counts[k] <= limit:
            below += counts[k]
            k += 1
        return k if k >= 1 else None
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    k = math.floor(n * m / 2 - z * _u_sigma(n, m, ties) + 0.5)
    return k if k >= 1 else None


def hodges_lehmann(a: ArrayLike, b: ArrayLike, confidence: float = 0.95) -> Shift:
    """Hodges-Lehmann shift of b against a, the median of the nm differences b_j - a_i,
    with the distribution-free CI from U's critical values (Hollander & Wolfe 1999, 4.2, 4.3).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    a, b = np.sort(_samples(a, "a")), _samples(b, "b")
    n, m = a.size, b.size
    pairs = n * m
    ties = np.unique(np.concatenate([a, b]), return_counts=True)[1]
    k = _interval_rank(n, m, ties, confidence)
    middle = [(pairs + 1) // 2, pairs // 2 + 1]  # one rank when nm is odd, two when even
    ranks = middle + ([k, pairs + 1 - k] if k else [])
    at = dict(zip(ranks, differences_at_ranks(a, b, ranks)))
    estimate = (at[middle[0]] + at[middle[1]]) / 2
    return Shift(estimate, at[k] if k else None, at[pairs + 1 - k] if k else None)


def differences_at_ranks(a_sorted: np.ndarray, b: np.ndarray, ranks: list[int]) -> list[float]:
    """Order statistics (1-based ranks) of the nm differences b_j - a_i; a ascending.

    Up to DIRECT_MAX_PAIRS they are formed and partitioned. Beyond, each is
    selected without forming them: candidate pairs are kept per b_j as a range
    of a (b_j - a_i falls as a_i grows), and each round narrows the range
    between two pivots drawn from a random sample of candidates around the
    wanted rank (Floyd & Rivest 1975, "Expected time bounds for selection"),
    each pivot's rank counted by binary search: O((n + m) log n) per round,
    a few rounds, exact result; the fixed seed only makes the timing repeatable.
    """
    if a_sorted.size * b.size <= DIRECT_MAX_PAIRS:
        diffs = np.subtract.outer(b, a_sorted).ravel()
        picked = np.partition(diffs, [r - 1 for r in ranks])
        return [float(picked[r - 1]) for r in ranks]
    rng = np.random.default_rng(0)
    return [_select(a_sorted, b, r, rng) for r in ranks]


def _count_at_most(a: np.ndarray, b: np.ndarray, d: float, strict: bool) -> np.ndarray:
    """Per b_j, how many a_i have b_j - a_i <= d (< d when strict); a ascending.

    Those a_i are a suffix of a; its start is found by one binary search run
    for every j at once, comparing the computed differences themselves so the
    counts agree exactly with the differences the pivots are taken from.
    """
    lo = np.zeros(b.size, dtype=np.int64)
    hi = np.full(b.size, a.size, dtype=np.int64)
    active = lo < hi
    while active.any():
        mid = (lo + hi) // 2
        diff = b - a[np.minimum(mid, a.size - 1)]
        holds = diff < d if strict else diff <= d
        hi = np.where(active & holds, mid, hi)
        lo = np.where(active & ~holds, mid + 1, lo)
        active = lo < hi
    return a.size - hi


def _candidates(a, b, below, upto, picks=None) -> np.ndarray:
    """Differences b_j - a_i not yet known to lie below or above the wanted one
    (for each j: a[n - upto_j : n - below_j]); all of them, or those at positions `picks`."""
    width = upto - below
    ends = np.cumsum(width)
    positions = np.arange(int(ends[-1])) if picks is None else picks
    j = np.searchsorted(ends, positions, side="right")
    i = a.size - upto[j] + positions - (ends[j] - width[j])
    return b[j] - a[i]


def _select(a: np.ndarray, b: np.ndarray, rank: int, rng: np.random.Generator) -> float:
    below = np.zeros(b.size, dtype=np.int64)  # per j: differences known to rank below `rank`
    upto = np.full(b.size, a.size, dtype=np.int64)  # per j: those not known to rank above it
    while True:
        left = rank - int(below.sum())  # the wanted rank among the candidates
        total = int((upto - below).sum())
        if total <= DIRECT_MAX_PAIRS:
            return float(np.partition(_candidates(a, b, below, upto), left - 1)[left - 1])
        sample = np.sort(_candidates(a, b, below, upto, rng.integers(0, total, SELECT_SAMPLE)))
        share = left / total
        spread = 3 * math.sqrt(SELECT_SAMPLE * share * (1 - share)) + 1
        for at in (share * SELECT_SAMPLE - spread, share * SELECT_SAMPLE + spread):
            pivot = float(sample[min(max(int(at), 0), SELECT_SAMPLE - 1)])
            less = _count_at_most(a, b, pivot, strict=True)
            most = _count_at_most(a, b, pivot, strict=False)
            if less.sum() < rank <= most.sum():
                return pivot
            if most.sum() < rank:
                below = np.maximum(below, most)
            else:
                upto = np.minimum(upto, less)


def benjamini_hochberg(p: ArrayLike) -> np.ndarray:
    """Adjusted p-values controlling the false discovery rate (Benjamini & Hochberg 1995):
    p_(i) m / i, made monotone from the largest down, capped at 1; same order as given."""
    p = np.asarray(p, dtype=np.float64)
    if p.size == 0:
        return p
    order = np.argsort(p)
    scaled = p[order] * p.size / np.arange(1, p.size + 1)
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(np.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    return adjusted
