"""Predictions over (ranks, bytes), set against the figures measured where runs exist."""

from __future__ import annotations


from ..stats.summary import CaseSummary
from .collectives import ALGORITHMS, MessageTime


def comparable(s: CaseSummary, kernel_name: str) -> bool:
    """A case the model describes: the kernel, and for `ring` seed 001's pattern only."""
    return s.kernel == kernel_name and s.measured and not s.imported and (
        kernel_name != "ring" or s.params.get("pattern") == "ring")


def predictions(kernel_name: str, t: MessageTime, grid: list[tuple[int, int]],
                measured: list[CaseSummary], gamma: float = 0.0) -> list[dict]:
    """One row per algorithm, (ranks, bytes) and measured case (its summary, the figure
    `results show` gives it; or none); seconds and bytes."""
    by_point: dict[tuple[int, int], list[CaseSummary]] = {}
    for case in measured:
        by_point.setdefault((case.ranks, case.bytes), []).append(case)
    rows = []
    for ranks, nbytes in grid:
        for name, model in ALGORITHMS[kernel_name].items():
            predicted = float(model(t, ranks, nbytes, gamma))
            base = {"kernel": kernel_name, "algorithm": name, "ranks": ranks, "bytes": nbytes,
                    "predicted_s": predicted, "run": None, "measured_s": None,
                    "measured_ci_s": None, "rel_error": None}
            for case in by_point.get((ranks, nbytes), [None]):
                rows.append(base if case is None else {**base, **_against(predicted, case)})
    return rows


def _against(predicted: float, s: CaseSummary) -> dict:
    ci = None if s.ci_low_s is None else [s.ci_low_s, s.ci_high_s]
    return {"run": s.run, "measured_s": s.median_s, "measured_ci_s": ci,
            "rel_error": (predicted - s.median_s) / s.median_s}
