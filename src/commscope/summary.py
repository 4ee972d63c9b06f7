"""Per-case summaries in the field's units, computed from stored raw samples."""

from __future__ import annotations

import numpy as np

from .kernels import kernel
from .stats import summarize
from .store import Case

MB = 1e6  # bandwidth is shown in MB/s with MB = 10^6 bytes


def case_summary(case: Case) -> dict:
    """The figures users read for one case; times are latencies per the kernel's definition.

    Latency is a linear function of the raw sample (half the round trip, one
    window slot, ...), so order statistics and percentiles scale with it.
    Repetitions that the window synchronisation marked invalid are left out of
    the statistics and counted.
    """
    k = kernel(case.kernel)
    samples = case.valid_samples
    s = summarize(samples * k.latency(1.0, case))
    bandwidth = k.bandwidth_Bps(float(np.median(samples)), case)
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
        "n": s.n,
        "median_s": s.median,
        "ci_low_s": s.ci_low,
        "ci_high_s": s.ci_high,
        "p05_s": s.p05,
        "p95_s": s.p95,
        "mean_s": s.mean,
        "stddev_s": s.stddev,
        "outliers": s.outliers,
        "invalid": len(case.extra.get("invalid") or ()),
        "bandwidth_MBps": None if bandwidth is None else bandwidth / MB,
        "validated": case.validated,
    }
    phases = case.extra.get("phase_samples_s")
    if phases:
        # A phase lasts as long as its slowest rank: per-sample max over ranks, then the median.
        out["phase_median_s"] = {name: float(np.median(np.max(np.asarray(per_rank), axis=0)))
                                 for name, per_rank in phases.items()}
    return out
