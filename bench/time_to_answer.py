"""Time to an answer: commscope's default against a fixed-count tool, side by side.

The fixed-count side (bench/fixed_count.c, an OSU-style loop) sweeps 0 B-4 MiB
ping-pong and 1 B-4 MiB bw with the OSU Micro-Benchmarks' default iteration counts
and prints a mean per size, with no interval. commscope runs the same two sweeps
with its defaults: launches auto, each case's launch-aware interval aimed at +-5%
in at most 1 s of launches per run (docs/statistics.md). Both are timed as a user
waits for them: wall time of the whole command, launcher start-up included. Rounds
alternate so that drift on this shared machine hits both. Prints each side's wall
time, their ratio (goal <= 1) and the widest interval commscope reported, then how
far each side's answer for one size moved from round to round: the fixed count's
means carry no interval, and this spread is the only sign of their precision.

With --osu DIR the fixed-count side is the OSU Micro-Benchmarks themselves, osu_latency
and osu_bw from DIR at their defaults (0 B/1 B-4 MiB), launched the same way.

usage: python bench/time_to_answer.py [--mpi PREFIX] [--osu DIR] [--rounds N] [--smoke]
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
from typing import NamedTuple

from commscope.system.build import native_binary
from commscope.system.launcher import launch
from commscope.system.mpi import find_mpi

HERE = Path(__file__).resolve().parent
MAX_BYTES = 4 << 20
SMOKE_MAX_BYTES = 64  # 1 round up to 64 B: the same launches and parsing, in seconds
SWEEPS = (("latency", "pingpong", 0), ("bw", "bw", 1))  # each from its smallest size


def fixed_count(mpi, programs: list[tuple[Path, list[str], str]]) -> tuple[float, dict]:
    """Wall seconds and the mean per (sweep, bytes) of each program (binary, its arguments,
    the commscope kernel it matches), run one after the other as a user would."""
    start, answers = time.perf_counter(), {}
    for binary, args, kernel in programs:
        how = launch(mpi, 2, binary, args)
        done = subprocess.run(how.argv, env=how.env, capture_output=True, text=True, check=True)
        for line in done.stdout.splitlines():
            fields = line.split()
            if len(fields) == 2 and not line.startswith("#"):  # OSU's comments and header
                answers[kernel, int(fields[0])] = float(fields[1])
    return time.perf_counter() - start, answers


class Ours(NamedTuple):
    wall: float     # seconds
    worst: float    # the widest interval's reach, relative to its median
    launches: int   # the most launches a case took
    answers: dict   # the median per (sweep, bytes)
    disagree: int   # cases whose launches disagree beyond any interval (no precision)


def commscope(mpi, db: Path, max_bytes: int) -> Ours:
    start, worst, launches, answers, disagree = time.perf_counter(), 0.0, 0, {}, 0
    for _, kernel, smallest in SWEEPS:
        done = subprocess.run([sys.executable, "-m", "commscope.cli", "run", kernel, "--sizes",
                               f"{smallest}:{max_bytes}", "--json", "--db", str(db),
                               "--mpi", str(mpi.mpicc)],
                              capture_output=True, text=True, check=True)
        for case in json.loads(done.stdout)["cases"]:
            # none where the launches disagree beyond any interval (disagree): counted apart
            disagree += case["precision"] is None
            worst = max(worst, case["precision"] or 0.0)
            launches = max(launches, case["launches"])
            answers[kernel, case["bytes"]] = case["median_s"]
    return Ours(time.perf_counter() - start, worst, launches, answers, disagree)


def launch_spread(rounds: list[dict]) -> tuple[float, str]:
    """The largest (max - min) / median of one size's answers across launches, and where."""
    spreads = {}
    for key in rounds[0]:
        values = [answers[key] for answers in rounds]
        spreads[key] = (max(values) - min(values)) / statistics.median(values)
    kernel, size = max(spreads, key=spreads.get)
    return spreads[kernel, size], f"{kernel} {size} B"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi")
    ap.add_argument("--osu", metavar="DIR",
                    help="a folder holding osu_latency and osu_bw built with this MPI: "
                         "they are the fixed-count side, at their defaults")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--smoke", action="store_true",
                    help=f"1 round up to {SMOKE_MAX_BYTES} B: the same path, for "
                         "tests/test_bench.py")
    args = ap.parse_args()
    max_bytes = SMOKE_MAX_BYTES if args.smoke else MAX_BYTES
    if args.smoke:
        # One round: the launch-to-launch spread needs two, but reads only what the
        # first round already parsed.
        args.rounds = 1
    mpi = find_mpi(args.mpi)
    native_binary(mpi)  # built before timing: a user's second run finds it cached
    with tempfile.TemporaryDirectory() as tmp:
        if args.osu:
            osu = Path(args.osu)
            limit = ["-m", f"1:{max_bytes}"] if args.smoke else []
            programs = [(osu / "osu_latency", limit, "pingpong"), (osu / "osu_bw", limit, "bw")]
            label = "osu_latency + osu_bw (their defaults, no CI)"
        else:
            binary = Path(tmp) / "fixed_count"
            subprocess.run([str(mpi.mpicc), "-O2", "-o", str(binary),
                            str(HERE / "fixed_count.c")], check=True)
            programs = [(binary, [mode, str(max_bytes)], kernel) for mode, kernel, _ in SWEEPS]
            label = "fixed-count (OSU default counts, no CI)"
        theirs, ours = [], []
        for i in range(args.rounds):
            theirs.append(fixed_count(mpi, programs))
            # a results file of its own per round: its first command measures the host's
            # memcpy ceiling, as a user's first command of the hour does
            ours.append(commscope(mpi, Path(tmp) / f"bench{i}.db", max_bytes))
    wall = statistics.median(run.wall for run in ours)
    fixed = statistics.median(w for w, _ in theirs)
    print(f"MPI: {mpi.family} in {mpi.bin_dir.parent}  "
          f"({args.rounds} alternating rounds, medians)")
    print(f"{label:<47}{fixed:6.2f} s")
    print(f"{'commscope defaults (launch-aware CI per case)':<47}{wall:6.2f} s")
    print(f"wall-time ratio {wall / fixed:.2f}  (goal <= 1)")
    print(f"widest interval +-{max(run.worst for run in ours):.1%}; most launches of a case: "
          f"{max(run.launches for run in ours)}")
    disagree = sum(run.disagree for run in ours)
    if disagree:
        print(f"cases whose launches disagree beyond any interval (x/10): {disagree}")
    if args.rounds > 1:
        for name, answers in (("fixed-count means", [a for _, a in theirs]),
                              ("commscope medians", [run.answers for run in ours])):
            spread, where = launch_spread(answers)
            print(f"{name}: largest launch-to-launch spread {spread:.1%} ({where})")


if __name__ == "__main__":
    main()
