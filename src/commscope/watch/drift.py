"""Drift: a step in one case's level over the history of its probes (docs/watch.md).

A watch measures the same cases again and again; each probe gives a case one figure, its
median. A step is a lasting change of that figure's level. It is found online, each
probe judged against the probes before it only, by Page's two-sided CUSUM (E. S. Page,
"Continuous inspection schemes", Biometrika 41(1/2), 1954) on robustly standardised
residuals of the log medians:

- the level a probe is judged against is Huber's M-estimate of the earlier probes of
  its segment (P. J. Huber, "Robust estimation of a location parameter", Ann. Math.
  Stat. 35(1), 1964; HUBER_K = 1.345, the median absolute deviation its scale), taken
  again each time the probes behind it grow by GROWTH (WARMUP, 12, 18, 27, ...), so a
  long history costs O(n log n) and a level comes from every probe seen so far;
- each residual is put on the normal scale through t, its sd inflated by the level's
  own error (_standardised: Hawkins's self-starting CUSUM);
- the scale is one step of Huber's proposal 2 from their median absolute deviation
  (spread), never below what the probes' own launches spread a median by (their launch
  medians' variance over K) nor MIN_SCALE;
- each residual counts at most CLIP scales (Huber's psi: a robust CUSUM in the sense of
  J. M. Lucas & R. B. Crosier, "Robust CUSUM", Commun. Stat. Theory Methods 11(23),
  1982), so one probe beside another job (10^5x) weighs as a 3-sigma probe: neither a
  step alone nor, through the M-estimate, a move of the level;
- the threshold h is chosen for an in-control average run length `arl` (probes between
  false alarms of one case, both sides together) by Siegmund's approximation (D.
  Siegmund, "Sequential Analysis", 1985, eq. 2.57) with reference REFERENCE. A watch of
  C cases holds its own rate with per_case_arl (Bonferroni: a watch's rate of false
  steps is at most the sum of its cases').

Where the test crosses h, the step began after the last probe at which that side's
statistic was 0 (Page's estimate of the change point); the level is learned afresh from
there. A probe whose provenance (MPI version, library settings, hosts: its `segments`
key) differs from the probe before starts a new segment: it is compared with nothing
before it, so it is never a step.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtri, stdtr
from scipy.stats import chi2, norm

from ..stats.stats import t_quantile
from ..stats.verdict.claim import UNDETERMINED, Claim, Words
from ..stats.verdict.threshold import Threshold

FAMILY = "drift"
WORDS = Words(over="step", under="no change")
ARL = 200  # probes between false steps of a stable case, on average (both directions)
# The least step named: the verdict core's default threshold, a level 5% of bandwidth
# away (time 1.053x); a smaller one that the interval shows is `no change`, as compare says
STEP = Threshold(0.05)
REFERENCE = 0.75  # k, in scales: the CUSUM is tuned to a shift of 2k = 1.5 scales
CLIP = 3.0  # a residual counts at most this many scales
HUBER_K = 1.345  # the M-estimate's tuning: 95% of the mean's efficiency at the normal
HUBER_STEPS = 8  # at most: each shrinks its error about five times
WARMUP = 8  # probes of a level before any is tested against it
GROWTH = 1.5  # the level is learned again each time the probes behind it grow by this
SCALE_EFFICIENCY = 0.85  # spread()'s variance against the sd's at 8 normal probes (0.87)
MIN_SCALE = 0.005  # 0.5%: identical medians (a quantised timer) are no zero spread
MAD_TO_SD = 1.4826  # the normal's sd over its median absolute deviation
SIEGMUND = 1.166  # the overshoot correction of Siegmund's approximation


def _psi_sd(c: float) -> float:
    """The standard deviation of Huber's psi_c of a standard normal residual."""
    tail = 2 * norm.sf(c)
    inside = (1 - tail) - 2 * c * norm.pdf(c)  # E[Z^2; |Z| < c]
    return math.sqrt(inside + c * c * tail)


PSI_SD = _psi_sd(CLIP)  # so a clipped residual has unit variance in control
# The asymptotic variance of Huber's M-estimate at the normal, in scales squared (Huber
# 1964): E[psi^2] / P(|Z| < k)^2.
HUBER_VAR = _psi_sd(HUBER_K) ** 2 / (1 - 2 * norm.sf(HUBER_K)) ** 2


