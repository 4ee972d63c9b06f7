"""`commscope compare` in the terminal: the changed cases, and one summary line."""

from __future__ import annotations

from .. import names, units
from ..compare import ALPHA, CaseChange, Comparison
from .tables import Table

HEADER = ("case", "A us", "B us", "shift us", "95% CI us", "relative", "p (BH)")


def _row(c: CaseChange) -> tuple[str, ...]:
    ci = "-" if c.shift_ci_low_s is None else \
        f"{units.us(c.shift_ci_low_s, True)} to {units.us(c.shift_ci_high_s, True)}"
    mark = "" if c.change == "none" else f" {c.change}"
    return (names.identity(c.case), units.us(c.median_a_s), units.us(c.median_b_s),
            units.us(c.shift_s, True), ci, units.percent(c.relative, signed=True) + mark,
            units.p_value(c.p_adjusted))


def render(result: Comparison, everything: bool) -> str:
    """The significant changes (every matched case with `everything`, and the unmatched
    ones), then the summary line."""
    lines = []
    shown = [c for c in result.changes if everything or c.change != "none"]
    if shown:
        lines.append(Table(HEADER, [_row(c) for c in shown], align="l", rule=True).text())
    if everything:
        for side, unmatched in (("A", result.only_a), ("B", result.only_b)):
            lines += [f"only in {side}: {names.identity(ident)}" for ident in unmatched]
    return "\n".join(lines + [summary(result)])


def summary(result: Comparison) -> str:
    matched = len(result.changes)
    faster, slower = result.count("faster"), result.count("slower")
    unmatched = len(result.only_a) + len(result.only_b)
    line = (f"{matched} matched cases: {faster} faster, {slower} slower, "
            f"{matched - faster - slower} without significant change "
            f"(BH-adjusted p < {ALPHA:g} and shift CI excluding 0); {unmatched} unmatched "
            f"({len(result.only_a)} only in A, {len(result.only_b)} only in B)")
    regressions = len(result.regressions)
    if regressions:
        line += (f"\n{regressions} case(s) slower by more than the threshold "
                 f"{result.threshold * 100:g}%")
    return line
