"""Compare two sets of runs case by case, with the launch as the unit: what got faster,
what got slower, by how much, and what cannot be told from launch noise.

Cases are matched by their identity (cases.identity) less the MPI and the labels, which a
compare names where they differ. Each side of a case is its one figure over the side's
runs (figures.read.measured: the launches in another state left out, states.py), whose
kept launch medians on the log scale carry its spread, and each side is one command: the
shift is the ratio of the two figures, its variance the launches' (pooled over the sides
with two or more launches) over their counts, plus twice the variance between commands
(the history's, learned robustly from the case's earlier commands of the same
configuration, or assumed equal to the launches'). A shift no larger than the states the
history has shown (seen_states), or a side alone in another state (lone_state), is
undetermined. The verdict core (commscope.stats.verdict)
tests each case at the threshold, all matched cases one family: `regression` rejects "B
no more than the threshold slower", `no change` rejects "B beyond the threshold either
way" (two one-sided tests). See docs/compare.md.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..figures.read import measured
from ..store.cases import Case, key
from ..stats.replication import LEVEL_GAP, History, Spread, case_spread
from ..stats.stats import Z
from ..stats.summary import CaseSummary, of_medians
from ..stats.verdict import (ALPHA, SHIFT_ONLY, UNDETERMINED, VERB_WORDS, Claim, Estimate,
                             Testcase, Threshold, claims, unmeasured, unpaired)
from ..store import names
from ..system import units
from ..stats.verdict.inference import UNUSUAL, moderated, unusual_p

WORDS = VERB_WORDS["compare"]


# What a compare matches cases by: their summary's identity less the MPI and the labels, in
# which A and B may differ (two builds, two libraries): a compare says so before its table.
UNMATCHED = ("mpi", "labels")


@dataclass(frozen=True)
class Side:
    """One side of a case: its summary (the figure `results show` gives over the side's
    runs) and the stored cases it was made of."""
    summary: CaseSummary
    cases: list[Case]

    @classmethod
    def of(cls, identity: dict, medians, cases=(), pilot: int | None = None,
           given: Spread | None = None) -> "Side":
        """A side of launch medians alone (simulated: bench/, tests)."""
        return cls(of_medians(medians, identity, pilot, given), list(cases))

    @property
    def identity(self) -> dict:
        return {k: v for k, v in self.summary.identity.items() if k not in UNMATCHED}

    @property
    def medians_s(self) -> np.ndarray:
        """The kept launches' medians (an imported side: its printed figure)."""
        s = self.summary
        return np.array(s.launch_medians_s if not s.imported else [s.median_s])

    @property
    def launches(self) -> int:
        return self.medians_s.size

    @property
    def logs(self) -> np.ndarray:
        return np.log(self.medians_s)

    @property
    def spread(self) -> Spread:
        """How far a launch's log median falls from the side's mean (replication.Spread):
        the run's, never below what the side's own launches showed. A verdict is not
        pulled below its own evidence, as the verdict core's moderation is not
        (verdict.inference.moderated); a run's interval may be (run_spreads)."""
        own = case_spread(self.logs, self.summary.pilot)
        given = self.summary.spread
        if given is None or self.launches < 2:
            return given or own
        return replace(given, var=max(given.var, own.var))


def sides(found: list[tuple[list[Case], CaseSummary]]) -> dict[str, Side]:
    """Each case of one side (figures.read.measured of its runs) by what a compare matches
    (UNMATCHED left out); a case without a figure has no side."""
    out = {}
    for cases, summary in found:
        if summary.measured:
            side = Side(summary, cases)
            out.setdefault(key(side.identity), side)
    return out


def differences(a: dict[str, Side], b: dict[str, Side]) -> list[str]:
    """What differs between the sides beyond what was compared: the MPI library and the
    labels of the runs, each side's values in words (names.library names an MPI)."""
    def values(side: dict[str, Side], name: str) -> list:
        return list(dict.fromkeys(json.dumps(getattr(s.summary, name), sort_keys=True)
                                  for s in side.values()))
    out = []
    for name, what in (("mpi", "MPI"), ("labels", "labels")):
        mine, theirs = values(a, name), values(b, name)
        if mine != theirs:
            out.append((what, [json.loads(v) for v in mine], [json.loads(v) for v in theirs]))
    return out


