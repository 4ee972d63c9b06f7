"""Agreement with the reference: commscope against OSU Micro-Benchmarks, kernel by kernel.

Same MPI, same minutes, alternating: each round runs the OSU program (built by the user:
--osu DIR holding them), then the commscope command that measures the same thing at its
defaults. Every side reports MB = 10^6 bytes.

Point-to-point (--part p2p): osu_bw and osu_bibw, the OSU-style control loop of our own
(bench/fixed_count.c, bw only: the same window, one send and one receive buffer, a fixed
count), and `commscope run bw` and `run bibw` (goal: within 5% of OSU at 1 MiB and 4 MiB,
and bibw at 1 MiB); last, 8 B ping-pong against osu_latency, whose definition differs (a
mean of round trips each timed by its own MPI_Wtime reads; docs/references.md). With
--imb PATH (an IMB-MPI1 built with the same MPI), ping-pong and ping-ping at 8 B, 64 KiB and
1 MiB against IMB-MPI1's PingPong and PingPing t[usec].

Collectives (--part collectives): allreduce, reduce, reduce_scatter, bcast, gather, scatter,
allgather and alltoall at 2 and 4 ranks, 8 B to 1 MiB, against the matching osu_* with -f
(reductions with -T mpi_int, as commscope's default int elements): commscope's median (the
slowest rank's call) against OSU's Max Latency, and its rank-mean against OSU's Avg Latency
(docs/references.md says why), and OSU's own statistic computed from commscope's raw
samples (each rank's mean, the largest per launch, the median over launches: `as-osu`), which
tells a difference of estimator from one of measurement; iallreduce's pure time against
osu_iallreduce's Max Comm.
Goal: within 10% at 2 ranks and 15% at 4 (4 ranks oversubscribe a 2-core host).

Many-rank and one-sided (--part other): multi_lat at 2 and 4 ranks against osu_multi_lat
(pair 0's half round trip on both sides), and `run rma` put and get of one operation per
lock_all/flush epoch against osu_put_latency and osu_get_latency (flush, MPI_Win_allocate),
8 B and 64 KiB: for information, the definitions differ (docs/references.md).

Prints per figure the median over rounds of each side and the median of the rounds'
ratios [min-max]: the round-to-round spread of a ratio says how much of a difference is
launch noise.

usage: python bench/agreement.py --osu DIR [--imb IMB-MPI1] [--mpi PREFIX] [--rounds N]
                                 [--part p2p|collectives|other|all] [--smoke]
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
from commscope.system.sizes import format_bytes
from commscope.store.store import Store

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


class Collectives(NamedTuple):
    kernels: tuple[str, ...]
    ranks: tuple[int, ...]
    sizes: tuple[int, ...]


COLLECTIVES = Collectives(("allreduce", "reduce", "reduce_scatter", "bcast", "gather", "scatter",
                           "allgather", "alltoall", "iallreduce"), (2, 4),
                          (8, 1 << 10, 64 << 10, 1 << 20))
SMOKE_COLLECTIVES = Collectives(("allreduce", "iallreduce"), (2,), (8,))
REDUCTIONS = {"allreduce", "reduce", "reduce_scatter", "iallreduce"}
GOAL = {2: 0.10, 4: 0.15}  # the issue's: within 10% of OSU at 2 ranks, 15% at 4
# osu_* -f columns after the size: blocking Avg, Min, Max (us), Iterations; osu_iallreduce
# Overall, Compute, Coll. Init, MPI_Test, MPI_Wait, Pure Comm., Min Comm., Max Comm. (us),
# Overlap (%).
OSU_AVG, OSU_MAX, OSU_PURE_MAX = 0, 2, 7
OTHER_SIZES, SMOKE_OTHER_SIZES = (8, 64 << 10), (8,)


def osu_rows(mpi, ranks: int, binary: Path, args: list[str]) -> dict[int, list[float]]:
    """An OSU program's numeric columns per size, as it prints them."""
    how = launch(mpi, ranks, binary, args)
    done = subprocess.run(how.argv, env=how.env, capture_output=True, text=True, check=True)
    rows = (line.split() for line in done.stdout.splitlines() if line[:1].isdigit())
    return {int(r[0]): [float(x) for x in r[1:]] for r in rows}


