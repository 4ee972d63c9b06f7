"""Verdicts on guidelines from launch medians (docs/guidelines.md, "Statistics").

The launch is the unit, as in `compare`: each launch gives one median per side, and the
statistic is the log of the ratio left over right. Where both sides ran in the same
launches (all that `commscope check` measures) the ratios pair launch by launch, so a
launch that ran slow as a whole cancels out; sides from different runs are two samples of
launch medians. The test is one-sided (H1: the left side is slower), the p-values of one
command adjusted by Benjamini-Hochberg as a family, and `violated` also needs the ratio's
whole 95% interval above 1 + threshold, so a real but small difference is not a
violation.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace

import numpy as np

from .cases import Case, identity
from .guidelines import SIZE_KINDS, Guideline
from .stats import benjamini_hochberg

ALPHA = 0.05
DEFAULT_THRESHOLD = 0.05
MOCKUP_PARAMS = ("as", "persistent")  # a case with these is another form, not the kernel


@dataclass(frozen=True)
class Verdict:
    id: str
    kind: str
    np: int
    bytes: int  # monotony: the smaller size of the pair; split: the whole message
    case: str  # the series judged, e.g. "allreduce np4" or "pingpong standard"
    ratio: float  # left over right (monotony: t(m)/t(m'); split: t(m)/(k t(m/k)))
    ci: tuple[float, float] | None
    p_value: float | None  # one-sided, Benjamini-Hochberg adjusted over the command
    verdict: str  # violated, holds, within noise, inconclusive
    launches: int
    paired: bool
    below_barrier: bool  # |t(left) - t(right)| under one barrier's time (pgchecker marks it)
    left_s: float  # the sides' medians over launches
    right_s: float

    def as_dict(self) -> dict:
        return {"id": self.id, "kind": self.kind, "np": self.np, "bytes": self.bytes,
                "case": self.case, "ratio": self.ratio,
                "ci": list(self.ci) if self.ci else None, "p_value": self.p_value,
                "verdict": self.verdict, "launches": self.launches, "paired": self.paired,
                "below_barrier": self.below_barrier, "left_s": self.left_s,
                "right_s": self.right_s}


def _median(case: Case) -> float:
    return float(np.median(case.latency_s))


def _launch(case: Case) -> tuple:
    return case.run_id, case.launch


def rest(case: Case, vary: str | None) -> str:
    """What must match between two sides: the case's identity but its size and `vary`."""
    ident = identity(case, size=False, send_mode=vary != "send_mode")
    if vary not in (None, "send_mode"):
        ident["params"] = {k: v for k, v in ident["params"].items() if k != vary}
    return json.dumps(ident, sort_keys=True)


@dataclass(frozen=True)
class _Pair:
    """One (guideline, series, size): per launch, the left and right times."""
    g: Guideline
    case: str
    np: int
    bytes: int
    left: dict  # launch -> seconds
    right: dict
    barrier_s: float


def _two_sided(g: Guideline, cases: list[Case], barrier) -> list[_Pair]:
    sides: dict[tuple, dict] = {}
    for c in cases:
        if c.kernel != g.kernel or c.imported:
            continue
        value = c.send_mode if g.vary == "send_mode" else c.params.get(g.vary)
        which = "left" if value == g.left else "right" if value == g.right else None
        if which is None:
            continue
        slot = sides.setdefault((rest(c, g.vary), c.bytes), {"left": {}, "right": {},
                                                               "np": c.launched_ranks})
        slot[which][_launch(c)] = _median(c)
    return [_Pair(g, f"{g.kernel} np{s['np']}", s["np"], nbytes, s["left"], s["right"],
                  barrier(list(s["left"]) + list(s["right"])))
            for (_, nbytes), s in sides.items() if s["left"] and s["right"]]


