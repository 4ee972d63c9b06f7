"""Predictions across hosts: the ring and bcast, reduce, allreduce at P = 2..8 on the test
cluster (commscope.system.cluster: one network namespace per host, one rank per host, every link
shaped by tbf), against what the models predict from a 2-host pingping fit.

Needs root. Prints, per kernel and P, the measured median and each algorithm's
prediction and relative error; the best algorithm per row is the one the library
most likely ran. With one rank per host and links of a few hundred Mbit/s, the links
dominate and the 2 cores' time-slicing does not (the ranks mostly wait for the wire).

usage: python bench/cluster_predictions.py [--mpi PREFIX] [--rate MBIT] [--sizes SPEC]
       [--max-hosts N] [--launches N] [--burst BYTES] | --db RESULTS
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from commscope.system.cluster import down, up

# (label, kernel, its parameters): the ring in both orders of a step's calls, which Open MPI's
# TCP path takes at 2x apart (docs/kernels-many-rank.md, "ring")
KERNELS = (("ring", "ring", ["--param", "pattern=ring"]),
           ("ring send-first", "ring", ["--param", "pattern=ring", "--param", "post=send-first"]),
           ("bcast", "bcast", []), ("reduce", "reduce", []), ("allreduce", "allreduce", []))
WITHIN = 0.25  # the goal: predictions within 25%


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi", default=None)
    ap.add_argument("--rate", type=float, default=400, help="Mbit/s of every host's link")
    ap.add_argument("--sizes", default="64KiB,1MiB")
    ap.add_argument("--max-hosts", type=int, default=8)
    ap.add_argument("--launches", type=int, default=1, help="launches per point (default 1)")
    ap.add_argument("--burst", type=int, help="bytes of each link's token bucket (default: "
                                              "Cluster.shape's, 2.5 ms of the rate)")
    ap.add_argument("--db", type=Path, help="predict again from a results file this bench "
                                            "made (the models may have changed), measuring "
                                            "nothing")
    args = ap.parse_args()
    if args.db:
        with sqlite3.connect(args.db) as con:
            found = con.execute("SELECT id, kernel, settings FROM runs WHERE id > 1 ORDER BY id")
            runs: dict[tuple[str, str], list[str]] = {}
            for run_id, kernel, settings in found:
                send_first = json.loads(settings)["params"].get("post") == "send-first"
                label = f"{kernel} send-first" if send_first else kernel
                runs.setdefault((label, kernel), []).append(str(run_id))
        report(args.db, runs)
        return 0
    cluster = up(args.max_hosts)
    try:
        db, runs = measure(cluster, args)
    finally:
        down(cluster)
    print(f"links shaped to {args.rate:g} Mbit/s; t(m) from a 2-host pingping fit (run 1); "
          f"results in {db}")
    report(db, runs)
    return 0


def measure(cluster, args) -> tuple[Path, dict[tuple[str, str], list[str]]]:
    """The pingping fit's run (run 1), then each kernel at P = 2..max-hosts: their run ids."""
    mpi = ["--mpi", args.mpi] if args.mpi else []
    rate = args.rate * 1e6
    for host in cluster.hosts:
        cluster.shape(host, rate, args.burst)
    db = Path(tempfile.mkdtemp()) / "results.db"
    first = cluster.hosts[0]

    def on_cluster(*argv) -> None:
        done = cluster.run(first, [sys.executable, "-m", "commscope.cli", *argv, *mpi,
                                   "--db", str(db)], env=cluster.mpi_env(None), timeout=1800)
        if done.returncode:
            raise SystemExit(done.stderr)

    quick = ["--launches", str(args.launches), "--iters", "5"]
    on_cluster("run", "pingping", "--hosts", f"{first}:1,{cluster.hosts[1]}:1",
               "--sizes", "16KiB:4MiB", *quick)
    runs: dict[tuple[str, str], list[str]] = {}
    run_id = 1
    for label, kernel, extra in KERNELS:
        for p in range(2, args.max_hosts + 1):
            hosts = ",".join(f"{h}:1" for h in cluster.hosts[:p])
            on_cluster("run", kernel, "--np", str(p), "--hosts", hosts, "--sizes",
                       args.sizes, *extra, *quick)
            run_id += 1
            runs.setdefault((label, kernel), []).append(str(run_id))
    return db, runs


def report(db: Path, runs: dict[tuple[str, str], list[str]]) -> None:
    """Each point against the algorithm whose prediction is nearest, and the count within
    WITHIN per kernel."""
    for (label, kernel), ids in runs.items():
        done = subprocess.run([sys.executable, "-m", "commscope.cli", "predict", kernel,
                               "--from", "1", "--compare", *ids, "--json", "--db", str(db)],
                              capture_output=True, text=True)
        rows = json.loads(done.stdout)["predictions"]
        best: dict[tuple, dict] = {}
        for r in rows:
            key = (r["ranks"], r["bytes"])
            if r["rel_error"] is not None and (key not in best or abs(r["rel_error"])
                                               < abs(best[key]["rel_error"])):
                best[key] = r
        for (ranks, nbytes), r in sorted(best.items()):
            print(f"{label:15} P={ranks} {nbytes:>8} B: measured "
                  f"{r['measured_s'] * 1e6:10.1f} us, "
                  f"{r['algorithm']:18} {r['predicted_s'] * 1e6:10.1f} us, "
                  f"error {r['rel_error']:+.1%}")
        held = sum(abs(r["rel_error"]) <= WITHIN for r in best.values())
        print(f"{label}: {held} of {len(best)} within {WITHIN:.0%}")


if __name__ == "__main__":
    raise SystemExit(main())
