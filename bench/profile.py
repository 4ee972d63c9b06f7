"""`commscope profile` and `predict --profile` (docs/profile.md), measured.

cluster (needs root): advection2d (`commscope app advection2d --profile --measure`,
Irecv/Isend halos) on --hosts namespace hosts (default 4), one rank each, every link at
--fast Mbit/s: profiled, and the cases it needs measured; then the links at --slow
Mbit/s, profiled and measured again. The profile at --fast priced on the runs at --slow
is set against what
the profile at --slow spent in the same rows: the ratio (the target: within 15%) and
the order of the top three rows (by predicted, and by profiled time; an exchange's sends,
priced with its receives, are left out of both).

overhead: the cost the library adds to one call (1 rank, a million MPI_Send to
MPI_PROC_NULL, timed inside the program, with and without it); then a ping-pong program
(every call 1 µs or more) run alternately with and without the library, --pairs times: the
median of the pairs' wall time ratios.

exchange: a known exchange (tests/data/profile/patterns.c: MPI_Irecv, blocking MPI_Send,
MPI_Wait, --iters times a rank, 2 ranks) profiled with --measure, --commands times per
size: its prediction (one ping-ping a message) over its profiled time (both rows): the
ratio of the medians (the target: 0.75-1.25), and each command's; beside it, the price
of each message at ping-pong's one-way time (a ping-pong measured in the same command),
as the exchange was priced before it was known as one.

usage: python bench/profile.py cluster [--mpi PREFIX ...] [--fast 200] [--slow 100]
                                      [--n 512] [--steps 100] [--hosts 4] [--burst B]
       python bench/profile.py overhead [--mpi PREFIX ...] [--pairs 20] [--iters 20000]
       python bench/profile.py exchange [--mpi PREFIX ...] [--commands 5] [--iters 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
EMPTY_CALLS = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char b[8];
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double t = MPI_Wtime();
        for (int i = 0; i < 1000000; i++)
            MPI_Send(b, 8, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
        double took = (MPI_Wtime() - t) / 1e6;
        best = took < best ? took : best;
    }
    printf("%.9f\n", best);
    MPI_Finalize();
    return 0;
}
"""
PINGPONG = r"""
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, iters = atoi(argv[1]), size = atoi(argv[2]);
    char *buf = calloc((size_t)size, 1);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
"""


def overhead(mpis: list[str], pairs: int, iters: int) -> None:
    from commscope.system.build import profile_library
    from commscope.system.launcher import launch
    from commscope.system.mpi import find_mpi

    for prefix in mpis:
        mpi = find_mpi(prefix)
        with tempfile.TemporaryDirectory() as tmp:
            src, exe = Path(tmp) / "pp.c", Path(tmp) / "pp"
            src.write_text(PINGPONG)
            subprocess.run([str(mpi.mpicc), "-O2", str(src), "-o", str(exe)], check=True)
            library = profile_library(mpi)
            env_bin = Path("/usr/bin/env")

            empty = Path(tmp) / "empty"
            (Path(tmp) / "empty.c").write_text(EMPTY_CALLS)
            subprocess.run([str(mpi.mpicc), "-O2", str(Path(tmp) / "empty.c"), "-o", str(empty)],
                           check=True)

            def per_call(profiled: bool) -> float:
                pre = [f"LD_PRELOAD={library}", f"COMMSCOPE_PROFILE_DIR={tmp}"] if profiled \
                    else []
                how = launch(mpi, 1, env_bin, [*pre, str(empty)])
                done = subprocess.run(how.argv, env=how.env, check=True, capture_output=True,
                                      text=True)
                return float(done.stdout.split()[-1])

            calls = [per_call(True) - per_call(False) for _ in range(5)]
            added = statistics.median(calls)
            print(f"{mpi.family}: the library adds {added * 1e9:.1f} ns to a call (median of 5 "
                  f"alternated pairs, {min(calls) * 1e9:.1f}-{max(calls) * 1e9:.1f}): "
                  f"{added / 1e-6:.1%} of a 1 µs call", flush=True)

            def wall(profiled: bool, size: int) -> float:
                pre = [f"LD_PRELOAD={library}", f"COMMSCOPE_PROFILE_DIR={tmp}"] if profiled \
                    else []
                how = launch(mpi, 2, env_bin, [*pre, str(exe), str(iters), str(size)])
                started = time.perf_counter()
                subprocess.run(how.argv, env=how.env, check=True, capture_output=True)
                return time.perf_counter() - started

            for size in (4096, 16384):
                ratios, plain = [], []
                for _ in range(pairs):  # alternated: the same minutes
                    without = wall(False, size)
                    ratios.append(wall(True, size) / without)
                    plain.append(without)
                table = json.loads((Path(tmp) / "rank-0.json").read_text())
                calls = {r[0]: r[5] / r[4] for r in table["rows"]}
                q1, med, q3 = np.percentile(ratios, [25, 50, 75])
                print(f"{mpi.family} {size} B: {iters} round trips; a call: MPI_Send "
                      f"{calls['MPI_Send'] * 1e6:.2f} µs, MPI_Recv {calls['MPI_Recv'] * 1e6:.2f} "
                      f"µs (profiled, rank 0); wall {statistics.median(plain):.3f} s without; "
                      f"with over without, {pairs} alternated pairs: median {med:.4f} "
                      f"(quartiles {q1:.4f}-{q3:.4f})", flush=True)


