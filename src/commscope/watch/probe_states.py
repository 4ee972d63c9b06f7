"""A watch's cases read together (docs/watch.md, "On a machine with states"): each
probe's state, what moved every case at once, read apart from each case's own part.

Whole commands on a shared machine land in states 1.1-3x apart, and a probe is one
command: the recorded second-job states moved all four sizes 2.2-2.9x together. Read
case by case, each case's level carries them, so a state that stays a few probes is a
step at every case, and the spread they add hides real steps. With MIN_CASES cases or
more, a probe's state is the median over its cases of each one's log figure less its
segment's median, where most cases moved alike (stats/states's share of cases); it is
taken out of each case's figures, and the states are a series of their own, tested by
drift's rule, whose steps are every case's. Probes in another state are screened from
that series as stats/states screens launches. Each series holds its share of the
watch's false-alarm rate, counted in steps named: a case's at series_arl, the probe
state's, which names one at every case, at that times the cases.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Sequence

import numpy as np

from ..stats.states import STATE_GAP, STATE_SHARE
from .drift import ARL, CLIP, WARMUP, Step, _segments, per_case_arl, remedy, spread, steps

# Cases a probe's state is read from: with two, a step at one would be half at each
MIN_CASES = 3


def watch_steps(medians_s, segments: Sequence[Sequence[Hashable]],
                launches: Sequence[Sequence[np.ndarray]] | None = None, arl: float = ARL,
                subjects: Sequence[str] | None = None,
                runs: Sequence[Sequence[Hashable]] | None = None,
                hosts: Sequence[Sequence[str]] | None = None) -> list[list[Step]]:
    """Each case's steps in a watch: `medians_s` probes x cases (NaN where a case was
    not measured), each case's provenance keys, launch medians, subject, runs and hosts a
    probe; `arl` the watch's. With MIN_CASES cases or more, a probe's state (the median
    over its cases of each one's log figure less its segment's median: what moved every
    size at once) is taken out of each case's figures and read as a series of its own,
    whose steps are every case's (the module's docstring)."""
    y = np.log(np.asarray(medians_s, dtype=float))
    cases = y.shape[1]
    if not cases:
        return []
    subjects = subjects or ["case"] * cases
    runs = runs or [None] * cases
    hosts = hosts or [()] * cases
    measured = np.isfinite(y)
    state = _probe_states(y, measured, segments) if cases >= MIN_CASES else None
    per_case = series_arl(arl, cases)
    ats = [np.flatnonzero(measured[:, c]) for c in range(cases)]
    runs = [None if r is None else [r[i] for i in at] for r, at in zip(runs, ats)]
    out = [[] if not at.size else steps(
        np.exp(y[at, c] - (0.0 if state is None else np.nan_to_num(state[at]))),
        [segments[c][i] for i in at], None if launches is None else [launches[c][i] for i in at],
        per_case, subjects[c], runs[c], hosts[c]) for c, at in enumerate(ats)]
    read = np.flatnonzero(np.isfinite(state)) if state is not None else np.array([], int)
    if not read.size:
        return out
    keys = [tuple(segments[c][i] for c in range(cases)) for i in read]
    for found in steps(np.exp(state[read]), keys, arl=per_case * cases,
                       other=_another_state(state[read])):
        for c, at in enumerate(ats):
            began = int(np.searchsorted(at, read[found.began]))
            if began >= at.size:
                continue
            where = min(int(np.searchsorted(at, read[found.found])), at.size - 1)
            claim = dataclasses.replace(found.claim, subject=subjects[c], evidence={
                **found.claim.evidence, "began_probe": began, "found_probe": where,
                "every_case": True}, remedy=remedy(began, runs[c], hosts[c]))
            out[c].append(Step(began, where, claim))
    return [sorted(case, key=lambda st: st.began) for case in out]


def series_arl(arl: float, cases: int) -> float:
    """Each series' run length in a watch of `cases` cases at `arl` (drift.per_case_arl
    over its cases and, with MIN_CASES or more, the probe's state)."""
    return per_case_arl(arl, cases + (cases >= MIN_CASES))


def _another_state(x: np.ndarray) -> np.ndarray:
    """The probes in another state, as stats/states screens launches: CLIP scales or
    more from the series' median (at most STATE_GAP, the launches' gap), in a stay of
    fewer than WARMUP probes that way and over before the latest probe (a level that
    lasts, or may yet, is no other state: the test reads it)."""
    d = x - np.median(x)
    gap = min(STATE_GAP, CLIP * spread(x, math.nan))
    out = np.zeros(x.size, bool)
    for side in (1, -1):
        far = np.concatenate([[0], (side * d >= gap).astype(int), [0]])
        edges = np.flatnonzero(np.diff(far))
        for a, b in zip(edges[::2], edges[1::2]):
            out[a:b] |= b - a < WARMUP and b < x.size
    return out


def _probe_states(y: np.ndarray, measured: np.ndarray,
                  segments: Sequence[Sequence[Hashable]]) -> np.ndarray:
    """Each probe's state: the median over its measured cases of their log figures less
    their segment's median, where STATE_SHARE of them or more (and MIN_CASES) moved by a
    similar ratio, within half of it or CLIP of their own scales; NaN elsewhere (cases
    that moved apart are each their own)."""
    off = np.full(y.shape, np.nan)
    scale = np.full(y.shape[1], np.nan)
    for c in range(y.shape[1]):
        at = np.flatnonzero(measured[:, c])
        for a, b in _segments([segments[c][i] for i in at]):
            off[at[a:b], c] = y[at[a:b], c] - np.median(y[at[a:b], c])
        scale[c] = spread(off[at, c], math.nan) if at.size else math.nan
    state = np.full(y.shape[0], np.nan)
    for i in np.flatnonzero(measured.sum(axis=1) >= MIN_CASES):
        r, s = off[i, measured[i]], scale[measured[i]]
        mid = float(np.median(r))
        alike = int(np.sum(np.abs(r - mid) <= np.maximum(abs(mid) / 2, CLIP * s)))
        if alike >= max(MIN_CASES, STATE_SHARE * r.size):
            state[i] = mid
    return state
