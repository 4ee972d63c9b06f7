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
statistic was 0 (Page's estimate of the change point). A step is a level that moved and
stayed (_stays: as long in a row as a state the case has shown could not by chance);
only a step restarts the level, and each is judged again on every probe at its level
(_judged). A probe whose provenance (MPI version, library settings, hosts: its
`segments` key) differs from the probe before starts a new segment: it is compared with
nothing before it, so it is never a step. A watch's cases are read together in
watch/probe_states.py (a probe's state, what moved every case at once, read apart).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtri, stdtr
from scipy.stats import chi2, norm

from ..stats.stats import t_quantile
from ..stats.verdict.claim import UNDETERMINED, Claim, Words
from ..stats.verdict.threshold import Threshold
from .flapping import MIN_SHARE

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
MIN_STAY = 2  # probes at a new level before it is a step: one is a stall's or a burst's


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


def _residuals(y: np.ndarray, lv: np.ndarray, other: np.ndarray, until: int,
               done: np.ndarray, refs: dict) -> np.ndarray:
    """Each probe's clipped standardised residual, up to probe `until` (those `done`
    kept), against the level and scale learned from the probes before it (one level's
    probes onwards; `refs` keeps them by probe count), NaN for the first WARMUP and for
    the probes in `other` (another state: left out of the level and the test)."""
    r = np.full(until, np.nan)
    r[:done.size] = done
    keep = ~other
    upto = WARMUP
    while upto < until:
        end = min(max(int(GROWTH * upto), upto + 1), until)
        if end > done.size:
            if upto not in refs:
                k = keep[:upto] if keep[:upto].sum() >= 2 else slice(None, upto)
                refs[upto] = (*_reference(y[:upto][k], lv[:upto][k]), y[:upto][k].size)
            at = max(upto, done.size)
            r[at:end] = np.clip(_standardised(y[at:end], *refs[upto]), -CLIP,
                                CLIP) / PSI_SD
        upto = end
    r[done.size:][other[done.size:until]] = np.nan
    return r


def _alarm(r: np.ndarray, h: float, since: int, past: int = -1) -> tuple[int, int] | None:
    """The first crossing of the two-sided CUSUM over r[since:], its sums 0 at `since`,
    after probe `past`: (the probe the step began at, Page's estimate: after the last
    probe at which that side's statistic was 0; the probe it was found at), or None."""
    first = None
    for side in (1, -1):
        c = np.concatenate([[0.0], np.cumsum(np.nan_to_num(side * r[since:] - REFERENCE))])
        over = np.flatnonzero(c - np.minimum.accumulate(c) > h)
        over = over[since + over - 1 > past]
        if over.size and (first is None or since + over[0] - 1 < first[1]):
            at = int(over[0])
            first = (since + at - int(np.argmin(c[at::-1])), since + at - 1)
    return first


def _levels(y: np.ndarray, lv: np.ndarray, h: float, judge, other: np.ndarray
            ) -> list[tuple[int, int, Claim]]:
    """Every alarm in one segment, in order: (began, found, its claim then, `judge`'s of
    the probes since the last step before it and from `began` to `found`). A `step`
    restarts the level there, and `no change` starts the sums again from 0; while an
    alarm is neither (its level has not held as long as a step needs, or its interval
    cannot tell), the test goes on, judging it again at each probe the statistic stays
    over h: the level goes on from the same probes."""
    out, start, since, past, refs = [], 0, WARMUP, -1, {}

    def learned(until: int, done: np.ndarray = np.empty(0)) -> np.ndarray:
        return _residuals(y[start:], lv[start:], other[start:], min(until, y.size - start),
                          done, refs)
    r = learned(2 * WARMUP)
    while True:  # the residuals are learned as far as the test has read, doubling
        if (hit := _alarm(r, h, since, past)) is None:
            if r.size == y.size - start:
                return out
            r = learned(2 * r.size, r)
            continue
        began, at = start + hit[0], start + hit[1]
        claim = judge(slice(start, began), slice(began, at + 1), began, at)
        if out and out[-1][1] == at - 1 and out[-1][2].word == UNDETERMINED:
            out.pop()  # the same alarm, judged again a probe later
        out.append((began, at, claim))
        if claim.word == WORDS.over:
            start, since, past, refs = began, WARMUP, -1, {}
            r = learned(2 * WARMUP)
        elif claim.word == WORDS.under:
            since, past = at - start + 1, -1
        else:
            past = at - start


def steps(medians_s: Sequence[float], segments: Sequence[Hashable],
          launches: Sequence[np.ndarray] | None = None, arl: float = ARL,
          subject: str = "case", runs: Sequence[Hashable] | None = None,
          hosts: Sequence[str] = (), other: np.ndarray | None = None) -> list[Step]:
    """Every step in one case's probes (medians in probe order, seconds), each probe's
    provenance key in `segments`, its launch medians in `launches` where known (they
    floor the scale), `arl` the in-control run length per case (per_case_arl for a
    watch's). `runs` and `hosts` name the remedy's runs and nodes. Left out: an alarm
    whose interval shows the level moved by less than STEP (`no change`), and one whose
    new level held fewer probes than a step needs (state()), unless it is still open at
    the latest probe (`undetermined`)."""
    y = logs(medians_s, segments)
    lv = _launch_vars(launches, y.size)
    h = threshold(arl)
    return [Step(start + began, start + at, claim)
            for start, end in _segments(list(segments))
            for began, at, claim, _ in _judged(
                y[start:end], lv[start:end], h, arl, subject, runs, hosts, start,
                None if other is None else np.asarray(other)[start:end])
            # a move shorter than a step needs is noise, unless it goes on at the latest
            # probe: then it is `undetermined` until it stays or goes
            if claim.word != WORDS.under and (not state(claim) or at == end - start - 1)]


def state(claim: Claim) -> bool:
    """Whether an alarm is no step but the machine's noise: its new level held fewer
    probes than a step needs (_stays: a stall, a burst, or a state the case has shown
    that comes and goes, which flapping names)."""
    return claim.evidence["stay_probes"] < claim.evidence["stay_needed"]


def _judged(y: np.ndarray, lv: np.ndarray, h: float, arl: float, subject: str = "case",
            runs=None, hosts: Sequence[str] = (), offset: int = 0,
            other: np.ndarray | None = None) -> list[tuple[int, int, Claim, bool]]:
    """One segment's alarms (began, found, claim, whether it is a step that restarted
    the level). Each step found online is judged again on every probe at its level, up
    to the next step, with the states of every other probe of the segment: a level that
    moved and did not stay is no step, and the steps either side of it merge, judged
    again, until every step left holds."""
    def judge(before, after, began, at, seen=None):
        return _claim(y[before], y[after], lv[before], lv[after], subject, offset + began,
                      offset + at, h, arl, runs, hosts, seen)
    found = _levels(y, lv, h, judge, np.zeros(y.size, bool) if other is None else other)
    online = {b: at for b, at, c in found if c.word == WORDS.over}
    steps_at, final = sorted(online), {}
    while True:
        bounds = [0, *steps_at, y.size]
        final.update({b: judge(slice(bounds[j], b), slice(b, bounds[j + 2]), b, online[b],
                               np.concatenate([y[:b], y[bounds[j + 2]:]]))
                      for j, b in enumerate(steps_at)})
        held = [b for b in steps_at if final[b].word == WORDS.over]
        if held == steps_at:
            break
        steps_at = held
    # an alarm that was judged against a level since merged is judged against the level
    # left: the probes since the last step that holds
    return [(b, at, final[b], b in steps_at) if online.get(b) == at and c.word == WORDS.over
            else (b, at, c if _since(steps_at, b) == _since(sorted(online), b) else
                  judge(slice(_since(steps_at, b), b), slice(b, at + 1), b, at), False)
            for b, at, c in found]


def _since(starts: list[int], probe: int) -> int:
    """The first probe of the level `probe` is judged against: the last start before it."""
    return max([s for s in starts if s < probe], default=0)


def _claim(before: np.ndarray, after: np.ndarray, lv_before: np.ndarray,
           lv_after: np.ndarray, subject: str, began: int, found: int, h: float, arl: float,
           runs, hosts, seen: np.ndarray | None = None) -> Claim:
    """The step's size: Huber's level after over before, each at the pooled scale of the
    two sides about their own medians; its 95% interval from the M-estimates' asymptotic
    variance on t(n_before + n_after - 2). p is None: the test is the CUSUM's, whose
    false-alarm rate its run length states; the interval is not corrected for the change
    point having been chosen where the sides differ most, so it is a little narrow."""
    lv = np.concatenate([lv_before, lv_after])
    floor = float(np.nanmedian(lv)) if np.isfinite(lv).any() else math.nan
    scale = spread(np.concatenate([before - np.median(before), after - np.median(after)]),
                   floor)
    level_before, level_after = huber(before, scale), huber(after, scale)
    d = level_after - level_before
    se = scale * math.sqrt(HUBER_VAR * (1 / before.size + 1 / after.size))
    half = float(t_quantile(max(before.size + after.size - 2, 1))) * se
    interval = (math.exp(d - half), math.exp(d + half))
    stay, share, needed = _stays(before, after, level_before, level_after, scale, arl,
                                 before if seen is None else seen)
    size = abs(d) > STEP.log
    word = (WORDS.under if 1 / STEP.time_ratio < interval[0] <= interval[1] <
            STEP.time_ratio else WORDS.over if size and stay >= needed and (
                interval[0] > 1 or interval[1] < 1) else UNDETERMINED)
    return Claim(FAMILY, subject, math.exp(d), interval, None, word,
                 before.size + after.size, False, None, word == WORDS.over,
                 {"began_probe": began, "found_probe": found, "probes_before": before.size,
                  "probes_after": after.size, "stay_probes": stay, "state_share": share,
                  "stay_needed": needed, "cusum_h": h, "arl_probes": arl},
                 remedy(began, runs, hosts, share))


def _stays(before: np.ndarray, after: np.ndarray, level_before: float, level_after: float,
           scale: float, arl: float, seen: np.ndarray) -> tuple[int, float, int]:
    """(the most probes in a row the new level held, counting those just before the
    alarm that already sat there; the share of the `seen` probes, the others of the
    segment known, that sat there beyond CLIP scales of the old level: a state the case
    has shown, counted one visit more than seen, as few visits say little of it; the
    stay that makes the level a step). A state held by that share of
    probes, one probe to the next at random, stays L probes in a row at a probe with
    chance share^L: the level is a step once share^L < 1 / arl, the watch's rate (at a
    30% state and 800 probes, 6 probes; at 5%, 3), and never before MIN_STAY (one probe
    there is a stall's or a burst's)."""
    half = abs(level_after - level_before) / 2

    def there(x: np.ndarray) -> np.ndarray:
        return (np.abs(x - level_after) < half) & (np.abs(x - level_before) > CLIP * scale)
    tail = there(before)
    ongoing = tail.size - (np.flatnonzero(~tail)[-1] + 1 if (~tail).any() else 0)
    k = int(there(seen).sum())
    share = (k + 1) / (seen.size + 1) if k else 0.0  # a share seen, on its upper side
    needed = MIN_STAY if share <= 0 else max(MIN_STAY, math.ceil(
        math.log(arl) / -math.log(share)))
    held = np.concatenate([np.ones(ongoing), np.abs(after - level_after) < half, [0]])
    edges = np.flatnonzero(np.diff(np.concatenate([[0], held])))
    return int(np.max(edges[1::2] - edges[::2], initial=0)), share, needed


def remedy(began: int, runs: Sequence[Hashable] | None, hosts: Sequence[str],
           share: float = 0.0) -> str:
    """What to run next: the screen of the hosts involved, and the compare of the probes
    either side of the step (where their runs are still stored: a watch folds old probes)."""
    before, after = (runs[began - 1], runs[began]) if runs else (f"PROBE{began - 1}",
                                                                 f"PROBE{began}")
    where = f" --hosts {','.join(hosts)}" if hosts else ""
    either_side = f"commscope compare {before} {after}" if before and after else \
        "commscope results history (their runs were folded)"
    state = (f"{share:.0%} of the probes before sat at this level: a state of the machine "
             "unless it stays; " if share else "")
    return (f"{state}screen the hosts: commscope health --screen{where}; or compare the "
            f"probes either side: {either_side}")


class Level(NamedTuple):
    """A case's level now (seconds), the band a next probe falls in (None: too few
    probes), and the states its probes sat in, each (level, share of the probes), the
    level's first; () where they sat in one."""
    level_s: float
    band_s: tuple[float, float] | None
    states: tuple[tuple[float, float], ...] = ()
    least_step: float | None = None  # least_step(): found within 3 probes; inf: none is


def expected(medians_s: Sequence[float], segments: Sequence[Hashable],
             launches: Sequence[np.ndarray] | None = None, arl: float = ARL,
             since: int | None = None) -> Level:
    """"Is this normal?": the case's level now, Huber's M-estimate of the probes of its
    last segment since its last step (`since`, where the caller has judged the steps:
    watch_steps), and the 95% band a next probe at that level falls in (level x
    exp(+-t s sqrt(1 + v/n)), v HUBER_VAR), None with fewer than 3 probes at the level.
    Where MIN_STAY or more of those probes, and MIN_SHARE of them, sat beyond CLIP
    scales of the level on one side, that is a state the machine comes back to: the
    level is the main state's, the band reaches over the other's level too, and the
    states are given with their shares."""
    y = logs(medians_s, segments)
    lv = _launch_vars(launches, y.size)
    start = _segments(list(segments))[-1][0]
    if since is None:
        h = threshold(arl)
        since = start + max([b for b, _, _, restarted in _judged(y[start:], lv[start:], h,
                                                                   arl) if restarted],
                            default=0)
    start = max(start, since)
    level_y, now = y[start:], lv[start:]
    floor = float(np.nanmedian(now)) if np.isfinite(now).any() else math.nan
    scale = spread(level_y, floor)
    level = huber(level_y, scale)
    if level_y.size < 3:
        return Level(math.exp(level), None, (), math.inf)
    half = float(t_quantile(level_y.size - 1)) * scale * math.sqrt(
        1 + HUBER_VAR / level_y.size)
    n, spread_all = level_y.size, scale  # the test's, the states in it
    sides = [there for side in (1, -1)
             if (there := side * (level_y - level) > CLIP * scale).sum()
             >= max(MIN_STAY, MIN_SHARE * n)]
    if sides:  # the level is its main state's, at that state's own spread
        main = level_y[~np.logical_or.reduce(sides)]
        scale = spread(main, floor)
        level = huber(main, scale)
        half = float(t_quantile(max(main.size - 1, 1))) * scale * math.sqrt(
            1 + HUBER_VAR / main.size)
    states = [(float(np.median(level_y[there])), int(there.sum())) for there in sides]
    low, high = level - half, level + half
    for at, _ in states:
        low, high = min(low, at - half), max(high, at + half)
    shares = ((math.exp(level), 1 - sum(k for _, k in states) / n),
              *((math.exp(at), k / n) for at, k in states)) if states else ()
    return Level(math.exp(level), (math.exp(low), math.exp(high)), shares,
                 least_step(spread_all, n, arl))


def least_step(scale: float, n: int, arl: float, probes: int = 3) -> float:
    """The least step up (a ratio) the test finds within `probes` probes of it, at this
    scale learned from n probes: each probe at the new level adds its residual, at most
    CLIP, less k, and `probes` of them must pass h; inf where no step can (the scale so
    wide that even CLIP a probe is too little). Where states widen the scale, a smaller
    step may be found later or not at all: the watch says so rather than miss it in
    silence."""
    z = (threshold(arl) / max(probes, MIN_STAY) + REFERENCE) * PSI_SD
    return math.inf if z > CLIP else math.exp(z * scale * math.sqrt(1 + HUBER_VAR / n))
