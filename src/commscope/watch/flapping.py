"""Flapping: a link or case that falls in two states over time (docs/watch.md).

Within a launch, the samples of one case in order (seconds each) are split into a fast
and a slow state:
- the log times are smoothed by a running median over `dwell` samples, so a burst
  shorter than half of it (a single preempted sample) cannot make a state of its own;
- the smoothed series is cut in two at the threshold that leaves the least variance
  within the two sides (N. Otsu, "A threshold selection method from gray-level
  histograms", IEEE Trans. SMC 9(1), 1979: 2-means in one dimension);
- the states' runs are what the link did: a run is one stay in a state. Samples inside
  one stay are not independent evidence (they share the stay), so the size of the slow
  state is tested with the runs as the units: the slow runs' median log times against
  the fast runs', a pooled two-sample t interval.
It is named `flapping` only where it alternates and is real: the slow state is entered
at least twice (a slow warm-up, or one slow burst, is one stay), each state holds
MIN_SHARE or more of the launch's time, the states' medians lie SEPARATION or more of
their within-state spread apart and MIN_SIZE or more apart, and the interval of slow over
fast lies above MIN_SIZE. The
share is of time (the slow state's samples' seconds over all), which is what a link
toggled every 2 s spends in each state.

Between probes, a case's probe medians (its last WINDOW probes of one provenance) are
read by the same rule, a probe for a sample and PROBE_DWELL probes the least stay; the
share is of the probes. One change of level is a step (stats/drift.py), not flapping:
the slow level must be entered twice. (replication.regimes, the widest gap of the
sorted medians, missed 2 of 5 series alternating 1.3x at 5% noise: between two levels
of 20 probes each the widest gap is narrow.)
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..stats.stats import ALPHA, t_quantile
from ..stats.verdict.claim import UNDETERMINED, Claim, Words

FAMILY = "flapping"
WORDS = Words(over="flapping", under="not flapping")
DWELL = 9  # samples: a state lasts at least this long; shorter bursts are noise
MIN_SHARE = 0.1  # of the time: a state held less is no state of the link
SEPARATION = 3.0  # the states' gap in within-state sds (robust): apart, not one noisy state
MIN_STAYS = 2  # times the slow state is entered: once is a warm-up or a burst
# The least size of a state, slow over fast: the verdict core's default threshold (compare's
# 5%, stats/verdict/threshold.DEFAULTS). Below it two levels are one: stable probes 1.2%
# apart at random were named in 6.3% of 20-probe series without it, 1.5% apart in a test
# history, a state no one acts on.
MIN_SIZE = 1.05
# Within a launch, samples are read in bins of at least this much time (each bin its
# samples' median): a state is the link's, lasting DWELL bins or more (0.18 s), not a
# scheduler's burst. Sample by sample, 8 B ping-pongs of 0.2 us on this 2-core machine
# were named flapping 1.2-2.9x in a quiet local watch: bursts of microseconds.
BIN_S = 0.02
WINDOW = 40  # the latest probes of a segment that between() reads
PROBE_DWELL = 3  # probes: a level held for fewer is a probe's noise, not a stay
MAD_TO_SD = 1.4826


@dataclass(frozen=True)
class Flapping:
    """A two-state reading: the share of time in the slow state, the slow stays as
    [first, last] sample (or probe) index pairs, and the claim (ratio: slow over fast)."""
    share: float
    slow: tuple[tuple[int, int], ...]
    claim: Claim


def samples_logs(samples_s: Sequence[float], what: str = "sample") -> np.ndarray:
    """The log times, or ValueError naming what is wrong with them."""
    x = np.asarray(samples_s, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"flapping: no {what}s: give the times in order, in seconds")
    bad = np.flatnonzero(~(np.isfinite(x) & (x > 0)))
    if bad.size:
        raise ValueError(f"flapping: {what} {int(bad[0])} is {x[bad[0]]}: every time must be "
                         "a positive number of seconds")
    return np.log(x)


def _smoothed(y: np.ndarray, dwell: int) -> np.ndarray:
    """The running median over `dwell` samples (odd), the ends padded with their edge."""
    half = dwell // 2
    padded = np.concatenate([np.full(half, y[0]), y, np.full(half, y[-1])])
    return np.median(sliding_window_view(padded, 2 * half + 1), axis=1)


def _otsu(v: np.ndarray) -> float:
    """The cut of v that leaves the least variance within its two sides (Otsu 1979)."""
    ordered = np.sort(v)
    n = ordered.size
    total = np.cumsum(ordered)
    left = np.arange(1, n)
    mean_low, mean_high = total[:-1] / left, (total[-1] - total[:-1]) / (n - left)
    between = left * (n - left) * (mean_high - mean_low) ** 2
    at = int(np.argmax(between))
    return float((ordered[at] + ordered[at + 1]) / 2)


def _runs(state: np.ndarray) -> list[tuple[int, int, bool]]:
    """(first, last, slow) of each stay."""
    cuts = np.flatnonzero(np.diff(state.astype(np.int8))) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [state.size]]) - 1
    return [(int(a), int(b), bool(state[a])) for a, b in zip(starts, ends)]


def _robust_sd(y: np.ndarray, state: np.ndarray) -> float:
    """The within-state spread: the median absolute deviation of each sample about its
    state's median, as a normal sd."""
    dev = np.concatenate([y[state == s] - np.median(y[state == s]) for s in (False, True)
                          if np.any(state == s)])
    return MAD_TO_SD * float(np.median(np.abs(dev)))


