"""commscope against a bare MPI loop, built with the same MPI, measured in the same run.

Prints two ratios (targets in parentheses):
  latency   = commscope 8 B ping-pong half round trip / bare loop's   (<= 1.02)
  bandwidth = commscope 1 MiB bw rate / bare loop's                   (>= 0.98)
Both sides are means per iteration (the bare loop can give nothing else), so the
comparison is like for like; commscope's median is printed beside it. Launches
alternate between the two so that drift on this shared machine hits both; each
side's figure is the median over its launches.

usage: python bench/overhead.py [--mpi PREFIX] [--rounds N] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

from commscope.system.build import native_binary
from commscope.system.launcher import launch
from commscope.system.mpi import find_mpi

HERE = Path(__file__).resolve().parent
MIB = 1 << 20


class Counts(NamedTuple):
    pingpong: int   # bare round trips
    bw: int         # bare windows of 64 messages
    min_time: str   # commscope's seconds of samples per case and launch


BENCH = Counts(200000, 300, "1")
SMOKE = Counts(1000, 3, "0.01")  # the same launches and parsing, in seconds


def build_bare(mpi, out: Path) -> Path:
    subprocess.run([str(mpi.mpicc), "-O2", "-o", str(out), str(HERE / "bare.c")], check=True)
    return out


def bare(mpi, binary, kernel, nbytes, iters) -> float:
    how = launch(mpi, 2, binary, [kernel, str(nbytes), str(iters)])
    done = subprocess.run(how.argv, env=how.env, capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


def commscope(mpi, kernel, nbytes, db, min_time: str) -> tuple[float, float]:
    """Mean and median seconds per message (half round trip, or one window slot)."""
    done = subprocess.run([sys.executable, "-m", "commscope.cli", "run", kernel, "--sizes",
                           str(nbytes), "--min-time", min_time, "--json", "--db", str(db),
                           "--mpi", str(mpi.mpicc)],
                          capture_output=True, text=True, check=True)
    (case,) = json.loads(done.stdout)["cases"]
    return case["mean_s"], case["median_s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--smoke", action="store_true",
                    help="1 round of a few iterations: the same path, for tests/test_bench.py")
    args = ap.parse_args()
    counts = SMOKE if args.smoke else BENCH
    if args.smoke:
        args.rounds = 1
    mpi = find_mpi(args.mpi)
    native_binary(mpi)
    with tempfile.TemporaryDirectory() as tmp:
        binary = build_bare(mpi, Path(tmp) / "bare")
        db = Path(tmp) / "bench.db"
        ours = {"pingpong": [], "bw": []}
        theirs = {"pingpong": [], "bw": []}
        for _ in range(args.rounds):
            # Half round trip; bw as seconds per MiB message (time per window slot).
            theirs["pingpong"].append(bare(mpi, binary, "pingpong", 8, counts.pingpong) / 2)
            ours["pingpong"].append(commscope(mpi, "pingpong", 8, db, counts.min_time))
            theirs["bw"].append(bare(mpi, binary, "bw", MIB, counts.bw) / 64)
            ours["bw"].append(commscope(mpi, "bw", MIB, db, counts.min_time))
    mean = {k: statistics.median(m for m, _ in v) for k, v in ours.items()}
    median = {k: statistics.median(m for _, m in v) for k, v in ours.items()}
    bare_mean = {k: statistics.median(v) for k, v in theirs.items()}
    lat = mean["pingpong"] / bare_mean["pingpong"]
    bw = bare_mean["bw"] / mean["bw"]
    print(f"MPI: {mpi.family} in {mpi.bin_dir.parent}  ({args.rounds} alternating launches each)")
    print(f"8 B half round trip   commscope mean {mean['pingpong'] * 1e6:.3f} us "
          f"(median {median['pingpong'] * 1e6:.3f})  "
          f"bare mean {bare_mean['pingpong'] * 1e6:.3f} us")
    print(f"1 MiB bw              commscope mean {MIB / mean['bw'] / 1e6:,.0f} MB/s "
          f"(median {MIB / median['bw'] / 1e6:,.0f})  "
          f"bare mean {MIB / bare_mean['bw'] / 1e6:,.0f} MB/s")
    print(f"latency ratio   {lat:.3f}  (target <= 1.02)")
    print(f"bandwidth ratio {bw:.3f}  (target >= 0.98)")


if __name__ == "__main__":
    main()
