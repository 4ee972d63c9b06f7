"""Time to an answer: commscope at 1% precision against a fixed-count tool, side by side.

The fixed-count side (bench/fixed_count.c) sweeps 0 B-4 MiB ping-pong and
1 B-4 MiB bw with the OSU Micro-Benchmarks' default iteration counts and prints
a mean per size, with no interval. commscope runs the same two sweeps with its
default --precision 1%. Both are timed as a user waits for them: wall time of
the whole command, launcher start-up included. Launches alternate so that
drift on this shared machine hits both. Prints each side's wall time, their
ratio (goal <= 1) and the worst precision commscope reached.

usage: python bench/time_to_answer.py [--mpi PREFIX] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from commscope.build import native_binary
from commscope.launcher import launch
from commscope.mpi import find_mpi

HERE = Path(__file__).resolve().parent
MAX_BYTES = 4 << 20
SWEEPS = (("latency", "pingpong", "0:4MiB"), ("bw", "bw", "1:4MiB"))


def fixed_count(mpi, binary: Path) -> float:
    start = time.perf_counter()
    for mode, _, _ in SWEEPS:
        how = launch(mpi, 2, binary, [mode, str(MAX_BYTES)])
        subprocess.run(how.argv, env=how.env, capture_output=True, check=True)
    return time.perf_counter() - start


def commscope(mpi, db: Path) -> tuple[float, float, int]:
    """Wall seconds, the worst precision reached, and how many cases hit --max-time."""
    start, worst, capped = time.perf_counter(), 0.0, 0
    for _, kernel, sizes in SWEEPS:
        done = subprocess.run([sys.executable, "-m", "commscope.cli", "run", kernel, "--sizes",
                               sizes, "--json", "--db", str(db), "--mpi", str(mpi.mpicc)],
                              capture_output=True, text=True, check=True)
        for case in json.loads(done.stdout):
            worst = max(worst, case["precision"])
            capped += case["capped"]
    return time.perf_counter() - start, worst, capped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    mpi = find_mpi(args.mpi)
    native_binary(mpi)  # built before timing: a user's second run finds it cached
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "fixed_count"
        subprocess.run([str(mpi.mpicc), "-O2", "-o", str(binary), str(HERE / "fixed_count.c")],
                       check=True)
        theirs, ours = [], []
        for _ in range(args.rounds):
            theirs.append(fixed_count(mpi, binary))
            ours.append(commscope(mpi, Path(tmp) / "bench.db"))
    wall = statistics.median(w for w, _, _ in ours)
    fixed = statistics.median(theirs)
    print(f"MPI: {mpi.family} in {mpi.bin_dir.parent}  ({args.rounds} alternating rounds, medians)")
    print(f"fixed-count (OSU default counts, no CI)   {fixed:6.2f} s")
    print(f"commscope --precision 1% (CI per case)    {wall:6.2f} s")
    print(f"wall-time ratio {wall / fixed:.2f}  (goal <= 1)")
    print(f"worst precision reached {max(p for _, p, _ in ours):.2%}; cases stopped by "
          f"--max-time: {sum(c for _, _, c in ours)} over {args.rounds} rounds")


if __name__ == "__main__":
    main()