@dataclass(frozen=True)
class CaseChange:
    """One matched case, B against A, and its claim (the ratio B / A, its interval, p and
    word: the verdict core's). Times in seconds."""
    case: dict  # its identity (cases.identity)
    launches_a: int
    launches_b: int
    median_a_s: float  # the typical launch's median: exp(mean log launch median)
    median_b_s: float
    method: str  # student (commands' variance assumed as the launches'), student+history,
    # history (one launch a side), imported or none (inconclusive)
    df: float | None
    claim: Claim  # all matched cases one family; an imported side: shift only, untested

    def change(self) -> str:
        """B / A - 1, as the table and JUnit say it."""
        return units.percent(self.claim.ratio - 1, signed=True)

    def interval(self) -> str:
        i = self.claim.interval
        return "-" if i is None else \
            f"{units.percent(i[0] - 1, True)} to {units.percent(i[1] - 1, True)}"

    def figures(self) -> str:
        c = self.claim
        return (f"{self.change()} (interval {self.interval()}), p (BH) "
                f"{'-' if c.p is None else units.p_value(c.p)}, A {units.us(self.median_a_s)} "
                f"us, B {units.us(self.median_b_s)} us, launches "
                f"{self.launches_a}/{self.launches_b}")

    def as_dict(self, name) -> dict:
        """The case's JSON item (schema compare): `name` names the case (names.identity);
        the claim's ratio and interval as B / A - 1."""
        c = self.claim
        low, high = (c.interval[0] - 1, c.interval[1] - 1) if c.interval else (None, None)
        return {"case": name(self.case), "launches_a": self.launches_a,
                "launches_b": self.launches_b, "median_a_s": self.median_a_s,
                "median_b_s": self.median_b_s, "relative": c.ratio - 1,
                "relative_ci_low": low, "relative_ci_high": high, "method": self.method,
                "df": self.df if c.interval else None, "p_adjusted": c.p, "verdict": c.word,
                "regression": c.failing, "detectable_ratio": c.detectable, **self.case}


@dataclass(frozen=True)
class Comparison:
    """compare's one result: the matched cases' changes, the unmatched ones, the
    threshold, what differs between A and B beyond their cases ((what, A's values, B's
    values)), and the runs of each side; its table, JSON and JUnit are written from it."""
    changes: list[CaseChange]  # matched cases, in A's order
    only_a: list[dict]  # identities
    only_b: list[dict]
    threshold: Threshold
    differ: list = field(default_factory=list)
    a_runs: list[int] = field(default_factory=list)
    b_runs: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        """compare --json (urn:commscope:compare)."""
        return {"a_runs": self.a_runs, "b_runs": self.b_runs, "alpha": ALPHA,
                "threshold": self.threshold.fraction, "correction": "benjamini-hochberg",
                "cases": [c.as_dict(names.identity) for c in self.changes],
                "only_a": [dict(i, case=names.identity(i)) for i in self.only_a],
                "only_b": [dict(i, case=names.identity(i)) for i in self.only_b],
                "regressions": len(self.regressions)}

    def testcases(self) -> list[Testcase]:
        """One per matched case, as JUnit and the exit status read them; a regression
        failing, with the shift, its interval and p."""
        return [Testcase(c.case.get("kernel", ""), names.identity(c.case), c.claim.word,
                         f"{c.claim.word}: {c.figures()}", c.claim.failing)
                for c in self.changes]

    @property
    def seen_states(self) -> int:
        return sum(c.method == SEEN_STATE for c in self.changes)

    @property
    def lone_states(self) -> int:
        return sum(c.method == LONE_STATE for c in self.changes)

    @property
    def claims(self) -> list[Claim]:
        return [c.claim for c in self.changes]

    @property
    def regressions(self) -> list[CaseChange]:
        return [c for c in self.changes if c.claim.failing]

    def count(self, verdict: str) -> int:
        return sum(c.word == verdict for c in self.claims)

    @property
    def timed_otherwise(self) -> int:
        """How many unmatched cases differ from one of the other side only in what a sample
        is (cases.identity's `sample`): a collective stored before it was timed per call,
        against one after. Never matched: they measured different quantities."""
        def without(idents) -> list[str]:
            return [key({k: v for k, v in i.items() if k != "sample"}) for i in idents]
        matched = without(c.case for c in self.changes)
        a, b = without(self.only_a), without(self.only_b)
        return sum(k in b + matched for k in a) + sum(k in a + matched for k in b)


