"""Choosing each collective's algorithm from the library's own, measured in the same
launches as its default (docs/tune.md, "How the choice is made").

The launch is the unit, as in `check`: per (collective, np, size) each launch gives one
median for the default and one for every algorithm, and each algorithm's time over the
default's is a paired ratio of launch medians (verdicts.ratio_test). An algorithm is
chosen where it is faster beyond doubt: its one-sided p (H1: faster), adjusted by
Benjamini-Hochberg over every algorithm at every point of the command, below ALPHA and
its whole 95% interval below 1. Of those, the fastest; none, and the library keeps its
own choice. Neighbouring sizes with one choice form a range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .cases import Case
from .stats import benjamini_hochberg
from .summary import combined_summary
from .verdicts import ALPHA, ratio_test, rest

VARY = "algorithm"  # the kernel parameter that forces the library's algorithm


@dataclass(frozen=True)
class Option:
    """One algorithm at one point."""
    algorithm: str
    time_s: float  # the median of its launch medians
    time_ci: tuple[float, float] | None  # its launch-aware 95% interval (as `run` gives)
    ratio: float  # its time over the default's, paired by launch
    ci: tuple[float, float] | None  # the ratio's 95% interval; None: one launch
    p_value: float | None  # one-sided (H1: faster than the default), BH-adjusted

    @property
    def faster(self) -> bool:
        return self.p_value is not None and self.p_value < ALPHA and self.ci[1] < 1

    def as_dict(self) -> dict:
        return {"algorithm": self.algorithm, "time_s": self.time_s,
                "time_ci": list(self.time_ci) if self.time_ci else None, "ratio": self.ratio,
                "ci": list(self.ci) if self.ci else None, "p_value": self.p_value}


@dataclass(frozen=True)
class Point:
    """One (collective, np, size): the default, each algorithm, and the choice."""
    kernel: str
    np: int
    bytes: int
    default_s: float
    default_ci: tuple[float, float] | None
    options: tuple[Option, ...]
    launches: int
    choice: str | None = None  # None: the library's own
    # Faster beyond doubt, and faster than the choice, but not one the library's rules
    # format can name (MPICH: an algorithm its own selection never names).
    unwritable: str | None = None

    @property
    def chosen(self) -> Option | None:
        return next((o for o in self.options if o.algorithm == self.choice), None)

    @property
    def gain(self) -> float:
        """How much less time the choice takes than the default (0: the default kept)."""
        return 1 - self.chosen.ratio if self.chosen else 0.0

    @property
    def regret(self) -> float:
        """The default's time over the fastest measured (1: the default was the fastest)."""
        return self.default_s / min([self.default_s, *(o.time_s for o in self.options)])

    def as_dict(self) -> dict:
        return {"collective": self.kernel, "np": self.np, "bytes": self.bytes,
                "default_s": self.default_s,
                "default_ci": list(self.default_ci) if self.default_ci else None,
                "launches": self.launches,
                "algorithms": [o.as_dict() for o in self.options], "choice": self.choice,
                "gain": self.gain, "regret": self.regret, "unwritable": self.unwritable}


@dataclass(frozen=True)
class Range:
    """Neighbouring measured sizes with one choice: from `low` to `high` bytes."""
    kernel: str
    np: int
    low: int
    high: int
    choice: str | None


def _by_launch(cases: list[Case]) -> dict:
    return {(c.run_id, c.launch): float(np.median(c.latency_s)) for c in cases}


def _interval(cases: list[Case]) -> tuple[float, float] | None:
    """The launch-aware 95% interval of one side's time (summary.combined_summary)."""
    found = combined_summary(cases)
    low, high = found.get("ci_low_s"), found.get("ci_high_s")
    return (low, high) if low is not None and high is not None else None


def points(cases: list[Case]) -> list[Point]:
    """Every point where the default and at least one algorithm were measured, each
    algorithm tested against the default; nothing chosen yet (see choose)."""
    sides: dict[tuple, dict] = {}
    for c in cases:
        if c.imported or c.family != "collective":
            continue
        slot = sides.setdefault((c.kernel, c.launched_ranks, c.bytes, rest(c, VARY)), {})
        slot.setdefault(c.params.get(VARY), []).append(c)
    made = []
    for (kernel, np_, nbytes, _), by in sorted(sides.items(), key=lambda kv: kv[0][:3]):
        own = by.pop(None, [])
        default = _by_launch(own)
        if not default or not by:
            continue
        options = []
        for name, measured in sorted(by.items()):
            launches = _by_launch(measured)
            t = ratio_test(default, launches)  # default over algorithm: > 1, it is faster
            found = t.interval()
            ci = (1 / found[0][1], 1 / found[0][0]) if found else None
            options.append(Option(name, float(np.median(list(launches.values()))),
                                  _interval(measured), math.exp(-t.log_ratio), ci,
                                  found[1] if found else None))
        made.append(Point(kernel, np_, nbytes, float(np.median(list(default.values()))),
                          _interval(own), tuple(options), len(default)))
    return made