def osu(mpi, binary: Path, sizes) -> dict[int, float]:
    """osu_bw or osu_bibw's MB/s (osu_latency's us) per size, as it prints them."""
    rows = osu_rows(mpi, 2, binary, ["-m", f"{min(sizes)}:{max(sizes)}"])
    return {n: row[0] for n, row in rows.items() if n in sizes}


def control(mpi, binary: Path, sizes) -> dict[int, float]:
    """The fixed-count OSU-style bw loop's MB/s per size (its output: mean seconds per
    window of WINDOW messages)."""
    how = launch(mpi, 2, binary, ["bw", str(max(sizes))])
    done = subprocess.run(how.argv, env=how.env, capture_output=True, text=True, check=True)
    rows = (line.split() for line in done.stdout.splitlines())
    return {int(n): WINDOW * int(n) / float(t) / MB for n, t in rows if int(n) in sizes}


def run(mpi, kernel: str, args: list[str], db: Path, quick: tuple[str, ...]) -> dict[int, dict]:
    """commscope's JSON case per size; `quick`: flags that make it short (smoke)."""
    done = subprocess.run([sys.executable, "-m", "commscope.cli", "run", kernel, *args, *quick,
                           "--json", "--db", str(db), "--mpi", str(mpi.mpicc)],
                          capture_output=True, text=True, check=True)
    return {c["bytes"]: c for c in json.loads(done.stdout)["cases"]}


def ours(mpi, kernel: str, sizes, db: Path, quick: tuple[str, ...]) -> dict[int, float]:
    """MB/s per size, or latency in us for pingpong; `quick`: flags that make it short."""
    cases = run(mpi, kernel, ["--sizes", ",".join(map(str, sizes))], db, quick)
    return {n: c["median_s"] * 1e6 if kernel == "pingpong" else c["bandwidth_MBps"]
            for n, c in cases.items()}


def p2p_round(mpi, osu_dir: Path, fixed: Path, sizes: Sizes, db: Path,
              quick: tuple[str, ...]) -> dict[str, float]:
    """Every point-to-point figure of one round, by name."""
    got = {}
    for kernel, reference, ns in (("bw", "osu_bw", sizes.bw), ("bibw", "osu_bibw", sizes.bibw),
                                  ("pingpong", "osu_latency", sizes.latency)):
        theirs = osu(mpi, osu_dir / reference, ns)
        mine = ours(mpi, kernel, ns, db, quick)
        unit = "us" if kernel == "pingpong" else "MB/s"
        for n in ns:
            got[f"{kernel} {format_bytes(n)} {unit} {reference}"] = theirs[n]
            got[f"{kernel} {format_bytes(n)} {unit} commscope"] = mine[n]
        if kernel == "bw":
            for n, value in control(mpi, fixed, ns).items():
                got[f"{kernel} {format_bytes(n)} {unit} control"] = value
    return got


IMB_SIZES = (8, 64 << 10, 1 << 20)


def imb(mpi, binary: Path) -> dict[str, dict[int, float]]:
    """IMB-MPI1's PingPong and PingPing t[usec] per size, as it prints them."""
    how = launch(mpi, 2, binary, ["PingPong", "PingPing", "-msglog", "3:20"])
    done = subprocess.run(how.argv, env=how.env, capture_output=True, text=True, check=True)
    found: dict[str, dict[int, float]] = {}
    benchmark = None
    for line in done.stdout.splitlines():
        if line.startswith("# Benchmarking"):
            benchmark = line.split()[2]
        elif benchmark and line.split() and line.split()[0].isdigit():
            size, _, t_us, *_ = line.split()
            found.setdefault(benchmark, {})[int(size)] = float(t_us)
    return found