def estimate(a: Side, b: Side, past: History | None) -> tuple[Estimate, str]:
    """The log-scale shift B - A and how its variance was found. The launches' variance is
    pooled, not Welch's: when nothing changed both sides measure one case with one
    variance, and pooling doubles the degrees of freedom, which at a pilot's 2 a side is
    what keeps the false-change rate at its nominal 5% (Welch-Satterthwaite's
    approximation gave 5.6% in a simulation like bench/coverage.py's)."""
    parts = [(s.spread.var, s.spread.df) for s in (a, b) if s.launches >= 2]
    df = sum(d for _, d in parts)
    if past is not None:  # the history's launches too: the same case, more degrees
        parts.append((past.between_var, past.df))
    total = sum(d for _, d in parts)
    launch = (sum(v * d for v, d in parts) / total, total) if total else None
    method = "student" if df else "history" if launch else "none"
    command = past.command_var if past is not None else None
    if command is not None and method == "student":
        method = "student+history"
    return unpaired(a.logs, b.logs, launch, command,
                    float(past.command_df) if command is not None else 0), method


def pooled(pasts: list[History | None]) -> list[History | None]:
    """The cases' variances between commands moderated across the cases (the verdict
    core's `moderated`, its prior's weight estimated): a command effect is the host's as
    much as the case's, and one case's few earlier commands say little of it alone (so
    Smyth's posterior, not floored at a case's own rough figure). Its degrees of freedom
    stay those of the commands, never the cases': the cases of one command share its
    effect (a command in a slower state is slower at every size), so 3 cases of 7
    commands hold 6 degrees of freedom between commands, not 18 (moderated with them, 7
    identical commands here gave df 33 and called a 1.4x shift between two of this host's
    states 'faster')."""
    have = [i for i, p in enumerate(pasts) if p is not None and p.command_var is not None]
    own = np.array([pasts[i].command_df for i in have], dtype=float)
    var, df = moderated(np.array([pasts[i].command_var for i in have]), own, keep_own=False)
    out = list(pasts)
    for i, v, d in zip(have, var, df):
        out[i] = replace(pasts[i], command_var=float(v), command_df=float(min(d, own.max())))
    return out


def compare(a: dict[str, Side], b: dict[str, Side], threshold: Threshold,
            history_of=lambda cases: None) -> Comparison:
    """Every case present on both sides, tested (`history_of(cases)`: the store's variance
    components of that case from its other commands, replication.history). A shift no
    larger than the states the history has shown (seen_states), or a side alone in a
    state (lone_state), is undetermined, whatever the test says."""
    matched = [k for k in a if k in b]
    tested = [k for k in matched if not any(c.imported for c in a[k].cases + b[k].cases)]
    pasts = pooled([history_of(a[k].cases + b[k].cases) for k in tested])
    found = [estimate(a[k], b[k], past) for k, past in zip(tested, pasts)]
    judged = dict(zip(tested, claims([e for e, _ in found], ["compare"] * len(found),
                                     tested, threshold, WORDS)))
    methods = dict(zip(tested, (m for _, m in found)))
    by_case = dict(zip(tested, pasts))
    states = {k: SEEN_STATE for k in seen_states(a, b, by_case)
              if judged[k].word in (WORDS.over, WORDS.faster)}
    states.update(dict.fromkeys(lone_state(a, b, by_case), LONE_STATE))
    for k, method in states.items():
        judged[k] = replace(judged[k], word=UNDETERMINED, failing=False)
        methods[k] = method
    dfs = dict(zip(tested, (e.test_df for e, _ in found)))
    changes = [_change(a[k], b[k], judged.get(k), methods.get(k), dfs.get(k))
               for k in matched]
    return Comparison(changes, [s.identity for k, s in a.items() if k not in b],
                      [s.identity for k, s in b.items() if k not in a], threshold,
                      differences(a, b))


SEEN_STATE = "seen state"  # CaseChange.method: a shift no larger than the states seen