def choose(found: list[Point], writable=lambda kernel, algorithm: True) -> list[Point]:
    """The points with their p-values adjusted as one family, and each one's choice:
    of the algorithms faster beyond doubt that the rules format can name
    (`writable(kernel, algorithm)`), the fastest."""
    tested = [(i, j) for i, p in enumerate(found) for j, o in enumerate(p.options)
              if o.p_value is not None]
    adjusted = benjamini_hochberg([found[i].options[j].p_value for i, j in tested]) \
        if tested else []
    options = [list(p.options) for p in found]
    for (i, j), p_value in zip(tested, adjusted):
        options[i][j] = replace(options[i][j], p_value=float(p_value))
    chosen = []
    for p, these in zip(found, options):
        faster = sorted((o for o in these if o.faster), key=lambda o: o.ratio)
        named = [o for o in faster if writable(p.kernel, o.algorithm)]
        best = named[0].algorithm if named else None
        blocked = faster[0].algorithm if faster and faster[0].algorithm != best else None
        chosen.append(replace(p, options=tuple(these), choice=best, unwritable=blocked))
    return chosen


def ranges(chosen: list[Point]) -> list[Range]:
    """Per (collective, np), neighbouring sizes with the same choice merged."""
    made: list[Range] = []
    for p in sorted(chosen, key=lambda p: (p.kernel, p.np, p.bytes)):
        last = made[-1] if made else None
        if last and (last.kernel, last.np, last.choice) == (p.kernel, p.np, p.choice):
            made[-1] = replace(last, high=p.bytes)
        else:
            made.append(Range(p.kernel, p.np, p.bytes, p.bytes, p.choice))
    return made


@dataclass(frozen=True)
class Check:
    """One (collective, np, size) of `tune --verify`: the rules against the default, in
    alternate launches paired by their number."""
    kernel: str
    np: int
    bytes: int
    default_s: float
    rules_s: float
    ratio: float  # time with the rules over the default's
    ci: tuple[float, float] | None
    p_value: float | None  # one-sided (H1: the rules are slower), BH-adjusted
    launches: int

    @property
    def slower(self) -> bool:
        """The rules slower beyond noise: flagged."""
        return self.p_value is not None and self.p_value < ALPHA and self.ci[0] > 1

    @property
    def gain(self) -> float:
        return 1 - self.ratio

    def as_dict(self) -> dict:
        return {"collective": self.kernel, "np": self.np, "bytes": self.bytes,
                "default_s": self.default_s, "rules_s": self.rules_s, "ratio": self.ratio,
                "ci": list(self.ci) if self.ci else None, "p_value": self.p_value,
                "gain": self.gain, "slower": self.slower, "launches": self.launches}


def _by_number(pairs: list[list[Case]]) -> dict[tuple, dict]:
    """Per point, launch medians keyed by (pair of runs, launch number)."""
    out: dict[tuple, dict] = {}
    for which, cases in enumerate(pairs):
        for c in cases:
            out.setdefault((c.kernel, c.launched_ranks, c.bytes), {})[(which, c.launch)] = \
                float(np.median(c.latency_s))
    return out


def verify(default: list[list[Case]], rules: list[list[Case]]) -> list[Check]:
    """Each point both sides measured; `default[i]` and `rules[i]` are one pair of runs,
    whose launches k pair."""
    a, b = _by_number(rules), _by_number(default)
    made = []
    for key in sorted(set(a) & set(b)):
        t = ratio_test(a[key], b[key])
        found = t.interval()
        made.append(Check(*key, float(np.median(list(b[key].values()))),
                          float(np.median(list(a[key].values()))), math.exp(t.log_ratio),
                          found[0] if found else None, found[1] if found else None,
                          t.launches))
    tested = [i for i, c in enumerate(made) if c.p_value is not None]
    for i, p in zip(tested, benjamini_hochberg([made[i].p_value for i in tested])
                    if tested else []):
        made[i] = replace(made[i], p_value=float(p))
    return made
