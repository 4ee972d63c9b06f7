"""`commscope compare` in the terminal: the changed cases, and one summary line."""

from __future__ import annotations

from .. import names, units
from ..compare import ALPHA, CaseChange, Comparison
from .junit import Case, suite
from .tables import Table

HEADER = ("case", "launches", "A us", "B us", "change", "95% CI", "p (BH)", "verdict")
# Why cases that differ only in `sample` are not compared, and what to do.
TIMED_OTHERWISE = ("the same case timed as batches of back-to-back calls on one side (stored "
                   "before collectives were timed one call from a barrier) and per call on "
                   "the other; measure the older side again to compare them")
REMEDY = ("one launch a side cannot separate a change from launch noise: measure each side "
          "in 3 or more launches (--launches 3, the default auto), or keep earlier runs of "
          "the case on these hosts in the results file as its history")


def _row(c: CaseChange) -> tuple[str, ...]:
    ci = "-" if c.relative_ci_low is None else \
        f"{units.percent(c.relative_ci_low, True)} to {units.percent(c.relative_ci_high, True)}"
    return (names.identity(c.case), f"{c.launches_a}/{c.launches_b}", units.us(c.median_a_s),
            units.us(c.median_b_s), units.percent(c.relative, signed=True), ci,
            "-" if c.p_adjusted is None else units.p_value(c.p_adjusted), c.verdict)


def render(result: Comparison, everything: bool) -> str:
    """The changes that matter (every matched case with `everything`, and the unmatched
    ones), then the summary line."""
    lines = []
    shown = [c for c in result.changes if everything or c.verdict not in ("no change",
                                                                          "within noise")]
    if shown:
        lines.append(Table(HEADER, [_row(c) for c in shown], align="l", rule=True).text())
    if everything:
        for side, unmatched in (("A", result.only_a), ("B", result.only_b)):
            lines += [f"only in {side}: {names.identity(ident)}" for ident in unmatched]
    return "\n".join(lines + [summary(result)])


def summary(result: Comparison) -> str:
    counts = ", ".join(f"{result.count(v)} {v}" for v in ("regression", "slower", "faster",
                                                          "no change", "within noise",
                                                          "inconclusive", "shift only"))
    unmatched = len(result.only_a) + len(result.only_b)
    threshold = units.percent(result.threshold, decimals=None)
    line = (f"{len(result.changes)} matched cases: {counts} (tested on launch medians; "
            f"BH-adjusted p < {units.p_value(ALPHA)}; regression: slower with the whole "
            f"interval beyond {threshold}); {unmatched} unmatched ({len(result.only_a)} only in "
            f"A, {len(result.only_b)} only in B)")
    if result.timed_otherwise:
        line += f"\n{result.timed_otherwise} unmatched: {TIMED_OTHERWISE}"
    if result.count("shift only"):
        line += (f"\n{result.count('shift only')} shift only: an imported run holds the figures "
                 "its tool printed, no samples, so there is no p-value and no interval; the "
                 "change is B/A - 1 of the printed figures")
    if result.count("inconclusive"):
        line += f"\n{result.count('inconclusive')} inconclusive: {REMEDY}"
    regressions = len(result.regressions)
    if regressions:
        line += f"\n{regressions} case(s) slower by more than the threshold {threshold}"
    return line


def junit(result: Comparison) -> str:
    """JUnit XML for CI: one testcase per matched case; a regression is a failure whose
    message gives the shift, its interval and the p-value; every other verdict passes
    with its word (within noise, inconclusive, ...) in its output."""
    cases = []
    for c in result.changes:
        row = dict(zip(HEADER, _row(c)))
        figures = (f"{row['change']} (95% CI {row['95% CI']}), p (BH) {row['p (BH)']}, "
                   f"A {row['A us']} us, B {row['B us']} us, launches {row['launches']}")
        cases.append(Case(c.case.get("kernel", ""), names.identity(c.case),
                          failure=f"regression: {figures}" if c.regression else None,
                          kind="regression", output=f"{c.verdict}: {figures}"))
    return suite("commscope compare", cases)