def cluster_trial(mpi: str, fast: float, slow: float, n: int, steps: int,
                  burst: int | None, hosts: int) -> None:
    from commscope.system.cluster import shaped

    with tempfile.TemporaryDirectory() as tmp, shaped(hosts, None) as c:
        for host in c.hosts:
            c.shape(host, fast * 1e6, burst)
        db = Path(tmp) / "p.db"

        def app() -> None:
            done = c.run(c.hosts[0], [sys.executable, "-m", "commscope.cli", "app",
                                      "advection2d", "--method", "p2p", "--n", str(n),
                                      "--steps", str(steps), "--iters", "5", "--np", str(hosts),
                                      "--hosts", ",".join(c.hosts), "--mpi", mpi,
                                      "--profile", "--measure", "--db", str(db)],
                         env=c.mpi_env(), timeout=1800)
            if done.returncode:
                sys.exit(f"bench: app --profile failed: {done.stderr[-800:]}")

        def predict(profile: int, on: str | None) -> dict:
            done = subprocess.run([sys.executable, "-m", "commscope.cli", "predict",
                                   "--profile", str(profile), "--db", str(db), "--json",
                                   *(["--on", on] if on else [])],
                                  capture_output=True, text=True)
            if done.returncode:
                sys.exit(f"bench: predict failed: {done.stderr}")
            return json.loads(done.stdout)

        def runs() -> list[tuple[int, str]]:
            import sqlite3
            return sqlite3.connect(db).execute("SELECT id, kernel FROM runs").fetchall()

        app()
        first = runs()
        for host in c.hosts:
            c.shape(host, slow * 1e6, burst)
        app()
        later = [r for r in runs() if r not in first]
        p_fast = next(i for i, k in first if k == "profile")
        p_slow = next(i for i, k in later if k == "profile")
        measured_slow = ",".join(str(i) for i, k in later if k != "profile")
        at_fast = predict(p_fast, ",".join(str(i) for i, k in first if k != "profile"))
        moved = predict(p_fast, measured_slow)  # the fast profile priced on the slow runs
        truth = predict(p_slow, measured_slow)
        key = lambda r: (r["call"], r["comm_size"], r["bytes"])  # noqa: E731
        profiled_slow = {key(r): r["profiled_s"] for r in truth["rows"]}
        same = [r for r in moved["rows"] if key(r) in profiled_slow]
        predicted = sum(r["predicted_s"] for r in same)
        spent = sum(profiled_slow[key(r)] for r in same)
        # an exchange's sends are priced with its receives: ranked with them, not alone
        alone = {key(r) for r in moved["rows"] if not r["source"].startswith("with")}
        top_predicted = [key(r) for r in moved["rows"] if key(r) in alone][:3]
        top_profiled = sorted(alone & set(profiled_slow), key=lambda k: -profiled_slow[k])[:3]
        print(f"{Path(mpi).name}: at {fast:g} Mbit/s predicted {at_fast['predicted_s']:.4f} s "
              f"against {at_fast['profiled_s']:.4f} s profiled; the {fast:g} Mbit/s profile "
              f"priced at {slow:g} Mbit/s: {predicted:.4f} s (95% CI "
              f"{moved['predicted_ci_s'][0]:.4f}-{moved['predicted_ci_s'][1]:.4f}) against "
              f"{spent:.4f} s profiled there, ratio {predicted / spent:.3f}; top three "
              f"predicted {top_predicted}, profiled {top_profiled}: "
              f"{'same order' if top_predicted == top_profiled else 'different'}", flush=True)
        for r in moved["rows"]:
            print(f"  {r['call']:<14} {r['comm_size']:>2} {r['bytes']:>8} {r['peer'] or '':<6} "
                  f"x{r['count']:<6} "
                  f"predicted {r['predicted_s']:.5f} s, {r['predicted_s'] / r['count'] * 1e6:.1f}"
                  f" µs a call; profiled there {profiled_slow.get(key(r), 0):.5f} s; profiled "
                  f"at {fast:g}: {r['profiled_s']:.5f} s ({r['source']})")


