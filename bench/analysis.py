"""Analysis speed: ingest + statistics + fit + report for 10^6 stored samples (target <= 3 s).

Synthetic native records (pingpong, 2 send modes x 23 sizes, ~21,700 samples
each: 10^6 in all, latencies on a Hockney line with an eager/rendezvous jump
and 2% noise) go through the same path as a real run: JSON Lines parsed and
committed by Ingest into a fresh SQLite store, per-case summaries, the model
fits, and the HTML report. Each phase is timed in this one process; prints the
phases and the total against the target.

usage: python bench/analysis.py [--samples N] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from commscope.models.groups import fit_runs
from commscope.cli.report import build
import commscope.views.report  # noqa: E402,F401 matplotlib: imported before any clock starts
from commscope.store.store import Store
from commscope.stats.summary import case_summary

from stored_run import store_run

TARGET_S = 3.0
SMOKE_SAMPLES = 2_000
SIZES = [0] + [1 << i for i in range(22)]
MODES = ("standard", "synchronous")


def records(total: int):
    """The context record, then one case record per (mode, size): JSON Lines as rank 0 writes."""
    rng = np.random.default_rng(7)
    per_case = total // (len(SIZES) * len(MODES))
    yield json.dumps({"type": "context", "schema": 1, "ranks": 2, "mpi_library": "synthetic",
                      "timer": {"resolution_s": 1e-9}})
    for mode in MODES:
        for n in SIZES:
            # Round trip of a Hockney line, alpha 0.2/1.5 us, B 10/12 GB/s past 4 KiB.
            alpha, bandwidth = (0.2e-6, 10e9) if n < 4096 else (1.5e-6, 12e9)
            t = 2 * (alpha + n / bandwidth) * (1 + 0.02 * rng.standard_normal(per_case))
            samples = np.abs(t).tolist()
            yield json.dumps({"type": "case", "kernel": "pingpong", "send_mode": mode,
                              "bytes": n, "ranks": 2, "window": None, "batch": 100,
                              "warmup_iterations": 10, "validated": False,
                              "timed_by": "origin", "samples_s": samples,
                              "rank_samples_s": [samples, samples]})
    yield json.dumps({"type": "end"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--smoke", action="store_true",
                    help=f"{SMOKE_SAMPLES:,} samples: the same path, for tests/test_bench.py")
    args = ap.parse_args()
    if args.smoke:
        args.samples = SMOKE_SAMPLES
    lines = [line + "\n" for line in records(args.samples)]  # made before the clock starts
    with tempfile.TemporaryDirectory() as tmp:
        phases = {}
        start = time.perf_counter()
        store = Store(Path(tmp, "bench.db"))
        run_id = store_run(store, lines, "pingpong", 2)
        phases["ingest"] = time.perf_counter()
        cases = store.cases(run_id)
        stored = sum(c.samples.size for c in cases)
        [case_summary(c) for c in cases]
        phases["statistics"] = time.perf_counter()
        fit_runs(store, [run_id], None, max_segments=4)
        phases["fit"] = time.perf_counter()
        Path(tmp, "report.html").write_text(build(store, [run_id], "bench"))
        phases["report"] = time.perf_counter()
    print(f"{stored:,} stored samples in {len(cases)} cases")
    previous = start
    for name, at in phases.items():
        print(f"  {name:<10} {at - previous:6.2f} s")
        previous = at
    total = previous - start
    print(f"total {total:.2f} s  (target <= {TARGET_S:g} s): "
          f"{'met' if total <= TARGET_S else 'MISSED'}")


if __name__ == "__main__":
    main()
