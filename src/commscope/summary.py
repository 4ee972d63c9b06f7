"""Per-case summaries in the field's units, computed from stored raw samples."""

from __future__ import annotations

import numpy as np

from .cases import Case
from .stats import relative_precision, summarize
from .units import mb_per_s


def case_summary(case: Case) -> dict:
    """The figures users read for one case; times are latencies per the kernel's definition.

    Latency is a linear function of the raw sample (half the round trip, one
    window slot, ...), so order statistics and percentiles scale with it.
    Repetitions that the window synchronisation marked invalid are left out of
    the statistics and counted.
    """
    samples = case.valid_samples
    s = summarize(case.latency_s) if samples.size else None
    bandwidth = case.bandwidth_Bps(float(np.median(samples))) if s else None
    out = {
        "run": case.run_id,
        "kernel": case.kernel,
        "send_mode": case.send_mode,
        "bytes": case.bytes,
        "ranks": case.ranks,
        "window": case.window,
        "params": case.params,
        "sync": case.settings.get("sync", "barrier"),
        "map_by": case.settings.get("map_by"),
        "bind_to": case.settings.get("bind_to"),
        "transport": case.settings.get("transport", "auto"),
        "case_key": case.case_key,
        "n": s.n if s else 0,
        **_statistics(s),
        "invalid": len(case.extra.get("invalid") or ()),
        "precision_target": case.extra.get("precision_target"),
        "capped": case.extra.get("capped", False),
        "bandwidth_MBps": mb_per_s(bandwidth),
        "validated": case.validated,
    }
    phases = case.extra.get("phase_samples_s")
    if phases and s:
        # A phase lasts as long as its slowest rank: per-sample max over ranks, then the median.
        out["phase_median_s"] = {name: float(np.median(np.max(np.asarray(per_rank), axis=0)))
                                 for name, per_rank in phases.items()}
    return out


def _statistics(s) -> dict:
    """The summary's figures; all None when no sample is valid (every window late)."""
    figures = {"median_s": "median", "ci_low_s": "ci_low", "ci_high_s": "ci_high",
               "p05_s": "p05", "p95_s": "p95", "mean_s": "mean", "stddev_s": "stddev",
               "cv": "cv", "outliers": "outliers"}
    out = {name: getattr(s, field) if s else None for name, field in figures.items()}
    out["precision"] = relative_precision(s) if s else None
    return out