def seen_states(a: dict[str, Side], b: dict[str, Side], pasts: dict[str, History | None]
                ) -> list[str]:
    """The cases whose shift B - A is no larger than the differences between states the
    history has shown: the span of the case's earlier commands' means (two or more; within
    each side of a step in time, History.state_span), or the compare's cases' typical span
    (their median: a state moves every size of a command, a stall one size alone), or
    the range of A's or B's own launches where they spread beyond the history's launches
    (_states_within), widened by what launches alone spread two means by (Z standard
    errors). On a host whose commands land in states (here 1.1-3x apart, changing every
    few commands) the machine has then moved as far with nothing changed, and no test of
    two commands tells a change from a state: compare --live, A and B alternated, does.
    A shift beyond every state shown is tested as any other, however alone it stands."""
    spans = {k: p.state_span() for k, p in pasts.items()
             if p is not None and len(p.command_means) >= 2}
    if not spans:
        return []
    typical = float(np.median(list(spans.values())))
    found = []
    for k, span in spans.items():
        past = pasts[k]
        margin = Z * np.sqrt(2 * past.between_var * past.inverse_n)
        own = max(_states_within(side[k].logs, past) for side in (a, b))
        if abs(b[k].logs.mean() - a[k].logs.mean()) <= max(span, typical, own) + margin:
            found.append(k)
    return found


def _states_within(logs: np.ndarray, past: History) -> float:
    """The range of one side's log launch medians where they spread more than the
    history's launches do (an F test, unusual_p < UNUSUAL): states within the command
    (recorded here: 4 launches of one ping-pong command 1.3x above its fifth). Launches
    that spread as launches do show no state: 0."""
    if logs.size < 2 or past.between_var <= 0:
        return 0.0
    p = unusual_p(np.array([logs.var(ddof=1)]), logs.size - 1, past.between_var, past.df)[0]
    return float(np.ptp(logs)) if p < UNUSUAL else 0.0


LONE_STATE = "lone state"  # CaseChange.method where one side sat alone in another state
# A state multiplies every size of a command by one factor: the recorded commands in
# another state (bench/data/noise.json) moved their sizes within 1.1x of each other; a
# delay added to every send moved 8 B 6.6x and 4 KiB 2.7x (issue 62).
ALIKE = math.log(1.25)


def lone_state(a: dict[str, Side], b: dict[str, Side], pasts: dict[str, History | None]
               ) -> list[str]:
    """The cases where one side lies LEVEL_GAP (1.5x) or more from the other and from
    every earlier command of the case's configuration (two or more), while the other side
    lies among them, and B's shift is alike (within 1.25x, ALIKE, the same way) at half or more
    of the command's cases: a whole command in another state multiplies every size alike.
    That is what a command wholly beside another job, or on a slower core, looks like on
    a shared host (on the machine this was built on, 1 of 10 identical commands ran 2.4-3.2x
    slower at every size), and what a real change seen once looks like: no test of two
    commands tells them apart, and a second command at that level, or compare --live,
    does. A shift unlike across sizes (an added delay: 600x at 8 B, 2x at 16 KiB) is not
    a state, and is tested as any other."""
    shifts = {k: float(b[k].logs.mean() - a[k].logs.mean()) for k in pasts}
    big = [k for k, d in shifts.items() if abs(d) >= LEVEL_GAP]
    if not big or 2 * len(big) < len(shifts):
        return []
    centre = float(np.median([shifts[k] for k in big]))
    if any(shifts[k] * centre <= 0 or abs(shifts[k] - centre) >= ALIKE for k in big):
        return []

    def alone(k: str, side: Side, other: Side) -> bool:
        means = np.asarray(pasts[k].command_means if pasts[k] else ())
        if means.size < 2:
            return False
        far = np.abs(means - side.logs.mean()) >= LEVEL_GAP
        return bool(far.all()) and not np.all(np.abs(means - other.logs.mean()) >= LEVEL_GAP)
    return [k for k in big if alone(k, b[k], a[k]) or alone(k, a[k], b[k])]


def _change(a: Side, b: Side, claim: Claim | None, method: str | None,
            df: float | None) -> CaseChange:
    median_a, median_b = a.summary.median_s, b.summary.median_s
    if claim is None:  # a printed figure: no samples to test, the shift alone
        claim = replace(unmeasured("compare", key(a.identity)), ratio=median_b / median_a,
                        word=SHIFT_ONLY, launches=min(a.launches, b.launches), paired=False)
        method, df = "imported", None
    return CaseChange(a.identity, a.launches, b.launches, median_a, median_b, method, df, claim)


def load_side(store, runs: list[int]) -> dict[str, Side]:
    return sides(measured(store, runs))
