"""Scale: a simulated collective sweep at 64 to 4096 ranks through ingest, store, statistics
and the report, as the native side would emit it, with its time and peak memory.

The records come from the fake native runner (tests/fakempi/native.py): allreduce over 24
sizes (1 B to 8 MiB), every rank's samples and both phases' per-rank samples, one launch
per rank count. Each count is measured in a fresh process, so its peak resident memory is
its own; the stream is written to a file before the clock starts. Prints, per count, the
time of each stage and the peak memory, then how both grow from the smallest count to the
largest (the exponent k of time ~ ranks^k).

usage: python bench/scale.py [--ranks 64,256,1024,4096] [--samples N] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

SIZES = ",".join(str(1 << i) for i in range(24))  # 1 B .. 8 MiB
SMOKE = {"ranks": "4,8", "samples": 2}  # two counts, so that the growth is computed too


def write_stream(path: Path, ranks: int, samples: int) -> None:
    from fakempi.native import records
    argv = ["--kernel", "allreduce", "--sizes", SIZES, "--iters", str(samples)]
    with open(path, "w") as out:
        for rec in records(argv, ranks):
            out.write(json.dumps(rec) + "\n")


def child(stream: Path, ranks: int) -> dict:
    """Ingest, statistics and report of one stream, timed; peak RSS of this process."""
    from commscope.cli.report import build
    import commscope.views.report  # noqa: E402,F401 matplotlib: imported before any clock starts
    from commscope.store.store import Store
    from commscope.stats.summary import case_summary
    from stored_run import store_run

    with tempfile.TemporaryDirectory() as tmp:
        marks = {"start": time.perf_counter()}
        store = Store(Path(tmp, "scale.db"))
        with open(stream) as lines:
            run = store_run(store, lines, "allreduce", ranks, {"family": "collective"})
        marks["ingest"] = time.perf_counter()
        [case_summary(c) for c in store.cases(run)]
        marks["statistics"] = time.perf_counter()
        html = build(store, [run], "bench")
        marks["report"] = time.perf_counter()
        db_mb = Path(tmp, "scale.db").stat().st_size / 1e6
    times = dict(zip(list(marks)[1:], (b - a for a, b in zip(marks.values(),
                                                               list(marks.values())[1:]))))
    return {**times, "total": sum(times.values()), "db_MB": db_mb, "html_MB": len(html) / 1e6,
            "peak_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="64,256,1024,4096")
    ap.add_argument("--samples", type=int, default=20, help="samples per case (default 20)")
    ap.add_argument("--smoke", action="store_true",
                    help=f"--ranks {SMOKE['ranks']} --samples {SMOKE['samples']}: the same "
                         "path, for tests/test_bench.py")
    ap.add_argument("--child", nargs=2, metavar=("STREAM", "RANKS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.smoke:
        args.ranks, args.samples = SMOKE["ranks"], SMOKE["samples"]
    if args.child:
        print(json.dumps(child(Path(args.child[0]), int(args.child[1]))))
        return
    from commscope.system.build import native_description
    from commscope.system.mpi import find_mpi
    from fakempi import make_prefix

    counts = [int(r) for r in args.ranks.split(",")]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["COMMSCOPE_FAKE_PREFIX"] = str(make_prefix(Path(tmp, "fake"),
                                                              native_description(find_mpi())))
        for ranks in counts:
            stream = Path(tmp, f"{ranks}.jsonl")
            write_stream(stream, ranks, args.samples)
            # the child's stderr passes through: its traceback, if it fails, is the news
            done = subprocess.run([sys.executable, __file__, "--child", str(stream), str(ranks)],
                                  stdout=subprocess.PIPE, text=True, check=True)
            results[ranks] = json.loads(done.stdout)
            r = results[ranks]
            print(f"{ranks:>5} ranks: stream {stream.stat().st_size / 1e6:7.1f} MB  ingest "
                  f"{r['ingest']:6.2f} s  statistics {r['statistics']:5.2f} s  report "
                  f"{r['report']:5.2f} s  total {r['total']:6.2f} s  peak {r['peak_MB']:6.0f} MB  "
                  f"(store {r['db_MB']:.0f} MB, page {r['html_MB']:.1f} MB)", flush=True)
            stream.unlink()
    lo, hi = counts[0], counts[-1]
    if hi > lo:
        growth = math.log(hi / lo)
        t = math.log(results[hi]["total"] / results[lo]["total"]) / growth
        m = math.log(results[hi]["peak_MB"] / results[lo]["peak_MB"]) / growth
        print(f"from {lo} to {hi} ranks ({hi // lo}x): "
              f"time x{results[hi]['total'] / results[lo]['total']:.1f} (~ ranks^{t:.2f}), "
              f"peak memory x{results[hi]['peak_MB'] / results[lo]['peak_MB']:.1f} "
              f"(~ ranks^{m:.2f})")


if __name__ == "__main__":
    main()