def _over_sizes(g: Guideline, cases: list[Case], barrier) -> list[_Pair]:
    """monotony: each size against the next larger; split: m against k times m/k."""
    series: dict[str, dict] = {}
    for c in cases:
        if c.kernel != g.kernel or c.imported or any(p in c.params for p in MOCKUP_PARAMS):
            continue
        s = series.setdefault(rest(c, None), {"sizes": {}, "mode": c.send_mode,
                                               "np": c.launched_ranks})
        s["sizes"].setdefault(c.bytes, {})[_launch(c)] = _median(c)
    pairs = []
    for s in series.values():
        label = " ".join(filter(None, (g.kernel, s["mode"], f"np{s['np']}")))
        sizes = sorted(s["sizes"])
        if g.kind == "monotony":
            matched = list(zip(sizes, sizes[1:]))
        else:
            matched = [(m, m // g.k) for m in sizes if m and m % g.k == 0 and m // g.k in sizes]
        for a, b in matched:
            right = s["sizes"][b] if g.kind == "monotony" else \
                {launch: g.k * t for launch, t in s["sizes"][b].items()}
            pairs.append(_Pair(g, label, s["np"], a, s["sizes"][a], right,
                               barrier(list(s["sizes"][a]) + list(s["sizes"][b]))))
    return pairs


@dataclass(frozen=True)
class RatioTest:
    """The log of a left-over-right ratio of launch medians: estimate, standard error and
    degrees of freedom (0: fewer than two launches leave its variance unknown)."""
    log_ratio: float
    se: float
    df: float
    launches: int
    paired: bool

    def interval(self) -> tuple[tuple[float, float], float] | None:
        """The ratio's 95% interval and the one-sided p of H1: the left side is slower;
        None where untested. No spread at all: the sign alone."""
        from scipy.special import stdtr, stdtrit  # imported when a verdict is made
        if not self.df:
            return None
        if not self.se > 0:
            ratio = math.exp(self.log_ratio)
            return (ratio, ratio), 0.0 if self.log_ratio > 0 else 1.0
        half = float(stdtrit(self.df, 1 - ALPHA / 2)) * self.se
        return ((math.exp(self.log_ratio - half), math.exp(self.log_ratio + half)),
                float(stdtr(self.df, -self.log_ratio / self.se)))


def ratio_test(left: dict, right: dict) -> RatioTest:
    """Launch medians by launch, left and right: paired where they share launches (a
    launch slow as a whole cancels out), else two samples."""
    common = sorted(set(left) & set(right))
    if common:
        d = np.log([left[k] / right[k] for k in common])
        if d.size < 2:
            return RatioTest(float(d.mean()), math.nan, 0, d.size, True)
        return RatioTest(float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size)),
                         d.size - 1, d.size, True)
    a, b = np.log(list(left.values())), np.log(list(right.values()))
    shift = float(a.mean() - b.mean())
    df = a.size + b.size - 2
    if a.size < 2 or b.size < 2:
        return RatioTest(shift, math.nan, 0, min(a.size, b.size), False)
    pooled = ((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1)) / df
    return RatioTest(shift, math.sqrt(pooled * (1 / a.size + 1 / b.size)), df,
                     min(a.size, b.size), False)


def judge(guidelines: list[Guideline], cases: list[Case], threshold: float,
          barrier=lambda launches: 0.0) -> list[Verdict]:
    """Every guideline's verdict at every (series, size) the cases hold both sides of;
    `barrier(launches)`: one barrier's time in those launches."""
    pairs = [p for g in guidelines
             for p in sorted((_over_sizes if g.kind in SIZE_KINDS else _two_sided)(
                 g, cases, barrier), key=lambda p: (p.np, p.case, p.bytes))]
    made, tested = [], []
    for p in pairs:
        t = ratio_test(p.left, p.right)
        left = float(np.median(list(p.left.values())))
        right = float(np.median(list(p.right.values())))
        v = Verdict(p.g.id, p.g.kind, p.np, p.bytes, p.case, math.exp(t.log_ratio), None, None,
                    "inconclusive", t.launches, t.paired, abs(left - right) < p.barrier_s,
                    left, right)
        found = t.interval()
        if found:
            v = replace(v, ci=found[0], p_value=found[1])
            tested.append(len(made))
        made.append(v)
    if tested:
        adjusted = benjamini_hochberg([made[i].p_value for i in tested])
        for i, p in zip(tested, adjusted):
            made[i] = _decide(replace(made[i], p_value=float(p)), threshold)
    return made


def _decide(v: Verdict, threshold: float) -> Verdict:
    low, high = v.ci
    if v.p_value < ALPHA and low > 1 + threshold:
        word = "violated"
    elif high <= 1 + threshold:
        word = "holds"
    else:
        word = "within noise"
    return replace(v, verdict=word)
