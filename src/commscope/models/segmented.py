"""Protocol switches: piecewise Hockney lines over size, the segment count chosen by BIC.

An MPI library changes protocol with the message size (eager to rendezvous,
copy-in/copy-out to single copy), and each protocol has its own alpha and B,
so t(n) is piecewise linear and may jump where the protocol changes. The
model with K segments splits the distinct sizes, in order, into K runs of
consecutive sizes and fits each run its own weighted least-squares line
(models.hockney). Breakpoints can fall only between measured sizes: a
breakpoint's `bytes` is the first size of the later segment, the switch
lies between the size before it and it.

The best split for every K is found exactly by dynamic programming over the
weighted residual sum of squares (Bellman, "On the approximation of curves
by line segments using dynamic programming", CACM 4(6), 1961). K is chosen
by the Bayesian information criterion (Schwarz, "Estimating the dimension
of a model", Ann. Statist. 6(2), 1978):

    BIC(K) = N ln(RSS_K / N) + p_K ln N,   p_K = 2K + 3(K - 1) + 1 = 5K - 2

N points (cases), RSS_K the weighted residual sum of squares, and p_K
counting each segment's alpha and slope, the common scale of the weights
(they fix the variances only up to a factor, which the N ln(RSS/N) form
estimates) and each breakpoint as three coefficients: a breakpoint is
searched over every gap, which the plain count of one parameter does not
pay for (Hall, Osborn & Sakkas, "Inference on structural breaks using
information criteria", The Manchester School 81(S3), 2013). On 300
simulated straight lines of 24 sizes (2% noise) the plain count split 33%
of them, this one 3%. Each bootstrap replicate is split anew with the
chosen K; the spread of its breakpoints and of its segments' lines gives
their CIs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .hockney import CI_PERCENTILES, HockneyFit, from_replicates, nonnegative_line

MIN_SIZES_PER_SEGMENT = 3  # a line through 2 sizes fits exactly: no residual to judge it by
# A segment whose largest size is less than this many times its smallest (1 B for 0 B)
# cannot tell a bandwidth from its start-up time: 0-2 B once read 38 MB/s. Its alpha stands.
MIN_SPAN_FOR_BANDWIDTH = 4
# RSS below this fraction of the total sum of squares is exact to float64 precision; the floor
# keeps ln(RSS) finite for noise-free data.
RSS_FLOOR = 1e-12


def parameters(k: int) -> int:
    """p_K of the BIC: 2 per segment, 3 per breakpoint (Hall, Osborn & Sakkas 2013), 1 scale."""
    return 2 * k + 3 * (k - 1) + 1


@dataclass(frozen=True)
class Segment:
    from_bytes: int  # first and last measured size in the segment
    to_bytes: int
    fit: HockneyFit


@dataclass(frozen=True)
class Breakpoint:
    bytes: int  # first size of the later segment
    ci_bytes: tuple[int, int] | None  # 95% bootstrap percentile interval
    # "switch": the time may jump (a protocol changes); "continuous": the two lines meet
    # at meets_bytes, between the sizes on either side (a regime such as a cache size)
    kind: str = "switch"
    meets_bytes: int | None = None


@dataclass(frozen=True)
class SegmentedFit:
    single: HockneyFit  # K = 1: the Hockney line over every size, always reported
    segments: list[Segment]  # the K chosen by BIC
    breakpoints: list[Breakpoint]
    bic: dict[int, float]  # K -> BIC, for every K tried

    def time_s(self, nbytes):
        """t(n) by the segmented model: the line of the last segment starting at or below n."""
        n = np.asarray(nbytes, dtype=float)
        starts = np.array([s.from_bytes for s in self.segments])
        which = np.clip(np.searchsorted(starts, n, side="right") - 1, 0, None)
        alpha = np.array([s.fit.line.alpha_s for s in self.segments])[which]
        slope = np.array([s.fit.line.inverse_bandwidth_s_per_byte for s in self.segments])[which]
        return alpha + n * slope


class _Sums:
    """Weighted sums per distinct size, cumulated: sums over sizes [i, j) are P[j] - P[i]."""

    def __init__(self, x: np.ndarray, w: np.ndarray, y: np.ndarray, copy: np.ndarray):
        self.sizes, where = np.unique(x, return_inverse=True)
        m = self.sizes.size
        # x in units of the largest size, so sums of x^2 stay well scaled.
        self.x_unit = float(self.sizes[-1]) or 1.0
        xs = x / self.x_unit

        def cumulated(values):
            per_size = np.zeros((m,) + values.shape[1:])
            np.add.at(per_size, where, values)
            return np.concatenate([np.zeros((1,) + values.shape[1:]), np.cumsum(per_size, 0)])

        self.w, self.wx, self.wxx = (cumulated(v) for v in (w, w * xs, w * xs * xs))
        wy = w[:, None] * y
        self.wy, self.wxy, self.wyy = (cumulated(v) for v in (wy, wy * xs[:, None], wy * y))
        self.total_ss = float(self.wyy[-1, 0] - self.wy[-1, 0] ** 2 / self.w[-1])
        # one copy's time per point (NaN: not measured), for the floor of each slope
        has = ~np.isnan(copy)
        wc, c = w * has, np.where(has, copy, 0.0)
        self.c = [cumulated(v) for v in (wc, wc * xs, wc * xs * xs, wc * c, wc * c * xs)]

    def floor(self, i, j):
        """The least slope of a line over sizes [i[k], j[k]): the slope of one copy's times
        over those sizes, weighted as the line's points are (docs/models.md, "B no faster
        than a copy"); 0 where fewer than two sizes have one."""
        n, sx, sxx, sc, sxc = (s[j] - s[i] for s in self.c)
        with np.errstate(divide="ignore", invalid="ignore"):
            sxx_centred = sxx - sx * sx / n
            slope = (sxc - sx * sc / n) / sxx_centred
        return np.where((n > 0) & (sxx_centred > 1e-12 * np.maximum(sxx, 1e-300)),
                        np.maximum(np.nan_to_num(slope), 0.0), 0.0)

    def between(self, i, j, columns=slice(None)):
        """Sums over sizes [i[k], j[k]): in every replicate (columns a slice), or in replicate
        columns[k] (an index array)."""
        fixed = tuple(s[j] - s[i] for s in (self.w, self.wx, self.wxx))
        varying = tuple(s[j, columns] - s[i, columns] for s in (self.wy, self.wxy, self.wyy))
        return fixed, varying

    def column0(self, i: int, j: int) -> tuple[float, ...]:
        """The measured medians' sums over sizes [i, j): w, wx, wxx, wy, wxy, wyy."""
        fixed = tuple(float(s[j] - s[i]) for s in (self.w, self.wx, self.wxx))
        return fixed + tuple(float(s[j, 0] - s[i, 0]) for s in (self.wy, self.wxy, self.wyy))

    def rss(self, i, j):
        """The least RSS of a physical line (alpha, slope >= 0) over each [i[k], j[k])."""
        (sw, swx, swxx), varying = self.between(i, j)
        return nonnegative_line(*(s[:, None] for s in (sw, swx, swxx)), *varying)[2]

    def lines(self, i, j) -> HockneyFit:
        """Each replicate's physical line over its own sizes [i[r], j[r]), in seconds and
        bytes; the bandwidth only where the data's sizes span enough to tell one."""
        fixed, varying = self.between(i, j, np.arange(i.size))
        floor = self.floor(i, j)
        alpha, slope, _ = nonnegative_line(*fixed, *varying, min_slope=floor)
        fit = from_replicates(alpha, slope / self.x_unit, floor[0] / self.x_unit)
        first, last = self.sizes[i[0]], self.sizes[j[0] - 1]
        return fit if last >= MIN_SPAN_FOR_BANDWIDTH * max(first, 1) else fit.without_bandwidth()


