"""`commscope check` in the terminal and as JUnit XML: each guideline's claim at each process
count and size (the verdict core's words and figures), and what to change where one is
violated."""

from __future__ import annotations

from ..stats.verdict import (ALPHA, INCONCLUSIVE, NEGLIGIBLE, PAIRED, TERMS, VERB_WORDS,
                             Claim, apart_words, footer, legend)
from ..stats.verdict import junit as claims_junit
from ..stats.verdict import more_launches
from ..system import units
from ..system.sizes import format_bytes
from .tables import Table

WORDS = VERB_WORDS["check"]

HEADER = ("guideline", "case", "size", "launches", "left us", "right us", "ratio", "interval",
          "p (BH)", "verdict")
# check's own columns; the verdict core's terms follow them (verdict.TERMS)
COLUMNS = {
    "launches": "the launch pairs the ratio is over (those both times keep), or the fewer "
                "of the two sides' launches where they are two commands",
    "left us, right us": "each side's time per call as `results show RUN` gives its case "
                         "(over the launches it keeps: one in another state or stalled is "
                         "left out, states.py), its 95% interval in --json (left_ci, "
                         "right_ci); monotony's right is the next larger size, split's k "
                         "calls of m/k",
    "npN": "N MPI processes",
    "ratio": f"left over right, {PAIRED}",
}


def _row(c: Claim) -> tuple[str, ...]:
    e = c.evidence
    return (e["id"], e["case"], format_bytes(e["bytes"]), str(c.launches),
            units.us(e["left_s"]), units.us(e["right_s"]), *c.cells())


def _barrier(found: list[Claim]) -> str:
    """What `below barrier` means, with the barrier times it was judged against."""
    times = sorted({c.evidence["barrier_s"] for c in found if c.evidence.get("barrier_s")})
    span = "none recorded" if not times else f"{units.us(times[0])} us" if len(times) == 1 \
        else f"{units.us(times[0])} to {units.us(times[-1])} us"
    return (f"beyond the threshold by less than one barrier's time ({span}: the median over "
            "the launches compared of a barrier's median time), which no program would "
            "notice; it fails no gate")


FAMILIES = {"command": "each guideline a family, the guidelines selected together "
                       "(Benjamini-Bogomolov), so this command as a gate fails falsely at "
                       "most 5% of the time",
            "guideline": "each guideline a family on its own (--families guideline)"}


def render(result) -> str:
    """The verdicts of a check (checks.Checked), their footer, legend and remedies."""
    found = result.claims
    lines = [Table(HEADER, [_row(c) for c in found], align="l", rule=True).text(),
             footer(found, result.threshold, WORDS) + f" ({FAMILIES[result.families]})",
             legend({**COLUMNS, **TERMS, **apart_words(found, WORDS),
                     **({NEGLIGIBLE: _barrier(found)} if any(
                         c.word == NEGLIGIBLE for c in found) else {})})]
    assumed = sum(c.evidence.get("command_term") == "assumed" for c in found)
    if assumed:
        lines.append(f"{assumed} verdicts compare sides from two commands with no history "
                     "of their cases: the variance between commands is assumed as large "
                     "as the launches'; keep earlier runs of both sides in the results "
                     "file to learn it")
    states = sum("states_apart_p" in c.evidence for c in found)
    if states:
        lines.append(f"{states} undetermined, their interval beyond the threshold or not: "
                     "their two commands sit in different states (each command's offset "
                     f"from its case's earlier commands, an F test at p < {ALPHA:g}), which "
                     "no test of two commands tells from the guideline; check without "
                     "--runs measures both sides in the same launches, where a state cancels")
    if any(c.word == INCONCLUSIVE for c in found):
        lines.append("inconclusive: one launch leaves the launches' spread unknown; "
                     + more_launches("check"))
    lines += [f"remedy: {text}" for text in result.remedies]
    return "\n".join(lines)


def junit(found: list[Claim], fail_on: str | None = None) -> str:
    """One testcase per (guideline, series, size): a violation a failure, undetermined or
    inconclusive skipped (failures with `fail_on` "undetermined")."""
    return claims_junit("commscope check", found, fail_on)

