"""Agreement with the reference: commscope bw and bibw against osu_bw and osu_bibw.

Same MPI, same minutes, alternating: each round runs osu_bw and osu_bibw (OSU
Micro-Benchmarks, built by the user: --osu DIR holding osu_bw, osu_bibw and
osu_latency), the
OSU-style control loop of our own (bench/fixed_count.c, bw only: the same
window, one send and one receive buffer, a fixed count), and `commscope run bw`
and `run bibw` at their defaults. Every side reports MB = 10^6 bytes. Prints per
size the median over rounds of each side's figure and the ratios commscope/OSU
and control/OSU (goal: commscope/OSU within 2% of 1 at 1 MiB and 4 MiB, and
bibw at 1 MiB); the round-to-round spread of each ratio says how much of a
difference is launch noise. Last, 8 B ping-pong against osu_latency, whose
definition differs (a mean of round trips each timed by its own MPI_Wtime
reads; docs/references.md): there a ratio below 1 is expected.

usage: python bench/agreement.py --osu DIR [--mpi PREFIX] [--rounds N] [--smoke]
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

from commscope.build import native_binary
from commscope.launcher import launch
from commscope.mpi import find_mpi
from commscope.sizes import format_bytes

HERE = Path(__file__).resolve().parent


class Sizes(NamedTuple):
    bw: tuple[int, ...]
    bibw: tuple[int, ...]
    latency: tuple[int, ...]


BENCH = Sizes(bw=(1 << 20, 4 << 20), bibw=(1 << 20,), latency=(8,))
# The smoke test's: 1 round of small sizes, each command one short launch (its figures,
# not their precision): every command and flag as is.
SMOKE = Sizes(bw=(64 << 10,), bibw=(64 << 10,), latency=(8,))
SMOKE_RUN = ("--launches", "1", "--iters", "5")
MB = 1e6
WINDOW = 64  # fixed_count.c's, osu_bw's and commscope bw's default


def osu(mpi, binary: Path, sizes) -> dict[int, float]:
    """osu_bw or osu_bibw's MB/s (osu_latency's us) per size, as it prints them."""
    how = launch(mpi, 2, binary, ["-m", f"{min(sizes)}:{max(sizes)}"])
    done = subprocess.run(how.argv, env=how.env, capture_output=True, text=True, check=True)
    rows = [line.split() for line in done.stdout.splitlines() if line[:1].isdigit()]
    return {int(r[0]): float(r[1]) for r in rows if int(r[0]) in sizes}


def control(mpi, binary: Path, sizes) -> dict[int, float]:
    """The fixed-count OSU-style bw loop's MB/s per size (its output: mean seconds per
    window of WINDOW messages)."""
    how = launch(mpi, 2, binary, ["bw", str(max(sizes))])
    done = subprocess.run(how.argv, env=how.env, capture_output=True, text=True, check=True)
    rows = (line.split() for line in done.stdout.splitlines())
    return {int(n): WINDOW * int(n) / float(t) / MB for n, t in rows if int(n) in sizes}


def ours(mpi, kernel: str, sizes, db: Path, quick: tuple[str, ...]) -> dict[int, float]:
    """MB/s per size, or latency in us for pingpong; `quick`: flags that make it short."""
    done = subprocess.run([sys.executable, "-m", "commscope.cli", "run", kernel, "--sizes",
                           ",".join(map(str, sizes)), *quick, "--json", "--db", str(db),
                           "--mpi", str(mpi.mpicc)], capture_output=True, text=True, check=True)
    return {c["bytes"]: c["median_s"] * 1e6 if kernel == "pingpong" else c["bandwidth_MBps"]
            for c in json.loads(done.stdout)["cases"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--osu", required=True, help="directory with osu_bw and osu_bibw")
    ap.add_argument("--mpi")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--smoke", action="store_true",
                    help="1 round of short commands at 64 KiB and 8 B: the same path, for "
                         "tests/test_bench.py")
    args = ap.parse_args()
    sizes, quick = (SMOKE, SMOKE_RUN) if args.smoke else (BENCH, ())
    if args.smoke:
        args.rounds = 1
    mpi = find_mpi(args.mpi)
    native_binary(mpi)
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        fixed = Path(tmp) / "fixed_count"
        subprocess.run([str(mpi.mpicc), "-O2", "-o", str(fixed), str(HERE / "fixed_count.c")],
                       check=True)
        for i in range(args.rounds):
            db = Path(tmp) / f"agree{i}.db"
            rounds.append({"osu_bw": osu(mpi, Path(args.osu) / "osu_bw", sizes.bw),
                           "control": control(mpi, fixed, sizes.bw),
                           "bw": ours(mpi, "bw", sizes.bw, db, quick),
                           "osu_bibw": osu(mpi, Path(args.osu) / "osu_bibw", sizes.bibw),
                           "bibw": ours(mpi, "bibw", sizes.bibw, db, quick),
                           "osu_latency": osu(mpi, Path(args.osu) / "osu_latency",
                                              sizes.latency),
                           "pingpong": ours(mpi, "pingpong", sizes.latency, db, quick)})
    print(f"MPI: {mpi.family} in {mpi.bin_dir.parent}  ({args.rounds} alternating rounds; "
          "MB/s medians over rounds; ratio: median of the rounds' ratios [min-max])")
    for kernel, reference, ns in (("bw", "osu_bw", sizes.bw), ("bibw", "osu_bibw", sizes.bibw),
                                  ("pingpong", "osu_latency", sizes.latency)):
        for n in ns:
            def med(side):
                return statistics.median(r[side][n] for r in rounds)

            def ratio(side):
                values = [r[side][n] / r[reference][n] for r in rounds]
                return f"{statistics.median(values):.3f} [{min(values):.3f}-{max(values):.3f}]"

            unit = "us" if kernel == "pingpong" else "MB/s"
            line = (f"{kernel:8s} {format_bytes(n):>6}: {reference} {med(reference):9,.2f} {unit}"
                    f"  commscope {med(kernel):9,.2f}  commscope/{reference} {ratio(kernel)}")
            if kernel == "bw":
                line += f"  control/{reference} {ratio('control')}"
            print(line)


if __name__ == "__main__":
    main()
