"""`commscope compare --live` in the terminal, as JSON and as JUnit: each case's claim on
its launch pairs, and how and why the command stopped (docs/compare.md, "Side by side")."""

from __future__ import annotations

from ..store import names
from ..system import units
from ..stats.verdict import ALPHA, UNDETERMINED, VERB_WORDS, Threshold, Testcase, detectable
from ..stats.verdict import junit as claims_junit
from .glossary import defined
from .tables import Table

WORDS = VERB_WORDS["compare"]

HEADER = ("case", "pairs", "A us", "B us", "change", "interval", "p (BH)", "verdict",
          "more pairs")
STOPPED = {"decided": "every case decided", "budget": "the time budget (--max-time) ran out",
           "pairs": "the planned pairs (--launches) were used",
           "failed": "a launch failed"}


def _percent(ratio: float | None) -> str:
    return "-" if ratio is None else units.percent(ratio - 1, signed=True)


def rows(live) -> list[tuple[str, ...]]:
    d = live.decision
    out = []
    for c, (a_s, b_s), more in zip(d.claims, d.medians, d.more):
        ci = "-" if c.interval is None else \
            f"{_percent(c.interval[0])} to {_percent(c.interval[1])}"
        out.append((c.subject, str(c.launches), units.us(a_s), units.us(b_s),
                    _percent(c.ratio), ci, "-" if c.p is None else units.p_value(c.p),
                    c.word, "-" if c.word != UNDETERMINED else
                    (str(more) if more is not None else "out of reach")))
    return out


def render(live, threshold: Threshold, budget_s: float) -> str:
    """Every case (a live command has few), then what it found and why it stopped."""
    d = live.decision
    lines = [Table(HEADER, rows(live), align="l", rule=True).text()] if d.claims else []
    counts = ", ".join(f"{sum(c.word == w for c in d.claims)} {w}" for w in WORDS.all()
                       if any(c.word == w for c in d.claims) or w in (WORDS.over, WORDS.under))
    seen = detectable(c.detectable for c in d.claims)
    lines.append(
        f"{len(d.claims)} cases on launch pairs, A and B alternated A B B A: {counts}. "
        f"Threshold {threshold}; {WORDS.over}: B beyond it, {WORDS.under}: B within it either "
        f"way, at a false discovery rate of {ALPHA:g} over the cases and the looks: each "
        f"look at one-sided level {d.level:.3g} (Pocock's, {len(d.planned)} looks planned "
        f"after every {live.block} pairs from {d.planned[0]})"
        + (f"; the smallest change these pairs detect (80% power): {units.ratio(seen)}x"
           if seen is not None else ""))
    lines.append(defined("p (BH)", "power"))
    lines.append(f"Stopped after {d.pairs} pairs, {live.wall_s:.0f} s of launches (budget "
                 f"{budget_s:g} s), looks at {', '.join(map(str, d.looks)) or 'none'}: "
                 f"{STOPPED[d.stopped]}" + (f" ({live.failure})" if live.failure else ""))
    if sum(d.odd):
        lines.append(f"{sum(d.odd)} odd pairs left out (a launch 2x or more off its case's "
                     "other pairs, beyond 5 robust SDs: another state or a stall; "
                     "`pairs_left_out` in --json)")
    undecided = [m for c, m in zip(d.claims, d.more) if c.word == UNDETERMINED]
    if undecided:
        known = [m for m in undecided if m is not None]
        reach = (f"about {max(known)} more pairs would decide "
                 f"{'them' if len(known) == len(undecided) else f'{len(known)} of them'} at "
                 "their current change and spread (the 'more pairs' column); raise --max-time"
                 if known else "their change sits on the threshold: no number of pairs "
                 "within reach decides them")
        lines.append(f"{len(undecided)} undetermined: {reach}")
    lines.append(f"Stored as runs A {_ids(live.runs['A'])} and B {_ids(live.runs['B'])} "
                 f"(labelled side=A, side=B): `commscope compare {_ids(live.runs['A'])} "
                 f"{_ids(live.runs['B'])}` reads them again")
    if d.regressions:
        lines.append(f"{d.regressions} case(s) slower by more than the threshold "
                     f"{threshold.fraction:.0%}")
    return "\n".join(lines)


def _ids(runs: list[int]) -> str:
    return ",".join(map(str, runs)) or "-"


def as_json(live, threshold: Threshold, budget_s: float, change: dict) -> dict:
    d = live.decision
    cases = []
    for k, c, (a_s, b_s), more, odd in zip(d.keys, d.claims, d.medians, d.more, d.odd):
        ident = live.identities[k]
        cases.append({
            "case": names.identity(ident), "identity": ident, "pairs": c.launches,
            "median_a_s": a_s, "median_b_s": b_s, "relative": c.ratio - 1,
            "relative_ci_low": c.interval[0] - 1 if c.interval else None,
            "relative_ci_high": c.interval[1] - 1 if c.interval else None,
            "p_adjusted": c.p, "verdict": c.word, "regression": c.failing,
            "detectable_ratio": c.detectable, "pairs_to_decide": more, "pairs_left_out": odd})
    return {"kernel": d.keys and live.identities[d.keys[0]]["kernel"] or None,
            "a_runs": live.runs["A"], "b_runs": live.runs["B"], "b": change,
            "alpha": ALPHA, "level": d.level, "threshold": threshold.fraction,
            "correction": "benjamini-hochberg", "order": "ABBA", "pairs": d.pairs,
            "planned_looks": list(d.planned), "looks": list(d.looks), "stopped": d.stopped,
            "failure": live.failure, "budget_s": budget_s, "launches_s": live.wall_s,
            "cases": cases, "regressions": d.regressions}


def testcases(live) -> list[Testcase]:
    """One per case, as JUnit and the exit status read them: a regression failing,
    undetermined and inconclusive undecided."""
    cases = []
    for k, row, c in zip(live.decision.keys, rows(live), live.decision.claims):
        r = dict(zip(HEADER, row))
        text = (f"{c.word}: {r['change']} (interval {r['interval']}), p (BH) {r['p (BH)']}, "
                f"A {r['A us']} us, B {r['B us']} us, pairs {r['pairs']}"
                + (f", about {r['more pairs']} more pairs would decide it"
                   if c.word == UNDETERMINED else ""))
        cases.append(Testcase(live.identities[k]["kernel"], c.subject, c.word, text, c.failing))
    return cases


def junit(cases: list[Testcase], fail_on: str | None = None) -> str:
    """JUnit XML for CI (the verdict core's writer)."""
    return claims_junit("commscope compare --live", cases, fail_on)
