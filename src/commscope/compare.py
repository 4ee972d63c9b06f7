"""Compare two sets of runs case by case, with the launch as the unit: what got faster,
what got slower, by how much, and what cannot be told from launch noise.

Cases are matched by their identity (cases.identity). Each side of a case is the
medians of its launches, on the log scale, and each side is one command: the shift's
variance is the launches' (pooled over the sides with two or more launches) over their
counts, plus twice the variance between commands (replication.py: the history's, or
assumed equal to the launches'). With one launch a side the launches' variance must
come from the store's history of the case; without it a case is inconclusive. Many cases are many tests: p-values are adjusted for the false
discovery rate (Benjamini & Hochberg 1995, stats.benjamini_hochberg).
A case is a regression only when it is significantly slower and its whole interval
lies beyond the threshold. See docs/compare.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

import numpy as np

from .cases import Case, grouped, key
from .errors import UserError
from .replication import History, Spread, case_spread, command_term, satterthwaite
from .stats import benjamini_hochberg
from .summary import launch_spreads, pilot

ALPHA = 0.05  # false discovery rate over the matched cases; intervals are 1 - ALPHA
DEFAULT_THRESHOLD = "5%"
# What a case's change is called (docs/compare.md).
VERDICTS = ("regression", "slower", "faster", "no change", "within noise", "inconclusive",
            "shift only")  # shift only: an imported side, figures without samples


@dataclass(frozen=True)
class Side:
    """One side of a case: its launches' medians (seconds, in launch order), the stored
    cases, how many first launches chose the launch count (a pilot; None: none did), and
    the launches' spread from all the run's cases (None: from these launches alone)."""
    identity: dict
    medians_s: np.ndarray
    cases: list[Case]
    pilot: int | None = None
    given: Spread | None = None

    @property
    def launches(self) -> int:
        return self.medians_s.size

    @property
    def logs(self) -> np.ndarray:
        return np.log(self.medians_s)

    @property
    def spread(self) -> Spread:
        """How far a launch's log median falls from the side's mean (replication.Spread)."""
        return self.given or case_spread(self.logs, self.pilot)


def sides(cases: list[Case]) -> dict[str, Side]:
    """Each case identity's launch medians (valid samples, the kernel's latency)."""
    out = {}
    groups = [(ident, sorted((c for c in found if c.valid_samples.size or c.imported),
                             key=lambda c: (c.launch or 0, c.id)))
              for ident, found in grouped(cases)]
    groups = [(ident, measured) for ident, measured in groups if measured]
    spreads = launch_spreads([measured for _, measured in groups])
    for (ident, measured), given in zip(groups, spreads):
        out[key(ident)] = Side(ident, np.array([c.imported["median_s"] if c.imported else
                                                float(np.median(c.latency_s))
                                                for c in measured]), measured,
                               pilot(measured), given)
    return out


@dataclass(frozen=True)
class CaseChange:
    """One matched case, B against A. Times in seconds; relative: B / A - 1."""
    case: dict  # its identity (cases.identity)
    launches_a: int
    launches_b: int
    median_a_s: float  # the typical launch's median: exp(mean log launch median)
    median_b_s: float
    relative: float | None
    relative_ci_low: float | None
    relative_ci_high: float | None
    method: str  # student (launches' variance assumed for commands), student+history,
    # history (one launch a side), or none (inconclusive)
    df: float | None
    p: float | None
    p_adjusted: float | None
    verdict: str  # one of VERDICTS
    regression: bool

    def as_dict(self, name) -> dict:
        """Every field, the identity's spread out; `name` names the case (names.identity)."""
        return dict(asdict(self), case=name(self.case), **self.case)


@dataclass(frozen=True)
class Comparison:
    changes: list[CaseChange]  # matched cases, in A's order
    only_a: list[dict]  # identities
    only_b: list[dict]
    threshold: float

    @property
    def regressions(self) -> list[CaseChange]:
        return [c for c in self.changes if c.regression]

    def count(self, verdict: str) -> int:
        return sum(c.verdict == verdict for c in self.changes)

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


@dataclass(frozen=True)
class _Test:
    shift: float  # B - A on the log scale
    se: float
    df: float
    method: str


