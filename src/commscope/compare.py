"""Compare two sets of runs case by case: what got faster, what got slower, by how much.

Cases are matched by what makes them the same measurement, samples of matching
cases are pooled within a side, and each matched case gets a Mann-Whitney U
test and a Hodges-Lehmann shift with its CI (ranktests.py). Many cases are many
tests, so p-values are adjusted for the false discovery rate (Benjamini &
Hochberg 1995). Times are the kernel's latency, as `commscope run` shows them.
See docs/compare.md.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

import numpy as np

from .cases import Case, identity, key
from .errors import UserError
from .ranktests import benjamini_hochberg, hodges_lehmann, mann_whitney

ALPHA = 0.05  # false discovery rate over the matched cases; the shift CI is 1 - ALPHA
DEFAULT_THRESHOLD = "5%"


def pool(cases: list[Case]) -> dict[str, tuple[dict, np.ndarray]]:
    """Latency samples per case identity (cases.identity, as compare matches them),
    several launches' cases pooled; sync-invalid repetitions left out as in every other
    figure (Case.valid_samples)."""
    pooled: dict[str, tuple[dict, list[np.ndarray]]] = {}
    for case in cases:
        latency = case.latency_s
        if latency.size:
            ident = identity(case)
            pooled.setdefault(key(ident), (ident, []))[1].append(latency)
    return {k: (ident, np.concatenate(parts)) for k, (ident, parts) in pooled.items()}


@dataclass(frozen=True)
class CaseChange:
    """One matched case, B against A. Times in seconds; relative: fractions of A's median."""
    case: dict  # its identity (cases.identity)
    n_a: int
    n_b: int
    median_a_s: float
    median_b_s: float
    shift_s: float  # Hodges-Lehmann estimate of B - A
    shift_ci_low_s: float | None
    shift_ci_high_s: float | None
    relative: float | None  # shift / median of A; None when that median is 0
    relative_ci_low: float | None
    relative_ci_high: float | None
    u: float
    p: float
    p_exact: bool
    p_adjusted: float  # Benjamini-Hochberg over all matched cases
    change: str  # "faster", "slower" or "none" (not significant)
    regression: bool  # slower, significant, and by more than the threshold

    def as_dict(self, name) -> dict:
        """Every field, the identity's spread out; `name` names the case (views.names)."""
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

    def count(self, change: str) -> int:
        return sum(c.change == change for c in self.changes)


def compare(a: dict[str, tuple[dict, np.ndarray]], b: dict[str, tuple[dict, np.ndarray]],
            threshold: float) -> Comparison:
    """Every case present on both sides (pooled by `pool`), tested; a case is a regression
    when it is significantly slower and its estimated shift exceeds `threshold` of A's
    median."""
    matched = [k for k in a if k in b]
    tests = [mann_whitney(a[k][1], b[k][1]) for k in matched]
    adjusted = benjamini_hochberg([t.p for t in tests])
    changes = [_change(a[k][0], a[k][1], b[k][1], t, float(p), threshold)
               for k, t, p in zip(matched, tests, adjusted)]
    return Comparison(changes, [ident for k, (ident, _) in a.items() if k not in b],
                      [ident for k, (ident, _) in b.items() if k not in a], threshold)


def _change(cid: dict, a: np.ndarray, b: np.ndarray, test, p_adjusted: float,
            threshold: float) -> CaseChange:
    shift = hodges_lehmann(a, b, 1 - ALPHA)
    median_a = float(np.median(a))
    change = "none"
    if p_adjusted < ALPHA and shift.ci_low is not None:
        # Significant only where the CI agrees: it excludes 0, and its side gives the direction.
        change = "slower" if shift.ci_low > 0 else "faster" if shift.ci_high < 0 else "none"
    relative = _relative(shift.estimate, median_a)
    return CaseChange(cid, a.size, b.size, median_a, float(np.median(b)), shift.estimate,
                      shift.ci_low, shift.ci_high, relative, _relative(shift.ci_low, median_a),
                      _relative(shift.ci_high, median_a), test.u, test.p, test.exact, p_adjusted,
                      change, change == "slower" and relative is not None and relative > threshold)


def _relative(value: float | None, median: float) -> float | None:
    return None if value is None or median == 0 else value / median


def parse_threshold(text: str) -> float:
    """`5%` or `0.05`: the fraction of A's median a significant slowdown must exceed."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*", text)
    value = float(m.group(1)) / (100 if m.group(2) else 1) if m else None
    if value is None or value >= 1 and not m.group(2):
        raise UserError(f"--threshold {text}: give a percentage (5%) or a fraction (0.05)")
    return value


def load_side(store, runs: list[int]) -> dict[str, tuple[dict, np.ndarray]]:
    return pool([case for run_id in runs for case in store.cases(run_id)])