def fit(x: np.ndarray, w: np.ndarray, y: np.ndarray, max_segments: int,
        copy: np.ndarray | None = None) -> SegmentedFit:
    """Fit 1..max_segments segments to points (x bytes, weight w, medians y[:, r]).

    Column 0 of y holds the measured medians, columns 1.. bootstrap replicates; `copy`
    one copy's time at each point's size (NaN or None: not measured), which no line's
    time per byte may beat. Needs at least MIN_SIZES_PER_SEGMENT distinct sizes.
    """
    sums = _Sums(x, w, y, np.full(x.shape, np.nan) if copy is None else copy)
    m, n_points = sums.sizes.size, x.size
    k_max = max(1, min(max_segments, m // MIN_SIZES_PER_SEGMENT))
    best, split_at = _best_splits(sums, m, k_max)
    floor = RSS_FLOOR * max(sums.total_ss, np.finfo(float).tiny)
    bic = {k: float(n_points * np.log(max(best[k, m, 0], floor) / n_points)
                    + parameters(k) * np.log(n_points)) for k in range(1, k_max + 1)}
    k = min(bic, key=bic.get)
    bounds = _bounds(split_at, k, m, y.shape[1])
    segments = [Segment(int(sums.sizes[bounds[0, s]]), int(sums.sizes[bounds[0, s + 1] - 1]),
                        sums.lines(bounds[:, s], bounds[:, s + 1])) for s in range(k)]
    breakpoints = [_typed(_breakpoint(sums.sizes[bounds[:, s]]), sums, bounds[0], s,
                          max(best[k, m, 0], floor), n_points) for s in range(1, k)]
    columns = y.shape[1]
    single = sums.lines(np.zeros(columns, int), np.full(columns, m))
    return SegmentedFit(single, segments, breakpoints, bic)


def _best_splits(sums: _Sums, m: int, k_max: int) -> tuple[np.ndarray, np.ndarray]:
    """best[k, j, r]: least RSS of k segments over sizes [0, j) in replicate r;
    split_at[k, j, r]: where the last of them starts.

    Column j at a time (the lines ending there), so memory stays O(k m R).
    """
    columns = sums.wy.shape[1]
    best = np.full((k_max + 1, m + 1, columns), np.inf)
    split_at = np.zeros((k_max + 1, m + 1, columns), dtype=int)
    for j in range(MIN_SIZES_PER_SEGMENT, m + 1):
        starts = np.arange(j - MIN_SIZES_PER_SEGMENT + 1)  # a segment [i, j) has enough sizes
        cost = sums.rss(starts, np.full(starts.size, j))
        best[1, j] = cost[0]
        for k in range(2, k_max + 1):
            total = best[k - 1, starts] + cost  # k-1 segments up to i, then one from i to j
            split_at[k, j] = np.argmin(total, axis=0)
            best[k, j] = np.min(total, axis=0)
    return best, split_at


def _bounds(split_at: np.ndarray, k: int, m: int, columns: int) -> np.ndarray:
    """Segment s of replicate r covers sizes [bounds[r, s], bounds[r, s + 1])."""
    bounds = np.zeros((columns, k + 1), dtype=int)
    bounds[:, k] = m
    r = np.arange(columns)
    for s in range(k, 1, -1):
        bounds[:, s - 1] = split_at[s, bounds[:, s], r]
    return bounds


MEET_GRID = 64  # candidate meeting points tried in a breakpoint's gap


def _typed(b: Breakpoint, sums: _Sums, bounds: np.ndarray, s: int, rss: float,
           n_points: int) -> Breakpoint:
    """The breakpoint before segment s as a switch (the lines may jump) or continuous (they
    meet in the gap between the sizes on either side), whichever the BIC prefers: meeting
    costs one coefficient less (the jump) and whatever residual the constraint adds, that
    of the best meeting point on a grid of the gap, lines fitted freely in both cases."""
    i, cut, j = bounds[s - 1], bounds[s], bounds[s + 1]
    a, c = sums.column0(i, cut), sums.column0(cut, j)
    separate = _free_rss(*a) + _free_rss(*c)
    lo, hi = sums.sizes[cut - 1] / sums.x_unit, sums.sizes[cut] / sums.x_unit
    meets = np.linspace(lo, hi, MEET_GRID)
    joined = np.array([_meeting_rss(a, c, tau) for tau in meets])
    best = int(np.argmin(joined))
    added = max(joined[best] - separate, 0.0)
    if n_points * np.log((rss + added) / rss) - np.log(n_points) >= 0:
        return b
    return Breakpoint(b.bytes, b.ci_bytes, "continuous", int(round(meets[best] * sums.x_unit)))


def _free_rss(sw, swx, swxx, swy, swxy, swyy) -> float:
    """The residual of the unconstrained weighted line through a segment's points."""
    sxx = swxx - swx * swx / sw
    syy = swyy - swy * swy / sw
    sxy = swxy - swx * swy / sw
    return max(float(syy - sxy * sxy / sxx), 0.0) if sxx > 0 else max(float(syy), 0.0)


def _meeting_rss(a: tuple, c: tuple, tau: float) -> float:
    """The residual of two lines that meet at x = tau, the first over the sums `a`, the
    second over `c`: t = p + q x, plus r (x - tau) on the second's points."""
    w1, x1, xx1, y1, xy1, yy1 = a
    w2, x2, xx2, y2, xy2, yy2 = c
    u, uu = x2 - tau * w2, xx2 - 2 * tau * x2 + tau * tau * w2
    xu, uy = xx2 - tau * x2, xy2 - tau * y2
    normal = np.array([[w1 + w2, x1 + x2, u], [x1 + x2, xx1 + xx2, xu], [u, xu, uu]])
    rhs = np.array([y1 + y2, xy1 + xy2, uy])
    theta = np.linalg.lstsq(normal, rhs, rcond=None)[0]
    return max(float(yy1 + yy2 - theta @ rhs), 0.0)


def _breakpoint(first_sizes: np.ndarray) -> Breakpoint:
    if first_sizes.size < 2:
        return Breakpoint(int(first_sizes[0]), None)
    lo, hi = np.percentile(first_sizes[1:], CI_PERCENTILES, method="inverted_cdf")
    return Breakpoint(int(first_sizes[0]), (int(lo), int(hi)))