def _test(a: Side, b: Side, past: History | None) -> _Test | None:
    """The log-scale shift B - A with its standard error and degrees of freedom, or None
    where one launch a side leaves the between-launch variance unknown.

    The launches' variance is pooled, not Welch's: when nothing changed both sides
    measure one case with one variance, and pooling doubles the degrees of freedom,
    which at a pilot's 2 a side is what keeps the false-change rate at its nominal 5%
    (Welch-Satterthwaite's approximation gave 5.6% in a simulation like
    bench/coverage.py's)."""
    shift = float(b.logs.mean() - a.logs.mean())
    spreads = [s.spread for s in (a, b) if s.launches >= 2]
    df = sum(s.df for s in spreads)
    if df:
        var = sum(s.var * s.df for s in spreads) / df
        method = "student"
    elif past is not None:
        var, df, method = past.between_var, past.df, "history"
    else:
        return None
    sigma2, sigma_df, how = command_term(var, df, past)
    launches = var * (1 / a.launches + 1 / b.launches)
    se = math.sqrt(launches + 2 * sigma2)
    if how == "history":  # the commands' variance measured apart: Satterthwaite's df
        df = satterthwaite([(launches, df), (2 * sigma2, sigma_df)])
        method = "student+history" if method == "student" else method
    return _Test(shift, se, float(df), method)


def _change(a: Side, b: Side, past: History | None) -> CaseChange:
    median_a, median_b = float(np.exp(a.logs.mean())), float(np.exp(b.logs.mean()))
    relative = median_b / median_a - 1
    if any(c.imported for c in a.cases + b.cases):  # a printed figure: no samples to test
        return CaseChange(a.identity, a.launches, b.launches, median_a, median_b, relative,
                          None, None, "imported", None, None, None, "shift only", False)
    t = _test(a, b, past)
    if t is None:
        return CaseChange(a.identity, a.launches, b.launches, median_a, median_b, relative,
                          None, None, "none", None, None, None, "inconclusive", False)
    if t.se == 0:
        p, half = (0.0 if t.shift else 1.0), 0.0
    else:
        from scipy.special import stdtr, stdtrit  # imported when a test is made
        p = float(2 * stdtr(t.df, -abs(t.shift) / t.se))
        half = float(stdtrit(t.df, 1 - ALPHA / 2) * t.se)
    return CaseChange(a.identity, a.launches, b.launches, median_a, median_b, relative,
                      math.expm1(t.shift - half), math.expm1(t.shift + half), t.method, t.df,
                      p, None, "", False)


def verdict(c: CaseChange, threshold: float) -> CaseChange:
    """The verdict of a tested case, from its BH-adjusted p and its interval."""
    if c.p_adjusted is None:
        return c
    low, high = c.relative_ci_low, c.relative_ci_high
    significant = c.p_adjusted < ALPHA and (low > 0 or high < 0)
    if significant and low > threshold:
        word = "regression"
    elif significant:
        word = "slower" if low > 0 else "faster"
    elif -threshold < low and high < threshold:
        word = "no change"
    else:
        word = "within noise"
    return CaseChange(**{**asdict(c), "case": c.case, "verdict": word,
                         "regression": word == "regression"})


def compare(a: dict[str, Side], b: dict[str, Side], threshold: float,
            history_of=lambda cases: None) -> Comparison:
    """Every case present on both sides, tested (`history_of(cases)`: the store's
    between-launch variance of that case, for one launch a side)."""
    matched = [k for k in a if k in b]
    changes = [_change(a[k], b[k], history_of(a[k].cases + b[k].cases)) for k in matched]
    tested = [i for i, c in enumerate(changes) if c.p is not None]
    if tested:
        adjusted = benjamini_hochberg([changes[i].p for i in tested])
        for i, p in zip(tested, adjusted):
            changes[i] = verdict(CaseChange(**{**asdict(changes[i]), "case": changes[i].case,
                                               "p_adjusted": float(p)}), threshold)
    return Comparison(changes, [s.identity for k, s in a.items() if k not in b],
                      [s.identity for k, s in b.items() if k not in a], threshold)


def parse_threshold(text: str) -> float:
    """`5%` or `0.05`: the fraction of A's median a slowdown's whole interval must exceed."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*", text)
    value = float(m.group(1)) / (100 if m.group(2) else 1) if m else None
    if value is None or value >= 1 and not m.group(2):
        raise UserError(f"--threshold {text}: give a percentage (5%) or a fraction (0.05)")
    return value


def load_side(store, runs: list[int]) -> dict[str, Side]:
    return sides([case for run_id in runs for case in store.cases(run_id)])