def _interval(slow: np.ndarray, fast: np.ndarray,
              alpha: float = ALPHA) -> tuple[float, tuple[float, float] | None]:
    """The mean log difference of slow over fast units and its pooled two-sided 1 - alpha
    t interval (None with fewer than 3 units)."""
    d = float(slow.mean() - fast.mean())
    df = slow.size + fast.size - 2
    if df < 1:
        return d, None
    ss = float(np.sum((slow - slow.mean()) ** 2) + np.sum((fast - fast.mean()) ** 2))
    half = float(t_quantile(df, 1 - alpha / 2)) * math.sqrt(
        ss / df * (1 / slow.size + 1 / fast.size))
    return d, (d - half, d + half)


def _claim(subject: str, d: float, iv: tuple[float, float] | None, named: bool,
           units: int, evidence: dict, remedy: str) -> Claim:
    interval = None if iv is None else (math.exp(iv[0]), math.exp(iv[1]))
    if not named:
        word = WORDS.under
    else:
        word = WORDS.over if interval is not None and interval[0] > MIN_SIZE else UNDETERMINED
    return Claim(FAMILY, subject, math.exp(d), interval, None, word, units, False, None,
                 word == WORDS.over, evidence, remedy if word != WORDS.under else None)


def within(samples_s: Sequence[float], subject: str = "case", dwell: int = DWELL) -> Flapping:
    """One launch's samples of a case, in order: flapping or not (the module's rule over
    bins of BIN_S or more, `dwell` bins the least stay); the share is of the launch's
    time, the stays' bounds are sample indices."""
    y = samples_logs(samples_s)
    remedy = ("the link changes state within a launch: screen its hosts (commscope health "
              "--screen) and watch the link's error counters")
    first, logs, seconds = _bins(y)
    found = _two_states(logs, dwell, seconds, subject, remedy, 0)
    last = np.append(first[1:], y.size) - 1
    return Flapping(found.share, tuple((int(first[a]), int(last[b])) for a, b in found.slow),
                    found.claim)


def _bins(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Log sample times cut into consecutive bins of at least BIN_S (the last may be
    shorter): each bin's first sample, its median log time and its seconds."""
    seconds = np.exp(y)
    ends = np.cumsum(seconds)
    cut = np.flatnonzero(np.diff(np.floor(ends / BIN_S)) > 0) + 1  # a bin ends past each
    first = np.concatenate([[0], cut])
    return (first, np.array([np.median(part) for part in np.split(y, cut)]),
            np.add.reduceat(seconds, first))


def between(medians_s: Sequence[float], segments: Sequence[Hashable],
            subject: str = "case", cases: int = 1) -> Flapping:
    """A case's probe medians (in probe order, with their provenance keys): flapping where
    the last WINDOW probes of the last segment alternate between two levels, each stay
    PROBE_DWELL probes or more (the module's rule, probes for samples); the share is of
    the probes. `cases`: the watch's, each case's interval at ALPHA / cases (Bonferroni,
    as drift.per_case_arl holds a watch's steps), so a watch names a stable case flapping
    at most ALPHA of the time however many cases it has."""
    y = samples_logs(medians_s, "probe")
    if len(segments) != y.size:
        raise ValueError(f"flapping: {y.size} medians but {len(segments)} segment keys: "
                         "give one key per probe")
    keys = list(segments)
    start = max((i for i in range(1, len(keys)) if keys[i] != keys[i - 1]), default=0)
    start = max(start, y.size - WINDOW)
    remedy = ("the case alternates between two levels from probe to probe: compare a slow "
              "probe with a fast one (commscope compare A B) and screen the hosts "
              "(commscope health --screen)")
    return _two_states(y[start:], PROBE_DWELL, np.ones(y.size - start), subject, remedy,
                       start, ALPHA / cases)


def _two_states(y: np.ndarray, dwell: int, weights: np.ndarray, subject: str, remedy: str,
                offset: int, alpha: float = ALPHA) -> Flapping:
    """The module's rule over log times y in order; `weights` what a share counts (a
    sample's seconds, or 1 a probe); stays numbered from `offset`."""
    if dwell < 1:
        raise ValueError(f"flapping: a dwell of {dwell} samples: give 1 or more")
    dwell |= 1  # a running median is centred on an odd window
    if y.size < 2 * dwell:
        return Flapping(0.0, (), _claim(subject, 0.0, None, False, 0, {"samples": y.size},
                                        remedy))
    smooth = _smoothed(y, dwell)
    state = smooth > _otsu(smooth)
    runs = _runs(state)
    share = float(weights[state].sum() / weights.sum())
    slow = [(a, b) for a, b, s in runs if s]
    fast = [(a, b) for a, b, s in runs if not s]
    gap = float(np.median(y[state]) - np.median(y[~state])) if slow and fast else 0.0
    sd = _robust_sd(y, state)
    apart = gap >= SEPARATION * sd if sd > 0 else gap > 0
    named = (len(slow) >= MIN_STAYS and apart and gap >= math.log(MIN_SIZE)
             and MIN_SHARE <= share <= 1 - MIN_SHARE)
    d, iv = (_interval(np.array([np.median(y[a:b + 1]) for a, b in slow]),
                       np.array([np.median(y[a:b + 1]) for a, b in fast]), alpha)
             if slow and fast else (0.0, None))
    # both levels, the median time of each state (seconds), beside the slow one's share
    levels = {"fast_s": math.exp(float(np.median(y[~state]))),
              "slow_s": math.exp(float(np.median(y[state])))} if slow and fast else {}
    evidence = {"slow_share": share, "slow_stays": len(slow), "fast_stays": len(fast),
                "samples": int(y.size), "separation": gap / sd if sd > 0 else None,
                **levels}
    return Flapping(share if named else 0.0,
                    tuple((a + offset, b + offset) for a, b in slow) if named else (),
                    _claim(subject, d, iv, named, len(runs), evidence, remedy))
