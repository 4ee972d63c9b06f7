"""What `commscope check` compares (docs/guidelines.md, "Statistics"): for each guideline,
per (series, size), the left side's launch medians against the right's. The launch is the
unit, as in `compare`: where both sides ran in the same launches (all that `check`
measures) the ratios pair launch by launch, so a launch slow as a whole cancels out;
sides from different runs are two commands (the verdict core adds the variance between
commands). The verdict core (commscope.stats.verdict) tests each at the threshold, each
guideline a family: `violated` is H0 "left no more than the threshold slower" rejected.

Each side's time is the one `results show` gives its case (summary.combined_summary, over
the launches states.screen keeps), and the ratio is taken over the same launches: a
launch left out of a side's time (another state, a stall at that case) is left out of its
pairs too, so a stall cannot move the ratio where it does not move the times.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass

import numpy as np

from ..store.cases import Case, grouped, identity, key
from .compare import pooled
from ..stats.replication import shared_levels
from .guidelines import SIZE_KINDS, Guideline
from ..system.sizes import format_bytes
from ..stats.states import screen
from ..stats.summary import combined_summary
from ..stats.verdict import Claim, Threshold, Words, claims, negligible, paired

WORDS = Words("violated", "holds")
MOCKUP_PARAMS = ("as", "persistent")  # a case with these is another form, not the kernel


def _median(case: Case) -> float:
    return float(np.median(case.latency_s))


def _launch(case: Case) -> tuple:
    return case.run_id, case.launch


@dataclass(frozen=True)
class Time:
    """One side's time as `results show` gives its case: the median over the launches
    kept (replication.interval) and its 95% interval (None: one launch, or launches that
    disagree beyond any interval); `times` k: the time of k such calls (split's right)."""
    median_s: float | None
    ci: tuple[float, float] | None

    @classmethod
    def of(cls, summary: dict, times: int = 1) -> "Time":
        low, high, median = summary["ci_low_s"], summary["ci_high_s"], summary["median_s"]
        return cls(None if median is None else times * median,
                   None if low is None or high is None else (times * low, times * high))

    def as_list(self) -> list[float] | None:
        return list(self.ci) if self.ci else None


def figures(measured: list[tuple[list[Case], dict]]) -> dict[int, tuple[dict, set]]:
    """Case id -> its case's summary and the launches that summary keeps ((run, launch)),
    from results.measured's cases and summaries (a case of several runs is kept whole
    there: states.screen)."""
    out = {}
    for found, summary in measured:
        left_out = {o["launch"] for o in summary.get("other_state") or ()}
        kept = {_launch(c) for c in found if c.launch not in left_out}
        out.update((c.id, (summary, kept)) for c in found)
    return out


def figures_alone(cases: list[Case]) -> dict[int, tuple[dict, set]]:
    """figures() where no results file is at hand (tune, the report): each case's
    launches screened within their run (states.screen), its summary over the launches
    kept in every run it has (summary.combined_summary; without the history, so its
    interval is as `run` gives it)."""
    parts = [[c for c in found if c.run_id == run] for _, found in grouped(cases)
             for run in dict.fromkeys(c.run_id for c in found)]
    merged: dict[str, tuple[list, list, list]] = {}
    for part, mine, left_out in zip(parts, *screen(parts)):
        slot = merged.setdefault(key(identity(part[0])), ([], [], []))
        for into, these in zip(slot, (part, mine, left_out)):
            into.extend(these)
    out = {}
    for found, mine, left_out in merged.values():
        summary = combined_summary(mine, odd=left_out)
        kept = {_launch(c) for c in mine}
        out.update((c.id, (summary, kept)) for c in found)
    return out


def barrier_time(timers: list[dict]) -> float:
    """One barrier's time in some launches, from each launch's context `timer`: the median
    over them of the median of barriers timed one by one (`barrier_median_s`; a record
    from before it, its mean `barrier_s`). Never the most of them: on a loaded machine
    one launch's mean of a thousand barriers read 41-326 us where a barrier takes 0.2 us,
    and a 2.6x slowdown of 26 us passed as below it. 0.0: none recorded."""
    found = [t.get("barrier_median_s") or t.get("barrier_s") for t in timers]
    found = [t for t in found if t]
    return float(statistics.median(found)) if found else 0.0


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
    left: dict  # launch -> seconds, the launches the side's time keeps
    right: dict
    barrier_s: float
    cases: tuple = ()  # the left side's cases and the right's, where they are two commands
    left_time: Time = Time(None, None)  # each side's time as `results show` gives it
    right_time: Time = Time(None, None)

    @property
    def apart(self) -> bool:
        """The sides were measured in different launches: two commands."""
        return not set(self.left) & set(self.right)


def _two_sided(g: Guideline, cases: list[Case], barrier, figure) -> list[_Pair]:
    sides: dict[tuple, dict] = {}
    for c in cases:
        if c.kernel != g.kernel or c.imported:
            continue
        value = c.send_mode if g.vary == "send_mode" else c.params.get(g.vary)
        which = "left" if value == g.left else "right" if value == g.right else None
        if which is None:
            continue
        slot = sides.setdefault((rest(c, g.vary), c.bytes), {"left": {}, "right": {},
                                                               "np": c.launched_ranks,
                                                               "cases": ([], [])})
        summary, kept = figure[c.id]
        slot[f"{which}_time"] = Time.of(summary)
        if _launch(c) in kept:
            slot[which][_launch(c)] = _median(c)
        slot["cases"][which == "right"].append(c)
    return [_Pair(g, f"{g.kernel} np{s['np']}", s["np"], nbytes, s["left"], s["right"],
                  barrier(list(s["left"]) + list(s["right"])), s["cases"],
                  s["left_time"], s["right_time"])
            for (_, nbytes), s in sides.items() if s["left"] and s["right"]]


def _over_sizes(g: Guideline, cases: list[Case], barrier, figure) -> list[_Pair]:
    """monotony: each size against the next larger; split: m against k times m/k."""
    series: dict[str, dict] = {}
    for c in cases:
        if c.kernel != g.kernel or c.imported or any(p in c.params for p in MOCKUP_PARAMS):
            continue
        s = series.setdefault(rest(c, None), {"sizes": {}, "mode": c.send_mode,
                                               "np": c.launched_ranks, "summaries": {}})
        summary, kept = figure[c.id]
        s["summaries"][c.bytes] = summary
        launches = s["sizes"].setdefault(c.bytes, {})
        if _launch(c) in kept:
            launches[_launch(c)] = _median(c)
    pairs = []
    for s in series.values():
        label = " ".join(filter(None, (g.kernel, s["mode"], f"np{s['np']}")))
        sizes = sorted(s["sizes"])
        if g.kind == "monotony":
            matched = list(zip(sizes, sizes[1:]))
        else:
            matched = [(m, m // g.k) for m in sizes if m and m % g.k == 0 and m // g.k in sizes]
        for a, b in matched:
            k = 1 if g.kind == "monotony" else g.k
            right = {launch: k * t for launch, t in s["sizes"][b].items()}
            pairs.append(_Pair(g, label, s["np"], a, s["sizes"][a], right,
                               barrier(list(s["sizes"][a]) + list(s["sizes"][b])), (),
                               Time.of(s["summaries"][a]), Time.of(s["summaries"][b], k)))
    return pairs


def command_terms(pairs: list[_Pair], history_of) -> list[tuple[float, float] | None]:
    """Each pair's variance between commands where its sides are two commands (runs
    apart, check --runs): learned from the histories of both sides' cases (`history_of`,
    results.case_history), moderated across the command's pairs as compare's are
    (compare.pooled), the mean of the two sides' on the fewer degrees of freedom; None
    where neither side has one (or the sides share launches): the verdict core then
    assumes the launches' variance (verdict.inference.COMMAND_TO_LAUNCH), and the claim says
    so (its `command_term`)."""
    apart = [i for i, p in enumerate(pairs) if p.apart and p.cases]
    # each side's cases are one command's: their levels found together (shared_levels)
    left, right = ([history_of(pairs[i].cases[side]) for i in apart] for side in (0, 1))
    pasts = pooled([p for both in zip(shared_levels(left), shared_levels(right))
                    for p in both])
    out: list[tuple[float, float] | None] = [None] * len(pairs)
    for j, i in enumerate(apart):
        known = [p for p in pasts[2 * j:2 * j + 2] if p is not None and p.command_var is not None]
        if known:
            out[i] = (float(np.mean([p.command_var for p in known])),
                      float(min(p.command_df for p in known)))
    return out


def judge(guidelines: list[Guideline], cases: list[Case], threshold: Threshold,
          barrier=lambda launches: 0.0, together: bool = True,
          history_of=lambda cases: None,
          figure: dict[int, tuple[dict, set]] | None = None) -> list[Claim]:
    """Every guideline's claim at every (series, size) the cases hold both sides of, each
    guideline its own family; `barrier(launches)`: one barrier's time in those launches
    (barrier_time); `together`: the command is the gate, so the guidelines are selected
    together before any is named (verdict.inference.selected_levels), else each guideline
    names on its own; `history_of(cases)`: their case's history, for sides that are two
    commands (command_terms); `figure`: each case's summary as `results show` gives it
    and the launches it keeps (figures, of results.measured), else figures_alone(cases)."""
    figure = figures_alone(cases) if figure is None else figure
    pairs = [p for g in guidelines
             for p in sorted((_over_sizes if g.kind in SIZE_KINDS else _two_sided)(
                 g, cases, barrier, figure), key=lambda p: (p.np, p.case, p.bytes))]
    terms = command_terms(pairs, history_of)
    evidence = []
    for p, term in zip(pairs, terms):
        left, right = p.left_time, p.right_time
        evidence.append({"id": p.g.id, "kind": p.g.kind, "np": p.np, "bytes": p.bytes,
                         "case": p.case, "left_s": left.median_s, "right_s": right.median_s,
                         "left_ci": left.as_list(), "right_ci": right.as_list(),
                         "barrier_s": p.barrier_s,
                         "below_barrier": negligible(left.median_s, right.median_s,
                                                     p.barrier_s),
                         **({"command_term": "history" if term else "assumed"}
                            if p.apart else {})})
    return claims([paired(p.left, p.right, term) for p, term in zip(pairs, terms)],
                  [p.g.id for p in pairs],
                  [f"{p.case} {format_bytes(p.bytes)}" for p in pairs], threshold, WORDS,
                  evidence, [e["below_barrier"] for e in evidence], together=together)
