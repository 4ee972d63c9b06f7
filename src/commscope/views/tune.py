"""`commscope tune` in the terminal: per collective, np and size, the default's time, the
fastest algorithm against it, and the choice; `--verify`: the rules against the default."""

from __future__ import annotations

from .. import units
from ..sizes import format_bytes
from ..tune import ALPHA, Check, Point
from .junit import Case, suite
from .tables import Table

HEADER = ("collective", "np", "size", "launches", "default us", "fastest", "its ratio",
          "95% CI", "p (BH)", "choice", "gain")
VERIFY = ("collective", "np", "size", "launches", "default us", "rules us", "ratio", "95% CI",
          "p (BH)", "verdict")


def _ci(ci) -> str:
    return "-" if ci is None else f"{units.ratio(ci[0])} to {units.ratio(ci[1])}"


def _row(p: Point) -> tuple[str, ...]:
    best = min(p.options, key=lambda o: o.ratio)
    return (p.kernel, str(p.np), format_bytes(p.bytes), str(p.launches), units.us(p.default_s),
            best.algorithm, units.ratio(best.ratio), _ci(best.ci),
            "-" if best.p_value is None else units.p_value(best.p_value),
            p.choice or "(default)", units.percent(p.gain))


def render(points: list[Point], written: list[str], use: str) -> str:
    lines = [Table(HEADER, [_row(p) for p in points], align="lrrrrlrrrlr", rule=True).text()]
    changed = sum(p.choice is not None for p in points)
    lines.append(f"{changed} of {len(points)} points choose an algorithm other than the "
                 f"library's (ratio: the algorithm's time over the default's, launch medians "
                 f"paired by launch; chosen: BH-adjusted one-sided p < {units.p_value(ALPHA)} "
                 "and the whole interval below 1; the rest keep the library's choice)")
    blocked = [p for p in points if p.unwritable]
    if blocked:
        lines.append("faster beyond doubt but not in the file, whose format cannot name them "
                     "(docs/tune.md, Formats): " + ", ".join(
                         f"{p.kernel} {p.unwritable} at {format_bytes(p.bytes)} np{p.np}"
                         for p in blocked))
    lines += [f"wrote {path}" for path in written]
    lines.append(f"use it: {use}")
    return "\n".join(lines)


def _word(c: Check) -> str:
    return "SLOWER" if c.slower else "faster" if c.ci and c.ci[1] < 1 else "within noise" \
        if c.ci else "inconclusive"


def _verify_row(c: Check) -> tuple[str, ...]:
    word = _word(c)
    return (c.kernel, str(c.np), format_bytes(c.bytes), str(c.launches), units.us(c.default_s),
            units.us(c.rules_s), units.ratio(c.ratio), _ci(c.ci),
            "-" if c.p_value is None else units.p_value(c.p_value), word)


def render_verify(checks: list[Check], path: str) -> str:
    lines = [Table(VERIFY, [_verify_row(c) for c in checks], align="lrrrrrrrrl",
                   rule=True).text()]
    slower = [c for c in checks if c.slower]
    worst = max((c.ci[1] for c in checks if c.ci), default=None)
    lines.append(f"{path}: {len(slower)} of {len(checks)} points slower than the default "
                 f"beyond noise (ratio: rules over default, launch k of each paired); the "
                 f"highest upper bound of an interval: {units.ratio(worst)}")
    return "\n".join(lines)


def junit(checks: list[Check]) -> str:
    """`tune --verify` as JUnit XML: a testcase per (collective, np, size); rules slower
    than the default beyond noise are a failure, with the ratio, its interval and p."""
    cases = []
    for c in checks:
        row = dict(zip(VERIFY, _verify_row(c)))
        figures = (f"rules/default {row['ratio']} (95% CI {row['95% CI']}), p (BH) "
                   f"{row['p (BH)']}, default {row['default us']} us, rules {row['rules us']} us")
        cases.append(Case(c.kernel, f"{c.kernel} np{c.np} {format_bytes(c.bytes)}",
                          failure=f"slower: {figures}" if c.slower else None, kind="slower",
                          output=f"{_word(c)}: {figures}"))
    return suite("commscope tune --verify", cases)
