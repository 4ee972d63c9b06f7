"""What a verdict says, in one shape for every verb: the claim (what, where, estimate,
interval, p, word, evidence, remedy), its words and their meaning to a gate, and its one
serialisation (a table row, a JSON item, a JUnit testcase), and the exit status a gate
reads from them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from xml.etree import ElementTree

from ...system import units
from .inference import Decided, Estimate, decide, moderate, selected_levels
from ..stats import ALPHA
from .threshold import Threshold

UNDETERMINED = "undetermined"  # tested, but the interval spans the threshold
INCONCLUSIVE = "inconclusive"  # untested: too few launches to know the spread
NEGLIGIBLE = "below barrier"  # beyond the threshold by less than one barrier's time
SHIFT_ONLY = "shift only"  # of printed figures (an imported side): no samples, so no test
UNDECIDED_WORDS = (UNDETERMINED, INCONCLUSIVE)  # could not tell: no gate passes them
# Exit statuses of a verb that judges; 2, a mistake in the command, is the CLI's own.
PASSED, FAILED, UNDECIDED = 0, 1, 3
FAIL_ON = (UNDETERMINED,)  # --fail-on: the undecided words a gate may fail on instead


@dataclass(frozen=True)
class Words:
    """A verb's words for the outcomes: `over` the threshold (a gate's failure), `under`
    it (holds, no change, cleared), significantly slower or faster within it;
    `equivalence`: `under` needs the ratio within the bound both ways (compare)."""
    over: str
    under: str
    slower: str = "slower"
    faster: str = "faster"
    equivalence: bool = False

    def __post_init__(self):
        if len(set(self.all())) < len(self.all()):  # a failing word read as a passing one
            raise ValueError(f"words must differ: {self.all()}")

    def word(self, d: Decided, log_ratio: float) -> str:
        if d.outcome == "untested":
            return INCONCLUSIVE
        if d.outcome == "apart":
            return self.slower if log_ratio > 0 else self.faster
        return {"over": self.over, "under": self.under}.get(d.outcome, UNDETERMINED)

    def all(self) -> tuple[str, ...]:
        return (self.over, self.slower, self.faster, NEGLIGIBLE, self.under, UNDETERMINED,
                INCONCLUSIVE)


# Each judging verb's words, here so that its view reads them where its verb writes them.
VERB_WORDS = {
    "check": Words("violated", "holds"),
    "compare": Words("regression", "no change", equivalence=True),
    "tune-verify": Words("inferior", "non-inferior"),
    # an algorithm against the default, its claim's ratio the default's time over its own:
    # faster by more than the least gain, not by that much, significantly faster within it
    "tune": Words("faster", "no gain", slower="faster within the gain", faster="slower"),
    "health": Words(over="suspect", under="cleared"),
}


@dataclass(frozen=True)
class Claim:
    family: str  # the comparisons adjusted together (docs/statistics.md, "Verdicts")
    subject: str  # what is judged, in words
    ratio: float  # the bad side's time over the other's (a geometric mean of launches)
    interval: tuple[float, float] | None  # of the ratio; FCR-adjusted where named
    p: float | None  # the word's test, BH-adjusted over the family
    word: str
    launches: int
    paired: bool
    detectable: float | None  # the smallest ratio this test detects with 80% power
    failing: bool  # the word a gate fails on
    evidence: dict = field(default_factory=dict)  # the verb's figures, JSON-ready
    remedy: str | None = None
    # What a choice among claims corrects its estimate with (tune's winner's curse): the log
    # ratio's standard error as tested, and the log ratio `over` named beyond (Family.cut);
    # None where untested.
    se: float | None = None
    cut: float | None = None
    # Where nothing could be measured: what was seen instead (a pair that cannot talk, a
    # node that answers none), which figures() gives
    seen: str | None = None

    def interval_text(self) -> str:
        return "-" if self.interval is None else \
            f"{units.ratio(self.interval[0])} to {units.ratio(self.interval[1])}"

    def cells(self) -> tuple[str, ...]:
        """ratio, interval, p and word, as every verdict table shows them."""
        return (units.ratio(self.ratio), self.interval_text(),
                "-" if self.p is None else units.p_value(self.p), self.word)

    def as_dict(self) -> dict:
        return {"family": self.family, "subject": self.subject, "ratio": self.ratio,
                "ci": list(self.interval) if self.interval else None, "p_value": self.p,
                "verdict": self.word, "launches": self.launches, "paired": self.paired,
                "detectable_ratio": self.detectable, "failing": self.failing,
                **self.evidence, **({"remedy": self.remedy} if self.remedy else {})}

    def figures(self) -> str:
        if self.seen is not None:
            return self.seen
        return (f"ratio {units.ratio(self.ratio)} (interval {self.interval_text()}), p "
                f"{'-' if self.p is None else units.p_value(self.p)}, launches "
                f"{self.launches}")


def unmeasured(family: str, subject: str) -> Claim:
    """The claim where nothing was measured to compare: inconclusive, no figures, and no
    gate fails on it."""
    return Claim(family, subject, math.nan, None, None, INCONCLUSIVE, 0, True, None, False)


def failed(family: str, subject: str, word: str, seen: str, remedy: str | None = None,
           failing: bool = True) -> Claim:
    """The claim where what is judged failed before anything could be measured (a pair
    that cannot talk, a node that answers none): no figures, what was seen, the verb's own
    word; a gate fails on it unless the verb passes it (`failing`)."""
    return Claim(family, subject, math.nan, None, None, word, 0, True, None, failing,
                 remedy=remedy, seen=seen)


def claims(found: list[Estimate], families: list[str], subjects: list[str],
           threshold: Threshold, words: Words, evidence: list[dict] | None = None,
           negligible: list[bool] | None = None, alpha: float = ALPHA,
           together: bool = False) -> list[Claim]:
    """Every estimate's claim: variances moderated over all of them (one command's
    comparisons), then each family decided on its own. `negligible[i]`: the difference is
    below one barrier's time, so a claim over the threshold says so and fails no gate.
    `alpha`: each test's level (a group-sequential look's: tests.sequential_level).
    `together`: the command is the gate, so the families are selected together before
    any names (tests.selected_levels); else each family names at alpha."""
    found = moderate(found)
    levels, missed = selected_levels(found, families, threshold.log, alpha) if together \
        else ({}, None)
    decided: list[Decided | None] = [None] * len(found)
    for family in dict.fromkeys(families):
        members = [i for i, f in enumerate(families) if f == family]
        for i, d in zip(members, decide([found[i] for i in members], threshold.log,
                                        words.equivalence, alpha, levels.get(family), missed)):
            decided[i] = d
    out = []
    for i, (e, d) in enumerate(zip(found, decided)):
        word = words.word(d, e.log_ratio)
        if word == words.over and negligible and negligible[i]:
            word = NEGLIGIBLE
        out.append(Claim(families[i], subjects[i], math.exp(e.log_ratio), d.interval, d.p,
                         word, e.launches, e.paired, d.detectable, word == words.over,
                         evidence[i] if evidence else {},
                         se=None if d.cut is None else e.se, cut=d.cut))
    return out


def detectable(values) -> float | None:
    """The median of the smallest detectable ratios of the comparisons tested (None:
    untested): what a gate was blind below."""
    values = sorted(v for v in values if v is not None)
    return values[len(values) // 2] if values else None


# What a ratio of two sides measured in the same launches is (checks.estimate), in the words
# of every table that prints one.
PAIRED = ("the ratio of the two times; where both ran in the same launches its interval is "
          "of the launches' ratios (launch k of one side over launch k of the other, over "
          "the launches both times keep), so a launch slow as a whole cancels out of it")
# The abbreviations every verdict table prints, defined once; a verb's legend adds its own
# columns (views/check.py, views/tune.py).
TERMS = {
    "interval": "the ratio's interval at the level of the test that gave its word, so the "
                "two agree: of a claim named (beyond or within the threshold, or apart from "
                "1), its false-coverage-rate interval (Benjamini & Yekutieli 2005); of one "
                "undetermined, the wider interval at the level it missed, which holds the "
                "threshold",
    "p (BH)": "the p-value of the verdict's test at the threshold, Benjamini-Hochberg "
              "adjusted over its family",
    "80% power": "a change that large is found in 80% of commands",
}


def legend(terms: dict[str, str]) -> str:
    """Terms as one line each: `name: meaning`."""
    return "\n".join(f"{name}: {meaning}" for name, meaning in terms.items())


def apart_words(found: list[Claim], words: Words) -> dict[str, str]:
    """What the words of a difference within the threshold mean, those the verdicts use
    (footer() gives the others)."""
    test = "(a two-sided test of no difference, BH-adjusted p below 0.05)"
    meaning = {words.slower: f"slower beyond doubt {test}, but within the threshold",
               words.faster: f"faster beyond doubt {test}"}
    return {w: m for w, m in meaning.items() if any(c.word == w for c in found)}


def footer(found: list[Claim], threshold: Threshold, words: Words) -> str:
    """One line under every verdict table: the counts by word, the test, the family and
    what the command could have seen."""
    counts = ", ".join(f"{sum(c.word == w for c in found)} {w}" for w in words.all()
                       if any(c.word == w for c in found) or w in (words.over, words.under))
    seen = detectable(c.detectable for c in found)
    blind = "" if seen is None else \
        f"; the smallest change these launches detect (80% power): {units.ratio(seen)}x"
    return (f"{len(found)} verdicts: {counts}. Threshold {threshold}; {words.over}: above it, "
            f"{words.under}: below it, each at a false discovery rate of {ALPHA:g} per "
            f"family; {UNDETERMINED}: the interval spans the threshold{blind}")


@dataclass(frozen=True)
class Testcase:
    """One verdict as JUnit sees it (claims give theirs; compare's cases theirs)."""
    classname: str
    name: str
    word: str
    text: str  # the word and its figures
    failing: bool

    @property
    def undecided(self) -> bool:
        return self.word in UNDECIDED_WORDS

    def fails(self, fail_on: str | None) -> bool:
        return self.failing or (fail_on == UNDETERMINED and self.undecided)


def testcase(c: Claim | Testcase) -> Testcase:
    return c if isinstance(c, Testcase) else Testcase(
        c.family, c.subject, c.word, f"{c.word}: {c.figures()}"
        + (f"; {c.remedy}" if c.remedy else ""), c.failing)


def gate(failed: bool, undecided: bool, fail_on: str | None = None) -> int:
    """The exit status of every verb that judges (docs/usage.md, "Exit status"): FAILED
    where a gate-failing word is given, else UNDECIDED where any verdict could not be
    told (undetermined or inconclusive; FAILED with `fail_on` "undetermined"), else
    PASSED. Any, not all, undecided: a gate that passed a change it could not see would
    pass more on a noisier machine, and one clear case beside ten undecided ones would
    open it."""
    if failed or (undecided and fail_on == UNDETERMINED):
        return FAILED
    return UNDECIDED if undecided else PASSED


def exit_status(found: list[Claim | Testcase], fail_on: str | None = None) -> int:
    """gate() over a verb's verdicts, the same ones its JUnit file holds."""
    cases = [testcase(c) for c in found]
    return gate(any(c.failing for c in cases), any(c.undecided for c in cases), fail_on)


def junit(name: str, found: list[Claim | Testcase], fail_on: str | None = None) -> str:
    """JUnit XML, the one writer: a testcase per verdict; a failing word a failure with
    its figures, an undetermined or inconclusive one skipped (never passed: a noisier
    machine must not pass more gates; a failure with `fail_on` "undetermined"), any
    other its word in system-out."""
    cases = [testcase(c) for c in found]
    root = ElementTree.Element("testsuite", name=name, tests=str(len(cases)),
                               failures=str(sum(c.fails(fail_on) for c in cases)),
                               skipped=str(sum(c.undecided and not c.fails(fail_on)
                                               for c in cases)))
    for c in cases:
        case = ElementTree.SubElement(root, "testcase", classname=c.classname, name=c.name)
        if c.fails(fail_on):
            ElementTree.SubElement(case, "failure", message=c.text, type=c.word)
        elif c.undecided:
            ElementTree.SubElement(case, "skipped", message=c.text)
        else:
            ElementTree.SubElement(case, "system-out").text = c.text
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True)
