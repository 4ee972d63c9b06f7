"""Predictions over (ranks, bytes), set against the medians measured where runs exist."""

from __future__ import annotations

import numpy as np

from ..store.cases import Case
from ..stats.stats import median_ci
from .collectives import ALGORITHMS, MessageTime


def comparable(case: Case, kernel_name: str) -> bool:
    """A case the model describes: the kernel, and for `ring` seed 001's pattern only."""
    return case.kernel == kernel_name and case.valid_samples.size > 0 and (
        kernel_name != "ring" or case.params["pattern"] == "ring")


def measured_latency(case: Case) -> tuple[float, tuple[float, float] | None]:
    """Median latency and its 95% CI: the MPI call alone.

    A collective's sample is its call (docs/kernels-collectives.md, "Checks"); a reduction
    stored before that also timed its result check in the sample, and kept the call as
    the phase `call`, slowest rank per sample, which the models describe.
    """
    ordered = np.sort(call_latency(case))
    return float(np.median(ordered)), median_ci(ordered, presorted=True)


def call_latency(case: Case) -> np.ndarray:
    """The case's latencies of the MPI call alone (measured_latency's)."""
    phases = case.extra.get("phase_samples_s") or {}
    if "call" in phases:
        return np.max(np.asarray(phases["call"]), axis=0)
    return case.latency_s


def predictions(kernel_name: str, t: MessageTime, grid: list[tuple[int, int]],
                measured: list[Case], gamma: float = 0.0) -> list[dict]:
    """One row per algorithm, (ranks, bytes) and measured case (or none); seconds and bytes."""
    by_point: dict[tuple[int, int], list[Case]] = {}
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


def _against(predicted: float, case: Case) -> dict:
    median, ci = measured_latency(case)
    return {"run": case.run_id, "measured_s": median, "measured_ci_s": list(ci) if ci else None,
            "rel_error": (predicted - median) / median}
