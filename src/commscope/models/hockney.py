"""The Hockney model t(n) = alpha + n/B, its weighted least-squares fit and bootstrap CIs.

Hockney, "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
Parallel Computing 20(3), 1994: a message of n bytes costs a start-up time
alpha plus n over the asymptotic bandwidth B; n_half = alpha * B is the size
at which half of B is reached.

The fit is weighted least squares of per-case medians on size, weights
1 / se^2 with se each median's standard error (models.resample.point), so a
size measured precisely counts for more and the fit is the maximum-likelihood
line if the medians are normal with those variances. Bootstrap CIs are
percentile intervals (Efron & Tibshirani, "An Introduction to the
Bootstrap", 1993, ch. 13) over the lines refitted to resampled medians.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

CI_PERCENTILES = (2.5, 97.5)  # 95% percentile intervals


@dataclass(frozen=True)
class Line:
    """t(n) = alpha + n * inverse_bandwidth; seconds and bytes."""

    alpha_s: float
    inverse_bandwidth_s_per_byte: float  # the slope, 1/B

    def time_s(self, nbytes):
        return self.alpha_s + np.asarray(nbytes, dtype=float) * self.inverse_bandwidth_s_per_byte

    @property
    def bandwidth_Bps(self) -> float | None:
        """B, or None when the slope is not positive (no bandwidth limit seen in these sizes)."""
        slope = self.inverse_bandwidth_s_per_byte
        return 1 / slope if slope > 0 else None

    @property
    def n_half_bytes(self) -> float | None:
        b = self.bandwidth_Bps
        return self.alpha_s * b if b is not None and self.alpha_s > 0 else None


@dataclass(frozen=True)
class HockneyFit:
    """The line fitted to the medians, with 95% bootstrap CIs (None without resamples).

    An interval end of None is unbounded: resampled slopes reached 0, so B
    (and n_half) has no upper limit at this confidence. `identifiable` is False
    where the sizes cannot tell a bandwidth (the slope is at its floor, its interval
    reaches 0, or the sizes span too little): then only alpha is a result.
    `bound_Bps` is the fastest bandwidth the bytes' path allows (one copy's, where the
    launches measured it), and `at_bound` says the data would be faster still.
    """

    line: Line
    alpha_ci_s: tuple[float, float] | None
    bandwidth_ci_Bps: tuple[float | None, float | None] | None
    n_half_ci_bytes: tuple[float | None, float | None] | None
    identifiable: bool = True
    bound_Bps: float | None = None
    at_bound: bool = False

    def without_bandwidth(self) -> "HockneyFit":
        return replace(self, bandwidth_ci_Bps=None, n_half_ci_bytes=None, identifiable=False)


def line_params(sw, swx, swxx, swy, swxy):
    """Weighted least-squares intercept and slope from weighted sums (any matching shapes).

    Centred form: slope = Sxy / Sxx with Sxx = sum w (x - xbar)^2 and
    Sxy = sum w (x - xbar)(y - ybar), intercept = ybar - slope * xbar.
    """
    xbar = swx / sw
    ybar = swy / sw
    slope = (swxy - swx * ybar) / (swxx - swx * xbar)
    return ybar - slope * xbar, slope


def nonnegative_line(sw, swx, swxx, swy, swxy, swyy, min_slope=0.0):
    """Weighted least squares with alpha >= 0 and slope >= min_slope (>= 0), from weighted
    sums: intercept, slope and residual sum of squares (any matching shapes).

    A start-up time cannot be negative, nor a time per byte below that of the fastest
    path the bytes can take (0, or one copy's: min_slope). The line of t - min_slope * n
    is fitted with both bounds at 0. Where the free line breaks a bound, the best line
    lies on it (a convex problem: Lawson & Hanson, "Solving Least Squares Problems",
    1974, ch. 23): through the origin (alpha = 0, slope = Sxy/Sxx uncentred) or flat
    (slope = 0, alpha = the weighted mean), each held to the other bound too (their
    corner, where the times are below min_slope's line), whichever leaves less.
    """
    swy = swy - min_slope * swx  # the sums of t - min_slope * n
    swyy = swyy - 2 * min_slope * swxy + min_slope ** 2 * swxx
    swxy = swxy - min_slope * swxx
    alpha, slope = line_params(sw, swx, swxx, swy, swxy)
    with np.errstate(divide="ignore", invalid="ignore"):
        syy = swyy - swy * swy / sw
        rss = np.maximum(syy - (swxy - swx * swy / sw) ** 2 / (swxx - swx * swx / sw), 0.0)
        origin_slope = np.maximum(np.where(swxx > 0, swxy / swxx, 0.0), 0.0)
    flat_alpha = np.maximum(swy / sw, 0.0)

    def rss_of(a, s):
        return np.maximum(swyy - 2 * a * swy - 2 * s * swxy + a * a * sw + 2 * a * s * swx
                          + s * s * swxx, 0.0)
    origin_rss, flat_rss = rss_of(0.0, origin_slope), rss_of(flat_alpha, 0.0)
    free = (alpha >= 0) & (slope >= 0)
    origin = ~free & (origin_rss <= flat_rss)
    alpha = np.where(free, alpha, np.where(origin, 0.0, flat_alpha))
    slope = np.where(free, slope, np.where(origin, origin_slope, 0.0))
    return alpha, slope + min_slope, np.where(free, rss, np.where(origin, origin_rss, flat_rss))


def from_replicates(alpha_s: np.ndarray, slope: np.ndarray, floor: float = 0.0) -> HockneyFit:
    """The fit from column 0 (the data) and its CIs from columns 1.. (the bootstrap), the
    slopes held at or above `floor` (s/B: one copy's, or 0). The bandwidth is not
    identifiable when the slope is at the floor, or a resampled slope at 95% reaches 0:
    B then has no upper limit. A positive floor is a bound, so an interval that reaches
    it ends there: B's upper end is the copy's rate."""
    line = Line(float(alpha_s[0]), float(slope[0]))
    bound = {"bound_Bps": 1 / floor if floor > 0 else None,
             "at_bound": bool(floor > 0 and slope[0] <= floor)}
    if alpha_s.size < 2:
        fit = HockneyFit(line, None, None, None, **bound)
        return fit if slope[0] > floor else fit.without_bandwidth()
    alpha_b, slope_b = alpha_s[1:], slope[1:]
    with np.errstate(divide="ignore"):
        bandwidth = np.where(slope_b > 0, 1 / slope_b, np.inf)
    n_half = np.where(slope_b > 0, alpha_b * bandwidth, np.inf)
    fit = HockneyFit(line, _interval(alpha_b), _bounded(_interval(bandwidth)),
                     _bounded(_interval(n_half)), **bound)
    slope_low = np.percentile(slope_b, CI_PERCENTILES[0], method="inverted_cdf")
    return fit if slope[0] > floor and slope_low > 0 else fit.without_bandwidth()


def _interval(values: np.ndarray) -> tuple[float, float]:
    # Empirical quantiles (no interpolation), so an unbounded replicate stays inf.
    lo, hi = np.percentile(values, CI_PERCENTILES, method="inverted_cdf")
    return float(lo), float(hi)


def _bounded(interval: tuple[float, float]) -> tuple[float | None, float | None]:
    return tuple(v if np.isfinite(v) else None for v in interval)
