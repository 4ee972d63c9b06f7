"""`commscope compare` in the terminal: the changed cases, and one summary line."""

from __future__ import annotations

from ..store import names
from ..system import units
from ..judge.compare import LONE_STATE, SHIFT_ONLY, WORDS, CaseChange, Comparison
from ..stats.verdict import ALPHA, INCONCLUSIVE, UNDETERMINED, Testcase, detectable
from ..stats.verdict import junit as claims_junit
from ..stats.verdict import more_launches
from .glossary import defined
from .tables import Table

HEADER = ("case", "launches", "A us", "B us", "change", "interval", "p (BH)", "verdict")
# Why cases that differ only in `sample` are not compared, and what to do.
TIMED_OTHERWISE = ("the same case timed as batches of back-to-back calls on one side (stored "
                   "before collectives were timed one call from a barrier) and per call on "
                   "the other; measure the older side again to compare them")
REMEDY = (f"one launch a side cannot separate a change from launch noise: "
          f"{more_launches('compare')}, or keep earlier runs of the case on these hosts in "
          "the results file as its history")


def _row(c: CaseChange) -> tuple[str, ...]:
    claim = c.claim
    ci = "-" if claim.interval is None else (f"{units.percent(claim.interval[0] - 1, True)} to "
                                             f"{units.percent(claim.interval[1] - 1, True)}")
    return (names.identity(c.case), f"{c.launches_a}/{c.launches_b}", units.us(c.median_a_s),
            units.us(c.median_b_s), units.percent(claim.ratio - 1, signed=True), ci,
            "-" if claim.p is None else units.p_value(claim.p), claim.word)


def render(result: Comparison, everything: bool, live: str | None = None) -> str:
    """The changes that matter (every matched case with `everything`, and the unmatched
    ones), then the summary line."""
    lines = []
    shown = [c for c in result.changes if everything or c.claim.word != WORDS.under]
    if shown:
        lines.append(Table(HEADER, [_row(c) for c in shown], align="l", rule=True).text())
    if everything:
        for side, unmatched in (("A", result.only_a), ("B", result.only_b)):
            lines += [f"only in {side}: {names.identity(ident)}" for ident in unmatched]
    return "\n".join(lines + [summary(result, live)])


def summary(result: Comparison, live: str | None = None) -> str:
    """The counts, the threshold, what these launches detect and each remedy; `live`: the
    `compare --live` command that would decide what is undetermined."""
    words = [w for w in (*WORDS.all(), SHIFT_ONLY) if result.count(w) or w in (
        WORDS.over, WORDS.under)]
    counts = ", ".join(f"{result.count(w)} {w}" for w in words)
    unmatched = len(result.only_a) + len(result.only_b)
    seen = detectable(c.detectable for c in result.claims)
    line = (f"{len(result.changes)} matched cases: {counts}. Threshold {result.threshold}; "
            f"{WORDS.over}: B beyond it, {WORDS.under}: B within it either way, each at a "
            f"false discovery rate of {ALPHA:g} over the cases; {UNDETERMINED}: the interval "
            "spans the threshold" + (f"; the smallest change these launches detect (80% "
                                     f"power): {units.ratio(seen)}x"
                                     if seen is not None else "")
            + f". {unmatched} unmatched ({len(result.only_a)} only in A, "
            f"{len(result.only_b)} only in B)")
    line += "\n" + defined("p (BH)", "power")
    if result.timed_otherwise:
        line += f"\n{result.timed_otherwise} unmatched: {TIMED_OTHERWISE}"
    if result.count(SHIFT_ONLY):
        line += (f"\n{result.count(SHIFT_ONLY)} shift only: an imported run holds the figures "
                 "its tool printed, no samples, so there is no p-value and no interval; the "
                 "change is B/A - 1 of the printed figures")
    if result.count(INCONCLUSIVE):
        line += f"\n{result.count(INCONCLUSIVE)} inconclusive: {REMEDY}"
    lone = sum(c.method == LONE_STATE for c in result.changes)
    if lone:
        line += (f"\n{lone} undetermined as a lone state: one side lies 1.5x or more from the "
                 "other and from every earlier command of its configuration, alike at most "
                 "sizes, as a command wholly in another state of the host does, or a change "
                 "seen once; a second command at its level makes it a change")
    if result.count(UNDETERMINED) and live:
        line += (f"\n{result.count(UNDETERMINED)} undetermined: two commands carry the "
                 "variation between commands; measure A and B side by side, alternated in one "
                 f"command until each case is decided: {live}")
    regressions = len(result.regressions)
    if regressions:
        line += (f"\n{regressions} case(s) slower by more than the threshold "
                 f"{result.threshold.fraction:.0%}")
    return line


def testcases(result: Comparison) -> list[Testcase]:
    """One per matched case, as JUnit and the exit status read them; a regression failing,
    with the shift, its interval and p."""
    cases = []
    for c in result.changes:
        row = dict(zip(HEADER, _row(c)))
        figures = (f"{row['change']} (interval {row['interval']}), p (BH) {row['p (BH)']}, "
                   f"A {row['A us']} us, B {row['B us']} us, launches {row['launches']}")
        cases.append(Testcase(c.case.get("kernel", ""), names.identity(c.case), c.claim.word,
                              f"{c.claim.word}: {figures}", c.claim.failing))
    return cases


def junit(cases: list[Testcase], fail_on: str | None = None) -> str:
    """JUnit XML for CI (the verdict core's writer)."""
    return claims_junit("commscope compare", cases, fail_on)