def exchange(mpis: list[str], commands: int, iters: int) -> None:
    from commscope.system.mpi import find_mpi

    source = HERE.parent / "tests" / "data" / "profile" / "patterns.c"
    for prefix in mpis:
        mpi = find_mpi(prefix)
        with tempfile.TemporaryDirectory() as tmp:
            exe = Path(tmp) / "patterns"
            subprocess.run([str(mpi.mpicc), "-O2", str(source), "-o", str(exe)], check=True)
            for size in (8192, 65536):
                predicted, spent, one_way = [], [], []
                for i in range(commands):
                    db = Path(tmp) / f"{size}-{i}.db"
                    for verb in (["profile", "--np", "2", "--mpi", prefix, "--measure"],
                                 ["run", "pingpong", "--np", "2", "--mpi", prefix, "--sizes",
                                  str(size), "--json"],
                                 ["predict", "--profile", "1", "--json"]):
                        program = ["--", str(exe), "exchange", str(iters), str(size)]
                        done = subprocess.run([sys.executable, "-m", "commscope.cli", *verb,
                                               "--db", str(db),
                                               *(program if verb[0] == "profile" else [])],
                                              capture_output=True, text=True)
                        if done.returncode:
                            sys.exit(f"bench: {verb[0]} failed: {done.stderr[-800:]}")
                        if verb[0] == "run":
                            (case,) = json.loads(done.stdout)["cases"]
                    rows = {r["call"]: r for r in json.loads(done.stdout)["rows"]}
                    predicted.append(rows["MPI_Irecv"]["predicted_s"])
                    spent.append(rows["MPI_Irecv"]["profiled_s"] + rows["MPI_Send"]["profiled_s"])
                    one_way.append(case["median_s"] * (rows["MPI_Irecv"]["count"]
                                                       + rows["MPI_Send"]["count"]))
                each = ", ".join(f"{a / b:.3f}" for a, b in zip(predicted, spent))
                mid_p, mid_s = statistics.median(predicted), statistics.median(spent)
                print(f"{mpi.family} {size} B, {iters} exchanges a rank: predicted {mid_p:.5f} "
                      f"s against {mid_s:.5f} s profiled (medians of {commands} commands): "
                      f"ratio {mid_p / mid_s:.3f}; each: {each}; at one-way ping-pong each "
                      f"message: ratio {statistics.median(one_way) / mid_s:.3f}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    c = sub.add_parser("cluster")
    c.add_argument("--mpi", action="append")
    c.add_argument("--fast", type=float, default=200.0)
    c.add_argument("--slow", type=float, default=100.0)
    c.add_argument("--n", type=int, default=512)
    c.add_argument("--steps", type=int, default=100)
    c.add_argument("--hosts", type=int, default=4, help="hosts, one rank each (default 4)")
    c.add_argument("--burst", type=int, help="the links' token bucket, bytes (default: the "
                                              "cluster's, 2.5 ms at the rate, 64 KiB at least)")
    o = sub.add_parser("overhead")
    o.add_argument("--mpi", action="append")
    o.add_argument("--pairs", type=int, default=20)
    o.add_argument("--iters", type=int, default=20000)
    x = sub.add_parser("exchange")
    x.add_argument("--mpi", action="append")
    x.add_argument("--commands", type=int, default=5)
    x.add_argument("--iters", type=int, default=2000)
    args = p.parse_args()
    mpis = args.mpi or [str(HERE.parent / ".venv")]
    if args.what == "overhead":
        overhead(mpis, args.pairs, args.iters)
    elif args.what == "exchange":
        exchange(mpis, args.commands, args.iters)
    else:
        for mpi in mpis:
            cluster_trial(mpi, args.fast, args.slow, args.n, args.steps, args.burst,
                          args.hosts)


if __name__ == "__main__":
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    main()
