"""Do commscope's intervals hold from one invocation to the next, and does compare stay
quiet when nothing changed? Separate invocations of the same default commands:

  commscope run pingpong --sizes 8:1MiB
  commscope run bw --sizes 4KiB:1MiB

invocations of the two alternating, every invocation of a command into one results
file, as a user keeps one: each invocation's figures are what it printed, with the
history of the invocations before it (replication.py). Prints, per
kernel and over all sizes:
  overlap   the share of pairs of invocations whose 95% intervals of a size overlap,
            of all pairs and of pairs in the same level (goal >= 98%)
  coverage  the share of intervals that cover the median of the invocations' medians of
            their size in their level (a size whose invocations fall into two levels,
            replication.regimes, has one median per level; goal >= 90%)
  half-width  the median reach of an interval from its median, and the widest
  before    the same invocations' stored launches replayed, right after each invocation,
            through the estimator before issue 37 (commit BEFORE, from git): its
            overlap, coverage and half-width, the median of each interval's width
            over the replayed one's (goal <= 0.6), and its compare of the same pairs
then compare of disjoint pairs of invocations (1 with 2, 3 with 4, ...), each right
after its second invocation: the share that calls no regression, i.e. exits 0 or 3
(3: some case undetermined) (goal >= 95% of at least 20 pairs).

usage: python bench/calibration.py [--mpi PREFIX] [--invocations N] [--smoke]
(N even, >= 40 for 20 pairs; default 40)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from commscope.system.build import native_binary
from commscope.system.mpi import find_mpi
from commscope.stats.replication import regimes

HERE = Path(__file__).resolve().parent
BEFORE = "b63b3ae"  # main before issue 37's interval: its estimator, replayed
BEFORE_SCHEMA = 8  # the results schema BEFORE reads
# Prints each case of a run as that checkout's results.measured gives it (argv: db, run).
REPLAY = ("import json, sys; from commscope.store import Store; "
          "from commscope.results import measured; "
          "print(json.dumps([{k: s[k] for k in ('median_s', 'ci_low_s', 'ci_high_s', "
          "'precision')} for _, s in measured(Store(sys.argv[1]), [int(sys.argv[2])])]))")

COMMANDS = {"pingpong": "8:1MiB", "bw": "4KiB:1MiB"}
# The smoke test's: 2 invocations (1 pair to compare) of each command, over fewer sizes.
SMOKE_COMMANDS = {"pingpong": "8:64", "bw": "4KiB:8KiB"}


def cli(*args: str, src: Path | None = None) -> subprocess.CompletedProcess:
    """commscope, or with `src` the checkout of another commit's (its source tree)."""
    env = {**os.environ, "PYTHONPATH": str(src)} if src else None
    return subprocess.run([sys.executable, "-m", "commscope.cli", *args],
                          capture_output=True, text=True, env=env)


def invoke(kernel: str, sizes: str, db: Path, mpi: str) -> list[dict]:
    done = cli("run", kernel, "--sizes", sizes, "--json", "--db", str(db), "--mpi", mpi)
    if done.returncode != 0:
        sys.exit(f"calibration: {kernel} failed: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)["cases"]


def before_checkout(tmp: Path) -> Path | None:
    """The source tree of commit BEFORE, or None where git or the commit is not there."""
    where = tmp / "before"
    where.mkdir()
    archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", BEFORE, "src"],
                             capture_output=True)
    if archive.returncode:
        return None
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return where / "src"


def as_before(db: Path) -> Path:
    """A copy of the store labelled with BEFORE's schema, for its code to read: the later
    schemas only add tables."""
    copy = db.with_name(f"{db.stem}-before.db")
    copy.unlink(missing_ok=True)
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)  # with what its write-ahead log holds
        target.execute(f"PRAGMA user_version = {BEFORE_SCHEMA}")
    return copy


def replay(src: Path, db: Path, run: int) -> list[dict]:
    """The run's cases as the estimator of `src` computes them from the store as it is."""
    done = subprocess.run([sys.executable, "-c", REPLAY, str(as_before(db)), str(run)],
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(src)})
    if done.returncode:
        sys.exit(f"calibration: the replay failed: {done.stderr.strip()[-400:]}")
    return json.loads(done.stdout)