def imb_round(mpi, binary: Path, db: Path, quick: tuple[str, ...]) -> dict[str, float]:
    """commscope pingpong and pingping against IMB-MPI1's PingPong and PingPing, in us."""
    got = {}
    theirs = imb(mpi, binary)
    listed = ",".join(map(str, IMB_SIZES))
    for kernel, reference in (("pingpong", "PingPong"), ("pingping", "PingPing")):
        mine = run(mpi, kernel, ["--sizes", listed], db, quick)
        for n in IMB_SIZES:
            stem = f"{kernel} {format_bytes(n)} imb us"
            got[f"{stem} IMB-{reference}"] = theirs[reference][n]
            got[f"{stem} commscope"] = mine[n]["median_s"] * 1e6
    return got


def osu_collective(mpi, osu_dir: Path, kernel: str, ranks: int, sizes) -> dict[int, list[float]]:
    """The osu_* program's -f columns per commscope size. osu_reduce_scatter's size is the
    whole vector, P blocks of commscope's size."""
    scale = ranks if kernel == "reduce_scatter" else 1
    args = ["-f", "-m", f"{min(sizes) * scale}:{max(sizes) * scale}"]
    if kernel in REDUCTIONS:
        args += ["-T", "mpi_int"]
    rows = osu_rows(mpi, ranks, osu_dir / f"osu_{kernel}", args)
    return {n: rows[n * scale] for n in sizes}


def as_osu(db: Path) -> dict[int, float]:
    """OSU's maximum from the last run's raw samples, per size: per launch the largest over
    ranks of each rank's mean over its samples, then the median over launches (us)."""
    store = Store(db)
    run_id = max(r.id for r in store.runs())
    per_size: dict[int, list[float]] = {}
    for case in store.cases(run_id):
        ranks = store.rank_samples(case.id)
        per_size.setdefault(case.bytes, []).append(float(ranks.mean(axis=1).max()) * 1e6)
    store.close()
    return {n: statistics.median(v) for n, v in per_size.items()}


def collectives_round(mpi, osu_dir: Path, coll: Collectives, db: Path,
                      quick: tuple[str, ...]) -> dict[str, float]:
    """Every collective figure of one round, by name: commscope's median (the slowest rank's)
    and rank-mean against OSU's max and average over ranks; iallreduce's pure."""
    got = {}
    for ranks in coll.ranks:
        for kernel in coll.kernels:
            theirs = osu_collective(mpi, osu_dir, kernel, ranks, coll.sizes)
            mine = run(mpi, kernel, ["--np", str(ranks), "--sizes",
                                     ",".join(map(str, coll.sizes))], db, quick)
            osu_stat = as_osu(db)
            for n in coll.sizes:
                stem = f"{kernel} np{ranks} {format_bytes(n)}"
                if kernel == "iallreduce":
                    got[f"{stem} pure us osu-max"] = theirs[n][OSU_PURE_MAX]
                    got[f"{stem} pure us commscope"] = mine[n]["pure_s"] * 1e6
                    continue
                got[f"{stem} us osu-max"] = theirs[n][OSU_MAX]
                got[f"{stem} us commscope"] = mine[n]["median_s"] * 1e6
                got[f"{stem} as-osu us osu-max"] = theirs[n][OSU_MAX]
                got[f"{stem} as-osu us commscope"] = osu_stat[n]
                got[f"{stem} rank-mean us osu-avg"] = theirs[n][OSU_AVG]
                got[f"{stem} rank-mean us commscope"] = mine[n]["rank_mean_median_s"] * 1e6
    return got


