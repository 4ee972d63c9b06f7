"""Compare two sets of runs case by case: what got faster, what got slower, by how much.

Cases are matched by what makes them the same measurement, samples of matching
cases are pooled within a side, and each matched case gets a Mann-Whitney U
test and a Hodges-Lehmann shift with its CI (ranktests.py). Many cases are many
tests, so p-values are adjusted for the false discovery rate (Benjamini &
Hochberg 1995). Times are the kernel's latency, as `commscope run` shows them.
See docs/compare.md.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np

from .errors import UserError
from .kernels import kernel
from .ranktests import benjamini_hochberg, hodges_lehmann, mann_whitney
from .sizes import format_bytes
from .store import Case, Store

ALPHA = 0.05  # false discovery rate over the matched cases; the shift CI is 1 - ALPHA
DEFAULT_THRESHOLD = "5%"


class CaseId(NamedTuple):
    """What makes two stored cases the same measurement: a sweep's case key
    (sweep.Launch.key) without the launch number, the window as the kernel
    used it, and validation, whose byte checks are inside the timed loop."""
    kernel: str
    send_mode: str | None
    bytes: int
    ranks: int
    window: int | None
    params: str  # JSON, keys sorted
    transport: str
    map_by: str | None
    bind_to: str | None
    sync: str
    validated: bool
    hosts: str | None  # where: a --hosts spec; None on the launching host alone

    def label(self) -> str:
        words = [self.kernel, self.send_mode or "", format_bytes(self.bytes), f"np{self.ranks}"]
        words += [f"window={self.window}"] if self.window is not None else []
        words += [f"{k}={v}" for k, v in json.loads(self.params).items()]
        words += [f"transport={self.transport}"] if self.transport != "auto" else []
        words += [f"map-by={self.map_by}"] if self.map_by else []
        words += [f"bind-to={self.bind_to}"] if self.bind_to else []
        words += [f"sync={self.sync}"] if self.sync != "barrier" else []
        words += ["validated"] if self.validated else []
        words += [f"hosts={self.hosts}"] if self.hosts else []
        return " ".join(w for w in words if w)

    def as_dict(self) -> dict:
        return dict(self._asdict(), params=json.loads(self.params))


def case_id(case: Case) -> CaseId:
    s = case.settings
    return CaseId(case.kernel, case.send_mode, case.bytes, case.ranks, case.window,
                  json.dumps(case.params, sort_keys=True), s.get("transport", "auto"),
                  s.get("map_by"), s.get("bind_to"), s.get("sync", "barrier"), case.validated,
                  s.get("hosts"))


def pool(cases: list[Case]) -> dict[CaseId, np.ndarray]:
    """Latency samples per case identity, several launches' cases pooled; sync-invalid
    repetitions left out as in every other figure (Case.valid_samples)."""
    pooled: dict[CaseId, list[np.ndarray]] = {}
    for case in cases:
        samples = case.valid_samples
        if samples.size:
            latency = samples * kernel(case.kernel).latency(1.0, case)  # linear in the sample
            pooled.setdefault(case_id(case), []).append(latency)
    return {cid: np.concatenate(parts) for cid, parts in pooled.items()}


@dataclass(frozen=True)
class CaseChange:
    """One matched case, B against A. Times in seconds; relative: fractions of A's median."""
    case: CaseId
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

    def as_dict(self) -> dict:
        return dict(asdict(self), case=self.case.label(), **self.case.as_dict())


@dataclass(frozen=True)
class Comparison:
    changes: list[CaseChange]  # matched cases, in A's order
    only_a: list[CaseId]
    only_b: list[CaseId]
    threshold: float

    @property
    def regressions(self) -> list[CaseChange]:
        return [c for c in self.changes if c.regression]

    def count(self, change: str) -> int:
        return sum(c.change == change for c in self.changes)


def compare(a: dict[CaseId, np.ndarray], b: dict[CaseId, np.ndarray],
            threshold: float) -> Comparison:
    """Every case present on both sides, tested; a case is a regression when it is
    significantly slower and its estimated shift exceeds `threshold` of A's median."""
    matched = [cid for cid in a if cid in b]
    tests = [mann_whitney(a[cid], b[cid]) for cid in matched]
    adjusted = benjamini_hochberg([t.p for t in tests])
    changes = [_change(cid, a[cid], b[cid], t, float(p), threshold)
               for cid, t, p in zip(matched, tests, adjusted)]
    return Comparison(changes, [cid for cid in a if cid not in b],
                      [cid for cid in b if cid not in a], threshold)


def _change(cid: CaseId, a: np.ndarray, b: np.ndarray, test, p_adjusted: float,
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


RUN_ITEM = re.compile(r"(\d+)(?:-(\d+))?|sweep:(\d+)")


def parse_runs(spec: str, store: Store, side: str) -> list[int]:
    """Run ids from `3`, `3,4,5`, `3-5`, `sweep:2` or a comma list of these; each checked."""
    runs: list[int] = []
    for item in (i.strip() for i in spec.split(",")):
        m = RUN_ITEM.fullmatch(item)
        if not m:
            raise UserError(f"{side} {spec}: '{item}' is not a run; give RUN, RUN,RUN, "
                            "FIRST-LAST or sweep:N")
        if m.group(3):
            found = store.sweep_runs(int(m.group(3)))
            if not found:
                raise UserError(f"{side} {spec}: no runs of sweep {m.group(3)} in {store.path}")
        else:
            first, last = int(m.group(1)), int(m.group(2) or m.group(1))
            if last < first:
                raise UserError(f"{side} {spec}: range {item} ends below its start")
            found = list(range(first, last + 1))
        for run_id in found:
            store.run(run_id)  # an unknown run is a UserError naming it
        runs += [r for r in found if r not in runs]
    return runs


def load_side(store: Store, runs: list[int]) -> dict[CaseId, np.ndarray]:
    return pool([case for run_id in runs for case in store.cases(run_id)])