@dataclass(frozen=True)
class Step:
    """A step in a case's level: `began` the first probe at the new level (Page's
    estimate), `found` the probe at which the test crossed its threshold, and its claim
    (ratio: the level after over the level before)."""
    began: int
    found: int
    claim: Claim


@functools.lru_cache(maxsize=None)
def threshold(arl: float) -> float:
    """h for a two-sided CUSUM of unit-variance residuals whose in-control average run
    length is `arl` probes: each side's is 2 arl, by Siegmund's approximation
    ARL = (exp(2 k b) - 2 k b - 1) / (2 k^2), b = h + 1.166."""
    if not arl > 1:
        raise ValueError(f"drift: the average run length must be above 1 probe, not {arl}")

    k = REFERENCE

    def gap(h: float) -> float:
        b = 2 * k * (h + SIEGMUND)
        return (math.exp(b) - b - 1) / (2 * k * k) - 2 * arl
    return brentq(gap, 0.0, 200.0)


def per_case_arl(watch_arl: float, cases: int) -> float:
    """Each case's run length for a watch of `cases` cases to raise a false step no more
    often than once in `watch_arl` probes (Bonferroni over the cases)."""
    if cases < 1:
        raise ValueError("drift: a watch has at least one case")
    return watch_arl * cases


def logs(medians_s: Sequence[float], segments: Sequence[Hashable]) -> np.ndarray:
    """The log medians, or ValueError naming what is wrong with the series."""
    y = np.asarray(medians_s, dtype=float)
    if y.ndim != 1 or y.size == 0:
        raise ValueError("drift: no probes: give one median per probe")
    if len(segments) != y.size:
        raise ValueError(f"drift: {y.size} medians but {len(segments)} segment keys: give "
                         "one key per probe")
    bad = np.flatnonzero(~(np.isfinite(y) & (y > 0)))
    if bad.size:
        raise ValueError(f"drift: probe {int(bad[0])}'s median is {y[bad[0]]}: every median "
                         "must be a positive number of seconds")
    return np.log(y)


def _launch_vars(launches: Sequence[np.ndarray] | None, n: int) -> np.ndarray:
    """Each probe's variance of its median from its launches (the launch medians' log
    variance over K, scaled by the chi-square's median so that a median over probes
    estimates it: K = 3 gives 2 degrees of freedom), NaN without two launches."""
    out = np.full(n, np.nan)
    if launches is None:
        return out
    if len(launches) != n:
        raise ValueError(f"drift: {n} medians but {len(launches)} launch sets: give one "
                         "array of launch medians per probe, or none")
    for i, lm in enumerate(launches):
        lm = np.asarray(lm, dtype=float)
        lm = lm[np.isfinite(lm) & (lm > 0)]
        if lm.size >= 2:
            df = lm.size - 1
            out[i] = np.log(lm).var(ddof=1) * df / chi2.median(df) / lm.size
    return out


def _segments(keys: Sequence[Hashable]) -> list[tuple[int, int]]:
    """[start, end) of each run of equal provenance keys."""
    cuts = [0] + [i for i in range(1, len(keys)) if keys[i] != keys[i - 1]] + [len(keys)]
    return list(zip(cuts[:-1], cuts[1:]))


