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
    """
    k = kernel(case.kernel)
    s = summarize(case.samples * k.latency_s(1.0, case.window))
    median_t = float(np.median(case.samples))
    return {
        "run": case.run_id,
        "kernel": case.kernel,
        "send_mode": case.send_mode,
        "bytes": case.bytes,
        "ranks": case.ranks,
        "window": case.window,
        "n": s.n,
        "median_s": s.median,
        "ci_low_s": s.ci_low,
        "ci_high_s": s.ci_high,
        "p05_s": s.p05,
        "p95_s": s.p95,
        "mean_s": s.mean,
        "stddev_s": s.stddev,
        "outliers": s.outliers,
        "bandwidth_MBps": k.bandwidth_Bps(median_t, case.bytes, case.window) / MB,
        "validated": case.validated,
    }
