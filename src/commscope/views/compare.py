"""`commscope compare` in the terminal: the changed cases, and one summary line."""

from __future__ import annotations

from ..stats.verdict import (ALPHA, INCONCLUSIVE, SHIFT_ONLY, UNDETERMINED, VERB_WORDS, Testcase,
                             detectable, more_launches)
from ..stats.verdict import junit as claims_junit
from ..store import names
from ..system import units
from .glossary import defined
from .tables import Table

WORDS = VERB_WORDS["compare"]

HEADER = ("case", "launches", "A us", "B us", "change", "interval", "p (BH)", "verdict")
# Why cases that differ only in `sample` are not compared, and what to do.
TIMED_OTHERWISE = ("the same case timed as batches of back-to-back calls on one side (stored "
                   "before collectives were timed one call from a barrier) and per call on "
                   "the other; measure the older side again to compare them")
REMEDY = (f"one launch a side cannot separate a change from launch noise: "
          f"{more_launches('compare')}, or keep earlier runs of the case on these hosts in "
          "the results file as its history")


def _row(c) -> tuple[str, ...]:
    claim = c.claim
    return (names.identity(c.case), f"{c.launches_a}/{c.launches_b}", units.us(c.median_a_s),
            units.us(c.median_b_s), c.change(), c.interval(),
            "-" if claim.p is None else units.p_value(claim.p), claim.word)


def _values(values: list, what: str) -> str:
    if what == "MPI":
        return ", ".join(names.library(v) for v in values)
    return ", ".join(" ".join(f"{k}={v}" for k, v in x.items()) or "none" for x in values)


def differ_lines(result) -> list[str]:
    """What differs between A and B beyond their cases, said before anything else: a
    compare across two MPIs or two builds is read as one."""
    return [f"A and B differ in {what}: A {_values(a, what)}; B {_values(b, what)}"
            for what, a, b in result.differ]


def render(result, everything: bool, live: str | None = None) -> str:
    """What differs between A and B beyond their cases; the changes that matter (every
    matched case with `everything`, and the unmatched ones); then the summary line."""
    lines = differ_lines(result)
    shown = [c for c in result.changes if everything or c.claim.word != WORDS.under]
    if shown:
        lines.append(Table(HEADER, [_row(c) for c in shown], align="l", rule=True).text())
    if everything:
        for side, unmatched in (("A", result.only_a), ("B", result.only_b)):
            lines += [f"only in {side}: {names.identity(ident)}" for ident in unmatched]
    return "\n".join(lines + [summary(result, live)])


def summary(result, live: str | None = None) -> str:
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
    if result.seen_states:
        line += (f"\n{result.seen_states} undetermined as a seen state: the shift is no larger "
                 "than the earlier commands of its configuration differ with nothing changed, "
                 "or than A's or B's own launches where they spread beyond the history's "
                 "(the machine's states)")
    lone = result.lone_states
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


def junit(cases: list[Testcase], fail_on: str | None = None) -> str:
    """JUnit XML for CI (the verdict core's writer)."""
    return claims_junit("commscope compare", cases, fail_on)