def median(y: np.ndarray) -> float:
    """The median of a 1-D array without NaN: np.median's own checks cost ten times its
    sort on the short arrays the test learns its level from, and 10^4 probes x 100 cases
    learn tens of thousands of levels."""
    ordered = np.sort(y)
    n = ordered.size
    return float(ordered[(n - 1) // 2] + ordered[n // 2]) / 2


def huber(y: np.ndarray, scale: float, centre: float | None = None) -> float:
    """Huber's M-estimate of location at this scale, iterated from the median (`centre`,
    where known) until it moves less than a thousandth of the scale: each step shrinks
    the error to the share of residuals beyond HUBER_K, about a fifth."""
    mu = median(y) if centre is None else centre
    for _ in range(HUBER_STEPS):
        move = scale * float(np.clip((y - mu) / scale, -HUBER_K, HUBER_K).mean())
        mu += move
        if abs(move) < 1e-3 * scale:
            break
    return mu


def spread(y: np.ndarray, floor_var: float, centre: float | None = None) -> float:
    """The probes' scale: one step of Huber's proposal 2 from the median absolute
    deviation (with its small-sample factor n / (n - 0.8): C. Croux & P. J. Rousseeuw,
    Comput. Stat. 1992), the residuals clipped at CLIP scales, so one probe 10^5x off
    weighs as a 3-sigma one; as efficient as the sd at the normal within SCALE_EFFICIENCY
    (the MAD alone: 37%). At least the launches' share and MIN_SCALE."""
    n = y.size
    centre = median(y) if centre is None else centre
    mad = MAD_TO_SD * median(np.abs(y - centre)) * n / max(n - 0.8, 1.0)
    floor = max(math.sqrt(floor_var) if math.isfinite(floor_var) else 0.0, MIN_SCALE)
    if mad <= 0 or n < 2:
        return max(mad, floor)
    w = np.clip((y - centre) / mad, -CLIP, CLIP)
    return max(mad * math.sqrt(float(np.sum(w * w)) / (n - 1)) / PSI_SD, floor)


def _reference(y: np.ndarray, lv: np.ndarray) -> tuple[float, float]:
    floor = float(np.nanmedian(lv)) if np.isfinite(lv).any() else math.nan
    centre = median(y)
    scale = spread(y, floor, centre)
    return huber(y, scale, centre), scale


def _standardised(y: np.ndarray, level: float, scale: float, n: int) -> np.ndarray:
    """Residuals of new probes against a level and scale learned from n earlier ones, as
    standard normal scores: the residual over its predictive sd, scale sqrt(1 + v / n),
    through t(SCALE_EFFICIENCY (n - 1)) to the normal (D. M. Hawkins, "Self-starting
    CUSUM charts for location and scale", The Statistician 36(4), 1987, with robust
    estimates in place of the mean and sd): a level and scale from a few probes are
    uncertain, and unscaled they cut the run length to a quarter (1000 probes nominal,
    275 measured on normal probes)."""
    u = (y - level) / (scale * math.sqrt(1 + HUBER_VAR / n))
    return ndtri(stdtr(max(SCALE_EFFICIENCY * (n - 1), 1.0), u))


def _alarm(y: np.ndarray, lv: np.ndarray, h: float) -> tuple[int, int] | None:
    """The first crossing of the two-sided CUSUM over y (one level's probes onwards):
    (the probe the step began at, the probe it was found at), or None."""
    n = y.size
    tested: list[np.ndarray] = []
    last = {1: 0.0, -1: 0.0}  # each side's cumulative sum so far
    low = {1: 0.0, -1: 0.0}  # and its least value, 0 included
    upto = WARMUP
    while upto < n:
        end = min(max(int(GROWTH * upto), upto + 1), n)
        level, scale = _reference(y[:upto], lv[:upto])
        r = np.clip(_standardised(y[upto:end], level, scale, upto), -CLIP, CLIP) / PSI_SD
        tested.append(r)
        for side in (1, -1):
            c = last[side] + np.cumsum(side * r - REFERENCE)
            s = c - np.minimum(np.minimum.accumulate(c), low[side])
            over = np.flatnonzero(s > h)
            if over.size:
                at = upto + int(over[0])
                return _began(np.concatenate(tested), side, at), at
            last[side], low[side] = float(c[-1]), min(low[side], float(c.min()))
        upto = end
    return None


def _began(r: np.ndarray, side: int, at: int) -> int:
    """Page's change point: after the last probe, up to the crossing at `at`, at which the
    side's statistic was 0 (its cumulative sum at its least)."""
    c = np.concatenate([[0.0], np.cumsum(side * r[:at - WARMUP + 1] - REFERENCE)])
    return WARMUP + int(len(c) - 1 - np.argmin(c[::-1]))


def _levels(y: np.ndarray, lv: np.ndarray, h: float) -> list[tuple[int, int]]:
    """(began, found) of every step in one segment, in order."""
    found, start = [], 0
    while (hit := _alarm(y[start:], lv[start:], h)) is not None:
        found.append((start + hit[0], start + hit[1]))
        start += hit[0]
    return found


def steps(medians_s: Sequence[float], segments: Sequence[Hashable],
          launches: Sequence[np.ndarray] | None = None, arl: float = ARL,
          subject: str = "case", runs: Sequence[Hashable] | None = None,
          hosts: Sequence[str] = ()) -> list[Step]:
    """Every step in one case's probes (medians in probe order, seconds), each probe's
    provenance key in `segments`, its launch medians in `launches` where known (they
    floor the scale), `arl` the in-control run length per case (per_case_arl for a
    watch's). `runs` and `hosts` name the remedy's runs and nodes. An alarm whose
    interval shows the level moved by less than STEP is `no change`, and left out: the
    test learns the level afresh there all the same."""
    y = logs(medians_s, segments)
    lv = _launch_vars(launches, y.size)
    h = threshold(arl)
    out = []
    for start, end in _segments(list(segments)):
        found = _levels(y[start:end], lv[start:end], h)
        bounds = [0] + [b for b, _ in found] + [end - start]
        for j, (began, at) in enumerate(found):
            before = slice(start + bounds[j], start + began)
            after = slice(start + began, start + bounds[j + 2])
            claim = _claim(y[before], y[after], lv[before], lv[after], subject,
                           start + began, start + at, h, arl, runs, hosts)
            if claim.word != WORDS.under:  # an alarm whose level moved < 5%: no step
                out.append(Step(start + began, start + at, claim))
    return out


def _claim(before: np.ndarray, after: np.ndarray, lv_before: np.ndarray,
           lv_after: np.ndarray, subject: str, began: int, found: int, h: float, arl: float,
           runs, hosts) -> Claim:
    """The step's size: Huber's level after over before, each at the pooled scale of the
    two sides about their own medians; its 95% interval from the M-estimates' asymptotic
    variance on t(n_before + n_after - 2). p is None: the test is the CUSUM's, whose
    false-alarm rate its run length states; the interval is not corrected for the change
    point having been chosen where the sides differ most, so it is a little narrow."""
    lv = np.concatenate([lv_before, lv_after])
    floor = float(np.nanmedian(lv)) if np.isfinite(lv).any() else math.nan
    scale = spread(np.concatenate([before - np.median(before), after - np.median(after)]),
                   floor)
    d = huber(after, scale) - huber(before, scale)
    se = scale * math.sqrt(HUBER_VAR * (1 / before.size + 1 / after.size))
    half = float(t_quantile(max(before.size + after.size - 2, 1))) * se
    interval = (math.exp(d - half), math.exp(d + half))
    size = abs(d) > STEP.log
    word = (WORDS.over if size and (interval[0] > 1 or interval[1] < 1)
            else WORDS.under if 1 / STEP.time_ratio < interval[0] <= interval[1] <
            STEP.time_ratio else UNDETERMINED)
    return Claim(FAMILY, subject, math.exp(d), interval, None, word,
                 before.size + after.size, False, None, word == WORDS.over,
                 {"began_probe": began, "found_probe": found, "probes_before": before.size,
                  "probes_after": after.size, "cusum_h": h, "arl_probes": arl},
                 remedy(began, runs, hosts))


def remedy(began: int, runs: Sequence[Hashable] | None, hosts: Sequence[str]) -> str:
    """What to run next: the screen of the hosts involved, and the compare of the probes
    either side of the step (where their runs are still stored: a watch folds old probes)."""
    before, after = (runs[began - 1], runs[began]) if runs else (f"PROBE{began - 1}",
                                                                 f"PROBE{began}")
    where = f" --hosts {','.join(hosts)}" if hosts else ""
    either_side = f"commscope compare {before} {after}" if before and after else \
        "commscope results history (their runs were folded)"
    return (f"screen the hosts: commscope health --screen{where}; or compare the probes "
            f"either side: {either_side}")


def expected(medians_s: Sequence[float], segments: Sequence[Hashable],
             launches: Sequence[np.ndarray] | None = None, arl: float = ARL
             ) -> tuple[float, tuple[float, float] | None]:
    """"Is this normal?": the case's level now (seconds), Huber's M-estimate of the
    probes of its last segment since its last step, and the 95% band a next probe at that
    level falls in (level x exp(+-t s sqrt(1 + v/n)), v HUBER_VAR), None with fewer than
    3 probes at the level."""
    y = logs(medians_s, segments)
    lv = _launch_vars(launches, y.size)
    start = _segments(list(segments))[-1][0]
    found = _levels(y[start:], lv[start:], threshold(arl))
    start += found[-1][0] if found else 0
    level_y, now = y[start:], lv[start:]
    floor = float(np.nanmedian(now)) if np.isfinite(now).any() else math.nan
    scale = spread(level_y, floor)
    level = huber(level_y, scale)
    if level_y.size < 3:
        return math.exp(level), None
    half = float(t_quantile(level_y.size - 1)) * scale * math.sqrt(
        1 + HUBER_VAR / level_y.size)
    return math.exp(level), (math.exp(level - half), math.exp(level + half))