def other_round(mpi, osu_dir: Path, sizes, db: Path,
                quick: tuple[str, ...]) -> dict[str, float]:
    """multi_lat against osu_multi_lat, rma put and get against osu_put_latency and
    osu_get_latency, in us."""
    got = {}
    spec = ["-m", f"{min(sizes)}:{max(sizes)}"]
    listed = ",".join(map(str, sizes))
    for ranks in (2, 4):
        theirs = osu_rows(mpi, ranks, osu_dir / "osu_multi_lat", spec)
        mine = run(mpi, "multi_lat", ["--np", str(ranks), "--sizes", listed], db, quick)
        for n in sizes:
            got[f"multi_lat np{ranks} {format_bytes(n)} us osu_multi_lat"] = theirs[n][0]
            got[f"multi_lat np{ranks} {format_bytes(n)} us commscope"] = mine[n]["median_s"] * 1e6
    for operation in ("put", "get"):
        reference = f"osu_{operation}_latency"
        theirs = osu_rows(mpi, 2, osu_dir / reference, spec)
        mine = run(mpi, "rma", ["--operation", operation, "--sync", "lock_all_flush",
                                "--window", "1", "--sizes", listed], db, quick)
        for n in sizes:
            got[f"rma {operation} {format_bytes(n)} us {reference}"] = theirs[n][0]
            got[f"rma {operation} {format_bytes(n)} us commscope"] = mine[n]["median_s"] * 1e6
    return got


def report(rounds: list[dict[str, float]]) -> None:
    """Each figure that has a commscope side: both medians, the ratio commscope/reference
    (median of the rounds' ratios [min-max]) and, for a collective, whether its median
    ratio is within the goal."""
    for name in rounds[0]:
        stem, _, reference = name.rpartition(" ")
        if reference in ("commscope", "control"):
            continue
        theirs = [r[name] for r in rounds]
        mine = [r[f"{stem} commscope"] for r in rounds]
        ratios = [b / a for a, b in zip(theirs, mine)]
        ratio = statistics.median(ratios)
        line = (f"{stem:36s} {reference} {statistics.median(theirs):11,.3f}  commscope "
                f"{statistics.median(mine):11,.3f}  commscope/{reference} {ratio:.3f} "
                f"[{min(ratios):.3f}-{max(ratios):.3f}]")
        ranks = stem.split()[1]
        if reference == "osu-max":
            goal = GOAL[int(ranks[2:])]
            line += f"  goal +-{goal:.0%}: {'met' if abs(ratio - 1) <= goal else 'MISSED'}"
        print(line)
        if f"{stem} control" in rounds[0]:
            controls = [r[f"{stem} control"] / r[name] for r in rounds]
            print(f"{stem:36s} control/{reference} {statistics.median(controls):.3f} "
                  f"[{min(controls):.3f}-{max(controls):.3f}]")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--osu", required=True, help="directory with the osu_* programs")
    ap.add_argument("--imb", help="an IMB-MPI1 built with this MPI (p2p part)")
    ap.add_argument("--mpi")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--part", choices=("p2p", "collectives", "other", "all"), default="all")
    ap.add_argument("--smoke", action="store_true",
                    help="1 round of short commands at one size each: the same path, for "
                         "tests/test_bench.py")
    args = ap.parse_args()
    sizes, coll, other, quick = (SMOKE, SMOKE_COLLECTIVES, SMOKE_OTHER_SIZES, SMOKE_RUN) \
        if args.smoke else (BENCH, COLLECTIVES, OTHER_SIZES, ())
    if args.smoke:
        args.rounds = 1
    mpi = find_mpi(args.mpi)
    native_binary(mpi)
    osu_dir = Path(args.osu)
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        fixed = Path(tmp) / "fixed_count"
        subprocess.run([str(mpi.mpicc), "-O2", "-o", str(fixed), str(HERE / "fixed_count.c")],
                       check=True)
        for i in range(args.rounds):
            db = Path(tmp) / f"agree{i}.db"
            got = {}
            if args.part in ("p2p", "all"):
                got |= p2p_round(mpi, osu_dir, fixed, sizes, db, quick)
                if args.imb:
                    got |= imb_round(mpi, Path(args.imb), db, quick)
            if args.part in ("collectives", "all"):
                got |= collectives_round(mpi, osu_dir, coll, db, quick)
            if args.part in ("other", "all"):
                got |= other_round(mpi, osu_dir, other, db, quick)
            rounds.append(got)
    print(f"MPI: {mpi.label} in {mpi.bin_dir.parent}  ({args.rounds} alternating rounds; "
          "medians over rounds; ratio: median of the rounds' ratios [min-max])")
    report(rounds)


if __name__ == "__main__":
    main()
