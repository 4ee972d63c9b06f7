"""`commscope check` in the terminal and as JUnit XML: each guideline's verdict at each
process count and size, and what to change where one is violated."""

from __future__ import annotations

from .. import units
from ..guidelines import Guideline, remedy
from ..sizes import format_bytes
from ..verdicts import ALPHA, Verdict
from .junit import Case, suite
from .tables import Table

HEADER = ("guideline", "case", "size", "launches", "left us", "ratio", "95% CI", "p (BH)",
          "verdict")
VERDICTS = ("violated", "holds", "within noise", "inconclusive")


def _ci(v: Verdict) -> str:
    return "-" if v.ci is None else f"{units.ratio(v.ci[0])} to {units.ratio(v.ci[1])}"


def _row(v: Verdict) -> tuple[str, ...]:
    mark = " (under a barrier)" if v.below_barrier else ""
    return (v.id, v.case, format_bytes(v.bytes), str(v.launches), units.us(v.left_s),
            units.ratio(v.ratio), _ci(v), "-" if v.p_value is None else units.p_value(v.p_value),
            v.verdict + mark)


def _where(found: list[Verdict]) -> str:
    sizes = sorted({v.bytes for v in found})
    span = format_bytes(sizes[0]) if len(sizes) == 1 else \
        f"{format_bytes(sizes[0])} to {format_bytes(sizes[-1])}"
    return f"at {span} ({', '.join(sorted({v.case for v in found}))})"


def remedies(verdicts: list[Verdict], guidelines: list[Guideline],
             family: str | None) -> list[str]:
    by_id = {g.id: g for g in guidelines}
    violated: dict[str, list[Verdict]] = {}
    for v in verdicts:
        if v.verdict == "violated":
            violated.setdefault(v.id, []).append(v)
    return [remedy(by_id[gid], _where(found), family) for gid, found in violated.items()]


def render(verdicts: list[Verdict], guidelines: list[Guideline], threshold: float,
           family: str | None) -> str:
    lines = [Table(HEADER, [_row(v) for v in verdicts], align="l", rule=True).text()]
    counts = ", ".join(f"{sum(v.verdict == w for v in verdicts)} {w}" for w in VERDICTS)
    lines.append(f"{len(verdicts)} verdicts: {counts} (ratio: left over right on launch "
                 f"medians; violated: BH-adjusted one-sided p < {units.p_value(ALPHA)} and the "
                 f"whole interval above 1 + {units.percent(threshold, decimals=None)})")
    if any(v.verdict == "inconclusive" for v in verdicts):
        lines.append("inconclusive: one launch leaves the launches' spread unknown; measure "
                     "in 3 or more (--launches 3, or the default auto)")
    lines += [f"remedy: {text}" for text in remedies(verdicts, guidelines, family)]
    return "\n".join(lines)


def junit(verdicts: list[Verdict]) -> str:
    """One testcase per (guideline, series, size); a violation is a failure."""
    return suite("commscope check", [
        Case(v.id, f"{v.case} {format_bytes(v.bytes)}",
             failure=(f"ratio {units.ratio(v.ratio)} (95% CI {_ci(v)}), p "
                      f"{units.p_value(v.p_value)}") if v.verdict == "violated" else None,
             output=v.verdict if v.verdict != "holds" else None)
        for v in verdicts])
