"""What `commscope check` compares (docs/guidelines.md, "Statistics"): for each guideline,
per (series, size), the left side's case against the right's, each side its case's one
figure (stats/summary.CaseSummary, as `results show RUN` gives it in its run). The
launch is the unit, as in `compare`: where both sides ran in one run (all that `check`
measures) the launches both figures keep pair, so a launch slow as a whole cancels out
of the interval; sides from different runs are two commands (the verdict core adds the
variance between commands). The ratio is always the left figure over the right one, so a
table never prints a ratio its two times contradict. The verdict core
(commscope.stats.verdict) tests each at the threshold, each guideline a family: `violated`
is H0 "left no more than the threshold slower" rejected.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, replace

import numpy as np

from ..stats.summary import CaseSummary
from ..figures.read import case_history, measured
from ..stats.stats import ALPHA, t_cdf
from ..stats.verdict import (UNDETERMINED, VERB_WORDS, Claim, Estimate, Threshold, claims,
                             negligible, paired)
from ..store.cases import Case
from ..system.sizes import format_bytes
from .compare import pooled
from .guidelines import SIZE_KINDS, Guideline, remedy

WORDS = VERB_WORDS["check"]
MOCKUP_PARAMS = ("as", "persistent")  # a case with these is another form, not the kernel


@dataclass(frozen=True)
class Side:
    """One side of a comparison: its case's summary, `times` k its time as the time of k
    such calls (split's right)."""
    summary: CaseSummary
    cases: tuple[Case, ...] = ()
    times: int = 1

    @property
    def median_s(self) -> float | None:
        m = self.summary.median_s
        return None if m is None else self.times * m

    @property
    def ci(self) -> tuple[float, float] | None:
        low, high = self.summary.ci_low_s, self.summary.ci_high_s
        return None if low is None or high is None else (self.times * low, self.times * high)

    def as_list(self) -> list[float] | None:
        return list(self.ci) if self.ci else None

    @property
    def launches(self) -> dict:
        """(run, launch) -> the kept launch's median, times k."""
        return {k: self.times * m for k, m in self.summary.launch_of.items()}


def estimate(left: Side, right: Side, command: tuple[float, float] | None = None) -> Estimate:
    """Left over right: the variance from the launches both keep, paired (a launch slow as
    a whole cancels), or of two commands (verdict.paired); the estimate itself the ratio
    of their two figures, which it is wherever both keep the same launches."""
    e = paired(left.launches, right.launches, command)
    if left.median_s and right.median_s:
        return replace(e, log_ratio=math.log(left.median_s / right.median_s))
    return e


def barrier_time(timers: list[dict]) -> float:
    """One barrier's time in some launches, from each launch's context `timer`: the median
    over them of the median of barriers timed one by one (`barrier_median_s`; a record
    from before it, its mean `barrier_s`). Never the most of them: on a loaded machine
    one launch's mean of a thousand barriers read 41-326 us where a barrier takes 0.2 us,
    and a 2.6x slowdown of 26 us passed as below it. 0.0: none recorded."""
    found = [t.get("barrier_median_s") or t.get("barrier_s") for t in timers]
    found = [t for t in found if t]
    return float(statistics.median(found)) if found else 0.0


def rest(summary: CaseSummary, vary: str | None) -> str:
    """What must match between two sides: the case's identity but its size and `vary`."""
    ident = {k: v for k, v in summary.identity.items()
             if k != "bytes" and (k != "send_mode" or vary != "send_mode")}
    if vary not in (None, "send_mode"):
        ident["params"] = {k: v for k, v in ident["params"].items() if k != vary}
    return json.dumps(ident, sort_keys=True)


@dataclass(frozen=True)
class _Pair:
    """One (guideline, series, size): the left side and the right."""
    g: Guideline
    case: str
    np: int
    bytes: int
    left: Side
    right: Side
    barrier_s: float

    @property
    def apart(self) -> bool:
        """The sides were measured in different runs: two commands."""
        return not set(self.left.launches) & set(self.right.launches)


def _paired_sides(lefts: dict[int, Side], rights: dict[int, Side]) -> list[tuple[Side, Side]]:
    """The sides to compare from each side's summaries by run: the newest run's that holds
    both; else the newest run's of each, two commands. One verdict a (series, size)."""
    both = set(lefts) & set(rights)
    if both:
        return [(lefts[max(both)], rights[max(both)])]
    return [(lefts[max(lefts)], rights[max(rights)])] if lefts and rights else []


def _two_sided(g: Guideline, found: list[tuple[list[Case], CaseSummary]], barrier) -> list[_Pair]:
    slots: dict[tuple, dict] = {}
    for cases, s in found:
        if s.kernel != g.kernel or s.imported:
            continue
        value = s.send_mode if g.vary == "send_mode" else s.params.get(g.vary)
        which = "left" if value == g.left else "right" if value == g.right else None
        if which is None:
            continue
        slot = slots.setdefault((rest(s, g.vary), s.bytes), {"left": {}, "right": {},
                                                             "np": cases[0].launched_ranks})
        slot[which][s.run] = Side(s, tuple(cases))
    return [_Pair(g, f"{g.kernel} np{slot['np']}", slot["np"], nbytes, left, right,
                  barrier(list(left.launches) + list(right.launches)))
            for (_, nbytes), slot in slots.items()
            for left, right in _paired_sides(slot["left"], slot["right"])]


def _over_sizes(g: Guideline, found: list[tuple[list[Case], CaseSummary]], barrier
                ) -> list[_Pair]:
    """monotony: each size against the next larger; split: m against k times m/k; each
    series within one run, the newest that measured it."""
    series: dict[str, dict] = {}
    for cases, s in found:
        if s.kernel != g.kernel or s.imported or any(p in s.params for p in MOCKUP_PARAMS):
            continue
        one = series.setdefault(rest(s, None), {"runs": {}, "mode": s.send_mode,
                                                "np": cases[0].launched_ranks})
        one["runs"].setdefault(s.run, {})[s.bytes] = Side(s, tuple(cases))
    for one in series.values():
        one["sizes"] = one["runs"][max(one["runs"])]
    pairs = []
    for one in series.values():
        label = " ".join(filter(None, (g.kernel, one["mode"], f"np{one['np']}")))
        sizes = sorted(one["sizes"])
        if g.kind == "monotony":
            matched = list(zip(sizes, sizes[1:]))
        else:
            matched = [(m, m // g.k) for m in sizes if m and m % g.k == 0 and m // g.k in sizes]
        for a, b in matched:
            left = one["sizes"][a]
            right = replace(one["sizes"][b], times=1 if g.kind == "monotony" else g.k)
            pairs.append(_Pair(g, label, one["np"], a, left, right,
                               barrier(list(left.launches) + list(right.launches))))
    return pairs


def histories(pairs: list[_Pair], history_of) -> list[tuple | None]:
    """Each pair's (left, right) case histories where its sides are two commands (runs
    apart, check --runs), from `history_of` (figures.read.case_history), their variances
    between commands moderated across the command's pairs as compare's are
    (compare.pooled); None where the sides share launches."""
    apart = [i for i, p in enumerate(pairs) if p.apart]
    left, right = ([history_of(list(getattr(pairs[i], side).cases)) for i in apart]
                   for side in ("left", "right"))
    pasts = pooled([p for both in zip(left, right) for p in both])
    out: list[tuple | None] = [None] * len(pairs)
    for j, i in enumerate(apart):
        out[i] = tuple(pasts[2 * j:2 * j + 2])
    return out


def command_term(pasts: tuple | None) -> tuple[float, float] | None:
    """A pair's variance between commands: the mean of its two sides' (histories) on the
    fewer degrees of freedom; None where neither side has one (or the sides share
    launches): the verdict core then assumes the launches' variance
    (verdict.inference.COMMAND_TO_LAUNCH), and the claim says so (its `command_term`)."""
    known = [p for p in pasts or () if p is not None and p.command_var is not None]
    if not known:
        return None
    return (float(np.mean([p.command_var for p in known])),
            float(min(p.command_df for p in known)))


def states_apart(p: _Pair, pasts: tuple | None) -> float | None:
    """For sides that are two commands: the p-value of "both commands sit in one state",
    an F test (a t test squared) of how far the two commands lie from their cases'
    histories, each side's mean log launch median less the mean of its case's earlier
    commands, against the spread of launches within a command (the two sides' and their
    histories', pooled). The ratio of the two cases cancels out of that difference; what
    is left is the commands' own offset, which a state moves alike at every size. None
    where a side has no history to stand against."""
    if pasts is None or any(h is None or not h.command_means for h in pasts):
        return None
    logs = [np.log(side.summary.launch_medians_s) for side in (p.left, p.right)]
    gap = sum(sign * (x.mean() - float(np.mean(h.command_means)))
              for sign, x, h in zip((1, -1), logs, pasts))
    parts = [(float(x.var(ddof=1)), x.size - 1) for x in logs if x.size >= 2] + \
        [(h.between_var, h.df) for h in pasts]
    df = sum(d for _, d in parts)
    var = sum(v * d for v, d in parts) / df * sum(1 / x.size for x in logs)
    if var <= 0:
        return 0.0 if gap else 1.0
    return float(2 * t_cdf(df, -abs(gap) / math.sqrt(var)))


def judge(guidelines: list[Guideline], found: list[tuple[list[Case], CaseSummary]],
          threshold: Threshold, barrier=lambda launches: 0.0, together: bool = True,
          history_of=lambda cases: None) -> list[Claim]:
    """Every guideline's claim at every (series, size) the runs hold both sides of, each
    guideline its own family; `found`: each run's cases and summaries
    (figures.read.measured, run by run: the figure `results show RUN` gives);
    `barrier(launches)`: one barrier's time in those launches (barrier_time); `together`:
    the command is the gate, so the guidelines are selected together before any is named
    (verdict.inference.selected_levels), else each guideline names on its own;
    `history_of(cases)`: their case's history, for sides that are two commands
    (histories)."""
    pairs = [p for g in guidelines
             for p in sorted((_over_sizes if g.kind in SIZE_KINDS else _two_sided)(
                 g, found, barrier), key=lambda p: (p.np, p.case, p.bytes))]
    return verdicts(pairs, histories(pairs, history_of), threshold, together)


def verdicts(pairs: list[_Pair], pasts: list[tuple | None], threshold: Threshold,
             together: bool = True) -> list[Claim]:
    """The pairs' claims (`pasts`: their histories, histories()). A violation between two
    commands that sit in different states (states_apart, p < ALPHA) is undetermined: on a
    host whose commands land in states (here 1.1-3x apart) the state, not the guideline,
    may be what made the left side slower, and measuring both sides in one command
    (check without --runs) pairs their launches so a state cancels."""
    terms = [command_term(h) for h in pasts]
    evidence = []
    for p, term in zip(pairs, terms):
        left, right = p.left, p.right
        evidence.append({"id": p.g.id, "kind": p.g.kind, "np": p.np, "bytes": p.bytes,
                         "case": p.case, "left_s": left.median_s, "right_s": right.median_s,
                         "left_ci": left.as_list(), "right_ci": right.as_list(),
                         "barrier_s": p.barrier_s,
                         "below_barrier": negligible(left.median_s, right.median_s,
                                                     p.barrier_s),
                         **({"command_term": "history" if term else "assumed"}
                            if p.apart else {})})
    found = claims([estimate(p.left, p.right, term) for p, term in zip(pairs, terms)],
                   [p.g.id for p in pairs],
                   [f"{p.case} {format_bytes(p.bytes)}" for p in pairs], threshold, WORDS,
                   evidence, [e["below_barrier"] for e in evidence], together=together)
    for i, (p, c, past) in enumerate(zip(pairs, found, pasts)):
        apart = states_apart(p, past) if c.failing else None
        if apart is not None and apart < ALPHA:
            found[i] = replace(c, word=UNDETERMINED, failing=False,
                               evidence={**c.evidence, "states_apart_p": apart})
    return found


def barrier_of(store, run_ids: list[int]):
    """One barrier's time in given launches, from their context records (barrier_time)."""
    timers = {(run_id, launch.number): launch.context.get("timer") or {}
              for run_id in run_ids for launch in store.launches(run_id)}
    return lambda launches: barrier_time([timers[k] for k in launches if k in timers])


def check(store, run_ids: list[int], guidelines: list[Guideline], threshold: Threshold,
          together: bool = True) -> list[Claim]:
    """The claims of stored runs, as `check` makes them after measuring, `check --runs`
    and the report read them again: every run's figures (figures.read.measured, run by
    run), the barrier its launches timed and the history of sides apart."""
    found = [pair for run_id in run_ids for pair in measured(store, [run_id])]
    return judge(guidelines, found, threshold, barrier_of(store, run_ids), together,
                 lambda cases: case_history(store, cases))


@dataclass(frozen=True)
class Checked:
    """A check's one result: its runs, threshold and families, the claims and a remedy per
    violated guideline; what its table, JSON and JUnit are written from."""
    runs: list[int]
    threshold: Threshold
    families: str
    claims: list[Claim]
    remedies: list[str]

    def as_dict(self) -> dict:
        return {"runs": self.runs, "threshold": self.threshold.fraction,
                "families": self.families, "verdicts": [c.as_dict() for c in self.claims],
                "remedies": self.remedies}


def _where(found: list[Claim]) -> str:
    sizes = sorted({c.evidence["bytes"] for c in found})
    span = format_bytes(sizes[0]) if len(sizes) == 1 else \
        f"{format_bytes(sizes[0])} to {format_bytes(sizes[-1])}"
    return f"at {span} ({', '.join(sorted({c.evidence['case'] for c in found}))})"


def remedies(found: list[Claim], guidelines: list[Guideline], family: str | None,
             tuned=()) -> list[str]:
    """One per violated guideline; a collective's takes tune's choices (`tuned`, tune.judged)
    where tune measured the same np and sizes."""
    by_id = {g.id: g for g in guidelines}
    violated: dict[str, list[Claim]] = {}
    for c in found:
        if c.failing:
            violated.setdefault(c.evidence["id"], []).append(c)
    made = []
    for gid, these in violated.items():
        at = {(c.evidence["np"], c.evidence["bytes"]) for c in these}
        chosen = {f"{format_bytes(p.bytes)} np{p.np}": p.choice
                  for p in sorted(tuned, key=lambda p: (p.np, p.bytes))
                  if p.kernel == by_id[gid].kernel and (p.np, p.bytes) in at}
        made.append(remedy(by_id[gid], _where(these), family, chosen))
    return made


