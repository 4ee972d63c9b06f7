"""Do commscope's intervals hold from one invocation to the next, and does compare stay
quiet when nothing changed? Separate invocations of the same default commands:

  commscope run pingpong --sizes 8:1MiB
  commscope run bw --sizes 4KiB:1MiB

invocations of the two alternating, every invocation of a command into one results
file, as a user keeps one: each invocation's figures are what it printed, with the
history of the invocations before it (replication.py). Prints, per
kernel and over all sizes:
  overlap   the share of pairs of invocations whose 95% intervals of a size overlap
            (goal >= 90%)
  coverage  the share of intervals that cover the median of all invocations' medians
            of their size (goal >= 80%)
  half-width  the median reach of an interval from its median, and the widest
then compare of disjoint pairs of invocations (1 with 2, 3 with 4, ...), each right
after its second invocation: the share that exits 0, i.e. calls no regression (goal
>= 95% of at least 20 pairs).

usage: python bench/calibration.py [--mpi PREFIX] [--invocations N] [--smoke]
(N even, >= 40 for 20 pairs; default 40)
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from commscope.build import native_binary
from commscope.mpi import find_mpi

COMMANDS = {"pingpong": "8:1MiB", "bw": "4KiB:1MiB"}
# The smoke test's: 2 invocations (1 pair to compare) of each command, over fewer sizes.
SMOKE_COMMANDS = {"pingpong": "8:64", "bw": "4KiB:8KiB"}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "commscope.cli", *args],
                          capture_output=True, text=True)


def invoke(kernel: str, sizes: str, db: Path, mpi: str) -> list[dict]:
    done = cli("run", kernel, "--sizes", sizes, "--json", "--db", str(db), "--mpi", mpi)
    if done.returncode != 0:
        sys.exit(f"calibration: {kernel} failed: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)["cases"]


def calibration(runs: list[list[dict]]) -> dict:
    """Overlap, coverage and half-widths over the invocations of one command."""
    overlap = pairs = covered = intervals = 0
    widths = []
    for i, cases in enumerate(zip(*runs)):
        consensus = statistics.median(c["median_s"] for c in cases)
        for c in cases:
            intervals += 1
            covered += c["ci_low_s"] <= consensus <= c["ci_high_s"]
            widths.append(c["precision"])
        for a, b in itertools.combinations(cases, 2):
            pairs += 1
            overlap += a["ci_low_s"] <= b["ci_high_s"] and b["ci_low_s"] <= a["ci_high_s"]
    return {"overlap": overlap / pairs, "coverage": covered / intervals,
            "half_width": statistics.median(widths), "widest": max(widths),
            "launches": statistics.median(c["launches"] for r in runs for c in r)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi")
    ap.add_argument("--invocations", type=int, default=40)
    ap.add_argument("--keep", metavar="DIR", help="keep each invocation's JSON output here")
    ap.add_argument("--smoke", action="store_true",
                    help="2 invocations over fewer sizes: the same path, for tests/test_bench.py")
    args = ap.parse_args()
    commands = SMOKE_COMMANDS if args.smoke else COMMANDS
    if args.smoke:
        args.invocations = 2
    mpi = find_mpi(args.mpi)
    native_binary(mpi)
    results = {k: [] for k in commands}
    exits = {k: [] for k in commands}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.invocations):
            for kernel, sizes in commands.items():
                db = Path(tmp) / f"{kernel}.db"
                results[kernel].append(invoke(kernel, sizes, db, str(mpi.mpicc)))
                if args.keep:
                    Path(args.keep).mkdir(parents=True, exist_ok=True)
                    (Path(args.keep) / f"{kernel}{i}.json").write_text(
                        json.dumps(results[kernel][-1]))
                if i % 2:  # runs i and i + 1 of the file: invocations i - 1 and i
                    done = cli("compare", str(i), str(i + 1), "--db", str(db))
                    if done.returncode not in (0, 1):
                        sys.exit(f"calibration: compare failed: {done.stderr.strip()}")
                    exits[kernel].append(done.returncode)
    print(f"MPI: {mpi.family} in {mpi.bin_dir.parent}; {args.invocations} invocations of each "
          "command, alternating")
    for kernel, sizes in commands.items():
        c = calibration(results[kernel])
        quiet = exits[kernel].count(0) / len(exits[kernel])
        print(f"{kernel} {sizes}: overlap {c['overlap']:.0%} (goal >= 90%), coverage "
              f"{c['coverage']:.0%} (goal >= 80%), half-width median +-{c['half_width']:.1%} "
              f"widest +-{c['widest']:.1%}, launches median {c['launches']:g}; compare exits 0 "
              f"in {exits[kernel].count(0)}/{len(exits[kernel])} pairs = {quiet:.0%} "
              "(goal >= 95%)")


if __name__ == "__main__":
    main()
