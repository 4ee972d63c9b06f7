"""Launches in another state: named, kept in the store, and left out of a case's figures.

A launch (one mpirun) can land in another state of the machine: beside another job, on
a core the hypervisor shares, in a slower page layout. On the 2-core machine this was
built on, launches of one command differed 2-4x, and a launch beside another MPI job
ran 10^2-10^5 times slower than its neighbours (docs/statistics.md, 'Launches in
another state'). Averaged in, one such launch of three moves the mean of log medians by
a third of its own log ratio (a 10^5x stall: 46x) and the t interval of three launches
multiplies it again; the headline then describes no launch at all.

The rule, over the launches of one run (every case of a run is measured in the same
launches, in an order of its own):
- each case's centre is the median of its launches' log medians;
- a launch is in **another state** where it lies STATE_GAP (1.5x, the gap that makes two
  levels of commands: replication.LEVEL_GAP) or more from the centre, the same way, at
  three quarters or more of the run's cases (and at two or more, where the run has two):
  a launch slow or fast as a whole;
- at one case alone, a launch STALL_GAP (4x) or more from the centre has **stalled**
  there: the machine's states seen here differ by 2-3.4x at a size (8 B ping-pong at
  0.11 or 0.37 us), and a neighbour's burst put one size of one launch 4.7-40,000x off
  its others (bench/data/noise.json);
- never half or more of a case's launches: the kept launches are a strict majority, the
  farthest named first. With fewer than three launches the centre cannot tell which
  launch is odd, and nothing is named (the interval then says so: replication.disagree).

The case's figures are then those of its kept launches, so the headline is a skipped
mean (the mean after a rejection rule: R. R. Wilcox, "Introduction to Robust Estimation
and Hypothesis Testing", 4th ed., 2017, section 3.5, the modified one-step M-estimator's
family): up to floor((K - 1) / 2) of K launches may be arbitrarily wrong and the
headline stays within the span of the majority's medians (its breakdown point, just
under one half). A launch less than 4x off at fewer than 3/4 of the sizes stays in: its
pull on the mean is at most log(4) / K'. The run's launches module measures another
launch in place of each one in another state while the budget lasts (launches.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..store.cases import Case

STATE_GAP = math.log(1.5)
STALL_GAP = math.log(4.0)
MIN_LAUNCHES = 3  # fewer: the median of a case's launches is not one of a majority
STATE_SHARE = 0.75  # of a run's cases: a launch off at this share is off as a whole


@dataclass(frozen=True)
class OddLaunch:
    """A launch left out of one case's figures: its number, its median, how far it was from
    the case's kept launches (a ratio, above 1 slower), why ("state": slow or fast at
    `off` of the run's `of` cases; "stall": at this case alone)."""
    launch: int
    median_s: float
    ratio: float
    cause: str
    off: int
    of: int

    def as_dict(self) -> dict:
        return {"launch": self.launch, "median_s": self.median_s, "ratio": self.ratio,
                "cause": self.cause, "cases_off": self.off, "cases": self.of}

    def words(self) -> str:
        way = "slower" if self.ratio >= 1 else "faster"
        factor = self.ratio if self.ratio >= 1 else 1 / self.ratio
        where = f"at {self.off} of the run's {self.of} cases" if self.cause == "state" \
            else "at this case alone"
        return f"launch {self.launch} ran {_ratio(factor)}x {way} {where}"


def _ratio(x: float) -> str:
    """2.5, 31, 2.0e+04: a launch's factor in a few characters."""
    return f"{x:.1f}" if x < 10 else f"{x:.0f}" if x < 1000 else f"{x:.1e}"


def _median(case: Case) -> float | None:
    return float(np.median(case.latency_s)) if case.valid_samples.size else None


def screen(groups: list[list[Case]]) -> tuple[list[list[Case]], list[list[OddLaunch]]]:
    """Each group (one case's launches) without the launches in another state or stalled
    at it, and what was left out of it (OddLaunch), by the module's rule. The launches of
    one run are screened together, so a group of several runs is screened run by run; an
    old sweep's (its launches runs of their own) is kept whole."""
    kept = [list(g) for g in groups]
    odd: list[list[OddLaunch]] = [[] for _ in groups]
    by_run: dict[int, list[int]] = {}
    for i, cases in enumerate(groups):
        if cases and all(c.launch for c in cases):
            for run in {c.run_id for c in cases}:
                by_run.setdefault(run, []).append(i)
    for run, members in by_run.items():
        found = odd_launches({i: {c.launch: math.log(m) for c in groups[i]
                                  if c.run_id == run and (m := _median(c)) is not None
                                  and m > 0}
                              for i in members})
        for j in members:
            odd[j] += found[j]
            out = {o.launch for o in found[j]}
            kept[j] = [c for c in kept[j] if c.run_id != run or c.launch not in out]
    return kept, odd


def odd_launches(logs: dict[int, dict[int, float]]) -> dict[int, list[OddLaunch]]:
    """The module's rule over one run: `logs[case][launch]` its log launch medians; each
    case's launches to leave out, in launch order."""
    states = _states(logs)
    found = {}
    for j, ys in logs.items():
        mine = [k for k in states if k in ys][:(len(ys) - 1) // 2]  # a strict majority kept
        rest = [y for k, y in ys.items() if k not in mine]
        centre = float(np.median(rest)) if rest else 0.0
        odd = [OddLaunch(k, math.exp(ys[k]), math.exp(ys[k] - centre), "state", *states[k])
               for k in mine]
        odd += stalls(ys, {o.launch for o in odd})
        found[j] = sorted(odd, key=lambda o: o.launch)
    return found


def _states(logs: dict[int, dict[int, float]]) -> dict[int, tuple[int, int]]:
    """Launch -> (cases it was off at, cases it measured) for the launches in another
    state, at most floor((K - 1) / 2) of the run's K launches, the farthest first."""
    deviations: dict[int, list[float]] = {}
    for ys in logs.values():
        if len(ys) < MIN_LAUNCHES:
            continue
        centre = float(np.median(list(ys.values())))
        for k, y in ys.items():
            deviations.setdefault(k, []).append(y - centre)
    launches = len(deviations)
    found = []
    for k, d in deviations.items():
        d = np.asarray(d)
        of = d.size
        for sign in (1, -1):
            off = int(np.sum(sign * d >= STATE_GAP))
            if off and off >= max(min(2, of), STATE_SHARE * of):
                found.append((float(np.median(np.abs(d))), k, off, of))
    found.sort(reverse=True)
    return {k: (off, of) for _, k, off, of in found[:(launches - 1) // 2]}


def stalls(ys: dict[int, float], out: set[int] = frozenset()) -> list[OddLaunch]:
    """The launches of one case STALL_GAP or more from the median of its others, while
    they stay a strict majority."""
    rest = {k: y for k, y in ys.items() if k not in out}
    if len(rest) < MIN_LAUNCHES:
        return []
    centre = float(np.median(list(rest.values())))
    far = sorted(((abs(y - centre), k) for k, y in rest.items()
                  if abs(y - centre) >= STALL_GAP), reverse=True)
    allowed = (len(ys) - 1) // 2 - len(out)
    return [OddLaunch(k, math.exp(rest[k]), math.exp(rest[k] - centre), "stall", 1, 1)
            for _, k in far[:max(allowed, 0)]]