def levels(medians: list[float]) -> list[int]:
    """Each invocation's level at one size: 0, or 1 above the split of two levels."""
    two, part = regimes(np.log(medians))
    return [0] * len(medians) if two is None else [int(p) for p in part]


def calibration(runs: list[list[dict]]) -> dict:
    """Overlap (all pairs, and pairs in one level), coverage of the median of each
    invocation's level, and half-widths over the invocations of one command."""
    overlap = pairs = same = same_pairs = covered = intervals = 0
    widths = []
    for cases in zip(*runs):
        level = levels([c["median_s"] for c in cases])
        consensus = {v: statistics.median(c["median_s"] for c, w in zip(cases, level) if w == v)
                     for v in set(level)}
        for c, v in zip(cases, level):
            intervals += 1
            covered += c["ci_low_s"] <= consensus[v] <= c["ci_high_s"]
            widths.append(c["precision"])
        for (a, va), (b, vb) in itertools.combinations(zip(cases, level), 2):
            meet = a["ci_low_s"] <= b["ci_high_s"] and b["ci_low_s"] <= a["ci_high_s"]
            pairs += 1
            overlap += meet
            same_pairs += va == vb
            same += meet and va == vb
    return {"overlap": overlap / pairs, "same_level": same / same_pairs,
            "coverage": covered / intervals, "half_width": statistics.median(widths),
            "widest": max(widths),
            "launches": statistics.median(c.get("launches", 0) for r in runs for c in r)}


def line(c: dict) -> str:
    return (f"overlap {c['overlap']:.0%}, in a level {c['same_level']:.0%} (goal >= 98%), "
            f"coverage {c['coverage']:.0%} (goal >= 90%), half-width median "
            f"+-{c['half_width']:.1%} widest +-{c['widest']:.1%}")


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
    replayed = {k: [] for k in commands}
    exits = {k: [] for k in commands}
    before_exits = {k: [] for k in commands}
    with tempfile.TemporaryDirectory() as tmp:
        src = before_checkout(Path(tmp))
        for i in range(args.invocations):
            for kernel, sizes in commands.items():
                db = Path(tmp) / f"{kernel}.db"
                results[kernel].append(invoke(kernel, sizes, db, str(mpi.mpicc)))
                if src is not None:
                    replayed[kernel].append(replay(src, db, results[kernel][-1][0]["run"]))
                if args.keep:
                    Path(args.keep).mkdir(parents=True, exist_ok=True)
                    (Path(args.keep) / f"{kernel}{i}.json").write_text(
                        json.dumps(results[kernel][-1]))
                if i % 2:  # runs i and i + 1 of the file: invocations i - 1 and i
                    for code, where in ((exits, None), (before_exits, src)):
                        if code is before_exits and src is None:
                            continue
                        read = db if where is None else as_before(db)
                        done = cli("compare", str(i), str(i + 1), "--db", str(read), src=where)
                        if done.returncode not in (0, 1, 3):
                            sys.exit(f"calibration: compare failed: {done.stderr.strip()}")
                        code[kernel].append(done.returncode)
    print(f"MPI: {mpi.family} in {mpi.bin_dir.parent}; {args.invocations} invocations of each "
          "command, alternating")
    for kernel, sizes in commands.items():
        c = calibration(results[kernel])
        calm = len(exits[kernel]) - exits[kernel].count(1)  # no regression: exit 0 or 3
        print(f"{kernel} {sizes}: {line(c)}, launches median {c['launches']:g}; compare "
              f"calls no regression in {calm}/{len(exits[kernel])} pairs = "
              f"{calm / len(exits[kernel]):.0%} (goal >= 95%)")
        if not replayed[kernel]:
            print(f"  before ({BEFORE}): not replayed, its commit is not in this checkout")
            continue
        old = calibration(replayed[kernel])
        ratio = statistics.median(
            a["precision"] / b["precision"] for r, q in zip(results[kernel], replayed[kernel])
            for a, b in zip(r, q) if b["precision"])
        print(f"  before ({BEFORE}): {line(old)}; width now over before: median "
              f"{ratio:.2f} (goal <= 0.6); compare calls no regression in "
              f"{len(before_exits[kernel]) - before_exits[kernel].count(1)}/"
              f"{len(before_exits[kernel])} pairs")


if __name__ == "__main__":
    main()
