"""Per-case medians, their standard errors, and bootstrap replicates of the medians.

Every model is fitted to per-case medians of the kernel's latency, never to
raw samples: timing samples are skewed and heavy-tailed, the median is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..store.cases import Case
from ..stats.replication import History
from ..stats.stats import LEVEL, MAX_DF, Z, median_ci
from ..stats.summary import launch_spreads
from ..stats.verdict.inference import COMMAND_TO_LAUNCH

# The order-statistic CI of the median is asymptotically median +- z * se
# (Le Boudec 2010, Thm 2.1), so se = CI width / (2 z).
# A zero-width CI (most samples equal on a coarse timer) would give one size
# unbounded weight: no median's standard error is taken below 0.1% of it.
MIN_RELATIVE_SE = 1e-3


@dataclass(frozen=True)
class Point:
    """One case reduced to what a fit needs; seconds."""

    bytes: int
    latency_s: np.ndarray  # the kernel's latency per valid sample, ascending
    median_s: float
    se_s: float  # standard error of the median, from its CI


def point(case: Case) -> Point:
    """The case's latencies (kernel definition: half round trip, ...), median and its se.

    Without a CI (fewer than 6 samples at 95%) the se is the median itself:
    such a case keeps a weight, but only a relative one, far below any case
    with a CI.
    """
    if case.imported:  # one printed figure, equal relative weight: no CI can be drawn
        median = case.imported["median_s"]
        return Point(case.bytes, np.array([median]), median, MIN_RELATIVE_SE * abs(median))
    latency = np.sort(case.latency_s)
    median = float(np.median(latency))
    ci = median_ci(latency, LEVEL, presorted=True)
    se = (ci[1] - ci[0]) / (2 * Z) if ci else abs(median)
    return Point(case.bytes, latency, median, max(se, MIN_RELATIVE_SE * abs(median)))


def bootstrap_medians(latency_s: np.ndarray, resamples: int,
                      rng: np.random.Generator) -> np.ndarray:
    """Medians of `resamples` bootstrap resamples of the ascending `latency_s`, drawn exactly.

    A resample of size n drawn with replacement from x_(1) <= ... <= x_(n) is
    x_(ceil(n U_i)) for n uniforms U_i, and the map is monotone, so its k-th
    order statistic is x_(ceil(n U_(k))), where U_(k) ~ Beta(k, n - k + 1)
    (David & Nagaraja, "Order Statistics", 2003, 2.2). Given U_(k) = u, the
    next one is u + (1 - u) Beta(1, n - k): the least of n - k uniforms on
    (u, 1). Drawing these two instead of n indices gives the same
    distribution as resampling (Efron 1979) at O(1) cost per resample.
    """
    n = latency_s.size
    k = (n + 1) // 2  # the median's rank; for even n the mean of ranks k and k + 1
    u = rng.beta(k, n - k + 1, resamples)
    low = latency_s[_index(u, n)]
    if n % 2:
        return low
    u_next = u + (1 - u) * rng.beta(1, n - k, resamples)
    return (low + latency_s[_index(u_next, n)]) / 2


def _index(u: np.ndarray, n: int) -> np.ndarray:
    return np.clip(np.ceil(n * u).astype(np.int64) - 1, 0, n - 1)


def launch_shocks(cases: list[Case], resamples: int, rng: np.random.Generator,
                  history: Callable[[list[Case]], History | None] | None = None
                  ) -> np.ndarray | None:
    """Log-scale shifts, cases x resamples, that carry the variation between launches and
    between commands into a fit's bootstrap, as a case's interval does (docs/statistics.md:
    log m_ck = mu + a_c + b_ck). Each command and each of its launches gets one normal
    draw per replicate, shared by all its sizes (a launch that runs slower does so at
    every size), scaled by the size's spread between launches (summary.launch_spreads:
    s^2 with its degrees of freedom). The command's variance is the case's history's
    (`history(cases)`: other commands' launches of it in the results file), or taken
    equal to s^2 without one. Each variance is redrawn per replicate from its sampling
    distribution (var * df / chi2(df)), so a spread from 3 launches widens the
    intervals as t(2) does.
    None where no case has two launches to tell a spread: the intervals are then within
    the launch."""
    by_case: dict[tuple[int, int], list[int]] = {}
    for i, c in enumerate(cases):
        by_case.setdefault((c.run_id, c.bytes), []).append(i)
    spreads = launch_spreads([[cases[i] for i in rows] for rows in by_case.values()])
    if not any(s is not None and s.var > 0 for s in spreads):
        return None
    u, u_command = rng.random(resamples), rng.random(resamples)  # the variances' own draws

    def drawn(var: float, df: float, uniform: np.ndarray) -> np.ndarray:
        df = min(df, MAX_DF)
        from scipy.special import gammaincinv  # imported when a fit resamples
        return np.sqrt(var * df / (2 * gammaincinv(df / 2, uniform)))
    command = {r: rng.standard_normal(resamples) for r in sorted({c.run_id for c in cases})}
    launches: dict[tuple[int, int | None], np.ndarray] = {}
    shocks = np.zeros((len(cases), resamples))
    for rows, spread in zip(by_case.values(), spreads):
        if spread is None or spread.var <= 0:
            continue
        scale = drawn(spread.var, spread.df, u)
        past = history([cases[i] for i in rows]) if history else None
        between = drawn(past.command_var, past.command_df, u_command) \
            if past and past.command_var is not None else np.sqrt(COMMAND_TO_LAUNCH) * scale
        for i in rows:
            c = cases[i]
            if (c.run_id, c.launch) not in launches:
                launches[c.run_id, c.launch] = rng.standard_normal(resamples)
            shocks[i] = between * command[c.run_id] + scale * launches[c.run_id, c.launch]
    return shocks
