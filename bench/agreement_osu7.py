"""Agreement with OSU 7.x's multi-pair, nonblocking-collective and persistent benchmarks.

Same MPI, same minutes, alternating: each round runs the OSU program (built by the user,
found by name under --osu DIR), then the commscope command that measures the same thing at
its defaults:

- osu_mbw_mr and `run mbw_mr`: aggregate MB/s and messages/s, 8 B and 64 KiB, at 2 and 4
  ranks (1 and 2 pairs; 4 ranks oversubscribe a 2-core host);
- osu_iallreduce and `run iallreduce`: overlap at 64 KiB, without and with 100 MPI_Test
  calls (-t 100, --tests 100): compared as a difference in percentage points;
- osu_latency_persistent and `run pingpong --persistent` (8 B; OSU's is a mean of round
  trips, commscope's a median of batches: docs/references.md), osu_bw_persistent and
  `run bw --persistent` (1 MiB).

Then commscope against itself, alternated the same way: persistent over blocking
allreduce (8 B, 64 KiB, 2 ranks) and partitioned (4 partitions) over standard pingpong.
Prints per figure the median over rounds of each side and the median of the rounds'
ratios [min-max]: the spread of a ratio says how much of a difference is launch noise.

usage: python bench/agreement_osu7.py --osu DIR [--mpi PREFIX] [--rounds N] [--smoke]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from agreement import osu_rows, run  # bench/: the OSU reader and the commscope run, once
from commscope.system.build import native_binary
from commscope.system.mpi import find_mpi

KIB = 1024
MBW_MR = {"ranks": (2, 4), "bytes": (8, 64 * KIB)}
# The smoke test's: 1 round, and each command one short launch (its figures, not their
# precision), mbw_mr at 2 ranks and 8 B alone: every other command and flag as is.
SMOKE_MBW_MR = {"ranks": (2,), "bytes": (8,)}
SMOKE_RUN = ("--launches", "1", "--iters", "5")


def one_round(mpi, osu: dict[str, Path], db: Path, mbw_mr: dict,
              quick: tuple[str, ...]) -> dict[str, float]:
    """Every figure of one round, OSU's and commscope's, by name."""
    got = {}
    for ranks in mbw_mr["ranks"]:
        for n in mbw_mr["bytes"]:
            mbw, msgs = osu_rows(mpi, ranks, osu["osu_mbw_mr"], ["-m", f"{n}:{n}"])[n]
            case = run(mpi, "mbw_mr", ["--np", str(ranks), "--sizes", str(n)], db, quick)[n]
            got |= {f"mbw_mr np{ranks} {n} B MB/s osu": mbw,
                    f"mbw_mr np{ranks} {n} B MB/s commscope": case["bandwidth_MBps"],
                    f"mbw_mr np{ranks} {n} B msg/s osu": msgs,
                    f"mbw_mr np{ranks} {n} B msg/s commscope": case["message_rate"]}
    for tests in (0, 100):
        extra = ["-t", str(tests)] if tests else []
        overlap = osu_rows(mpi, 2, osu["osu_iallreduce"], ["-m", "65536:65536", *extra])
        case = run(mpi, "iallreduce", ["--sizes", "64KiB", "--tests", str(tests)], db, quick) \
            if tests else run(mpi, "iallreduce", ["--sizes", "64KiB"], db, quick)
        got |= {f"iallreduce 64 KiB tests={tests} overlap % osu": overlap[65536][-1],
                f"iallreduce 64 KiB tests={tests} overlap % commscope":
                    case[65536]["overlap_pct"]}
    got["pingpong 8 B persistent us osu"] = osu_rows(
        mpi, 2, osu["osu_latency_persistent"], ["-m", "8:8"])[8][0]
    got["pingpong 8 B persistent us commscope"] = run(
        mpi, "pingpong", ["--persistent", "--sizes", "8"], db, quick)[8]["median_s"] * 1e6
    got["bw 1 MiB persistent MB/s osu"] = osu_rows(
        mpi, 2, osu["osu_bw_persistent"], ["-m", f"{KIB * KIB}:{KIB * KIB}"])[KIB * KIB][0]
    got["bw 1 MiB persistent MB/s commscope"] = run(
        mpi, "bw", ["--persistent", "--sizes", "1MiB"], db, quick)[KIB * KIB]["bandwidth_MBps"]
    blocking = run(mpi, "allreduce", ["--sizes", "8,64KiB"], db, quick)
    persistent = run(mpi, "allreduce", ["--persistent", "--sizes", "8,64KiB"], db, quick)
    pingpong = run(mpi, "pingpong", ["--sizes", "8,64KiB"], db, quick)
    partitioned = run(mpi, "partitioned", ["--sizes", "8,64KiB"], db, quick)
    for n in (8, 64 * KIB):
        got |= {f"allreduce {n} B us blocking": blocking[n]["median_s"] * 1e6,
                f"allreduce {n} B us persistent": persistent[n]["median_s"] * 1e6,
                f"p2p {n} B us pingpong": pingpong[n]["median_s"] * 1e6,
                f"p2p {n} B us partitioned": partitioned[n]["median_s"] * 1e6}
    return got


def report(rounds: list[dict[str, float]]) -> None:
    """Each pair of figures: both medians and the ratio (an overlap: the difference)."""
    pairs = [("osu", "commscope"), ("blocking", "persistent"), ("pingpong", "partitioned")]
    for name in rounds[0]:
        for base, other in pairs:
            if not name.endswith(f" {base}"):
                continue
            stem = name[:-len(base) - 1]
            a = [r[name] for r in rounds]
            b = [r[f"{stem} {other}"] for r in rounds]
            if "overlap" in stem:
                diffs = [y - x for x, y in zip(a, b)]
                what = f"{other} - {base} {statistics.median(diffs):+.1f} points " \
                       f"[{min(diffs):+.1f} to {max(diffs):+.1f}]"
            else:
                ratios = [y / x for x, y in zip(a, b)]
                what = f"{other}/{base} {statistics.median(ratios):.3f} " \
                       f"[{min(ratios):.3f}-{max(ratios):.3f}]"
            print(f"{stem:42s} {base} {statistics.median(a):12,.3f}  "
                  f"{other} {statistics.median(b):12,.3f}  {what}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--osu", required=True, help="a directory holding the OSU 7.x programs")
    ap.add_argument("--mpi")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--smoke", action="store_true",
                    help="1 round of short commands, mbw_mr at 2 ranks and 8 B: the same "
                         "path, for tests/test_bench.py")
    args = ap.parse_args()
    mbw_mr, quick = (SMOKE_MBW_MR, SMOKE_RUN) if args.smoke else (MBW_MR, ())
    if args.smoke:
        args.rounds = 1
    mpi = find_mpi(args.mpi)
    native_binary(mpi)
    wanted = ("osu_mbw_mr", "osu_iallreduce", "osu_latency_persistent", "osu_bw_persistent")
    osu = {p.name: p for p in Path(args.osu).rglob("osu_*") if p.name in wanted and p.is_file()}
    if len(osu) < len(wanted):
        sys.exit(f"--osu {args.osu}: no {', '.join(sorted(set(wanted) - set(osu)))} "
                 "under it; build OSU Micro-Benchmarks 7.x with this MPI's mpicc")
    with tempfile.TemporaryDirectory() as tmp:
        rounds = [one_round(mpi, osu, Path(tmp) / f"round{i}.db", mbw_mr, quick)
                  for i in range(args.rounds)]
    print(f"MPI: {mpi.label} in {mpi.bin_dir.parent}  ({args.rounds} alternating rounds; "
          "medians over rounds; ratio: median of the rounds' ratios [min-max])")
    report(rounds)


if __name__ == "__main__":
    main()
