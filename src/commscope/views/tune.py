"""`commscope tune` in the terminal: per collective, np and size, the default's time, the
fastest algorithm against it, and the choice; `--verify`: the rules against the default."""

from __future__ import annotations

from ..system import units
from ..system.sizes import format_bytes
from ..stats.verdict import (PAIRED, TERMS, VERB_WORDS, Claim, Threshold, apart_words,
                             detectable, footer, legend)
from ..stats.verdict import junit as claims_junit
from .tables import Table

VERIFY_WORDS = VERB_WORDS["tune-verify"]

HEADER = ("collective", "np", "size", "launches", "default us", "fastest", "its us",
          "its ratio", "interval", "p (BH)", "choice", "gain")
VERIFY = ("collective", "np", "size", "launches", "default us", "rules us", "ratio", "interval",
          "p (BH)", "verdict")
# Each table's own columns; the verdict core's terms follow them (verdict.TERMS).
TIMES = ("each side's median per call as `results show` gives its case (over the launches "
         "it keeps: one in another state or stalled is left out, states.py)")
COLUMNS = {
    "np": "MPI processes",
    "launches": "those the default's time keeps",
    "default us, its us": f"{TIMES}: the library's default, the fastest algorithm",
    "its ratio": f"the fastest algorithm's time over the default's: {PAIRED}",
    "gain": "how much less time the choice takes than the default, corrected for the "
            "choice (not the luckiest draw)",
}
VERIFY_COLUMNS = {
    "np": COLUMNS["np"],
    "launches": "the launch pairs the ratio is over (those both times keep)",
    "default us, rules us": f"{TIMES}, over both runs of the side; their 95% intervals in "
                            "--json (default_ci, rules_ci)",
    "ratio": f"rules over default, launch k of each pair of runs paired: {PAIRED}",
}


def _ci(ci) -> str:
    return "-" if ci is None else f"{units.ratio(ci[0])} to {units.ratio(ci[1])}"


def _row(p) -> tuple[str, ...]:
    best = min(p.options, key=lambda o: o.ratio)
    return (p.kernel, str(p.np), format_bytes(p.bytes), str(p.launches), units.us(p.default_s),
            best.algorithm, units.us(best.time_s), units.ratio(best.ratio), _ci(best.ci),
            "-" if best.claim.p is None else units.p_value(best.claim.p),
            p.choice or "(default)", units.percent(p.gain))


def _blind(points: list) -> str:
    """The median least gain the command chose with 80% power: what it was blind below
    (the claims' detectable ratio, the default's time over an algorithm's, as a gain)."""
    seen = detectable(o.claim.detectable for p in points for o in p.options)
    return "" if seen is None else \
        f"; the smallest gain these launches detect (80% power): {units.percent(1 - 1 / seen)}"


def render(points: list, written: list[str], use: str, min_gain: Threshold) -> str:
    lines = [Table(HEADER, [_row(p) for p in points], align="lrrrrlrrrrlr", rule=True).text()]
    changed = sum(p.choice is not None for p in points)
    lines.append(f"{changed} of {len(points)} points choose an algorithm other than the "
                 f"library's (chosen: faster by more than the least gain {min_gain}, at a "
                 "false discovery rate of 0.05 per collective and np; the rest keep the "
                 f"library's choice){_blind(points)}")
    lines.append(legend({**COLUMNS, **TERMS}))
    blocked = [p for p in points if p.unwritable]
    if blocked:
        lines.append("faster beyond doubt but not in the file, whose format cannot name them "
                     "(docs/tune.md, Formats): " + ", ".join(
                         f"{p.kernel} {p.unwritable} at {format_bytes(p.bytes)} np{p.np}"
                         for p in blocked))
    lines += [f"wrote {path}" for path in written]
    lines.append(f"use it: {use}")
    return "\n".join(lines)


def _verify_row(c: Claim) -> tuple[str, ...]:
    e = c.evidence
    return (e["collective"], str(e["np"]), format_bytes(e["bytes"]), str(c.launches),
            units.us(e["default_s"]), units.us(e["rules_s"]), *c.cells())


def render_verify(checks: list[Claim], path: str, min_gain: Threshold) -> str:
    lines = [Table(VERIFY, [_verify_row(c) for c in checks], align="lrrrrrrrrl",
                   rule=True).text(),
             f"{path}: " + footer(checks, min_gain, VERIFY_WORDS) + " (each collective and "
             "np a family)",
             legend({**VERIFY_COLUMNS, **TERMS, **apart_words(checks, VERIFY_WORDS)})]
    return "\n".join(lines)


def junit(checks: list[Claim], fail_on: str | None = None) -> str:
    """`tune --verify` as JUnit XML: a testcase per (collective, np, size); rules slower
    than the default by more than the least gain a failure, undetermined skipped (failures
    with `fail_on` "undetermined")."""
    return claims_junit("commscope tune --verify", checks, fail_on)
