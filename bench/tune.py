"""`commscope tune`: what it finds and whether its rules hold, on this host and on the
namespace cluster.

local:   tune the collectives at --np ranks on this host, then `tune --verify` the rules
         it wrote, for each --mpi.
cluster (needs root): the same on 8 namespace hosts (commscope.system.cluster), one rank each,
         every host's link shaped to --rate bit/s by tbf, so that the algorithms' traffic
         patterns, not the shared cores, set their times.

Prints per MPI and collective: the points where an algorithm was chosen, the largest gain
with the chosen ratio's 95% interval, then the verification: the highest upper end of the
interval of time(rules)/time(default) over the sizes, and the sizes where the rules were
slower beyond noise; and each command's wall time. --keep DIR keeps the stores, the rules
files and the JSON of every command.

usage: python bench/tune.py local [--mpi PREFIX ...] [--np 4] [--sizes SPEC] [--launches 5]
       python bench/tune.py cluster [--mpi PREFIX ...] [--rate 400e6] [--sizes SPEC] ...
       (--collectives C ..., --keep DIR, --smoke on either)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
COLLECTIVES = ("allreduce", "bcast", "allgather", "reduce", "alltoall")


def command(runner, argv: list[str]) -> tuple[dict, float, int]:
    started = time.monotonic()
    done = runner([sys.executable, "-m", "commscope.cli", *argv])
    took = time.monotonic() - started
    if done.returncode not in (0, 1, 3) or not done.stdout.strip():  # 3: undetermined
        raise SystemExit(f"{' '.join(argv[:3])} failed ({done.returncode}): "
                         f"{done.stderr[-2000:]}")
    return json.loads(done.stdout), took, done.returncode


def bench(runner, mpi: str, where: list[str], args, keep: Path) -> None:
    name = Path(mpi).name
    db, rules = keep / f"{name}.db", keep / f"{name}-tune"
    tuned, t_tune, _ = command(runner, ["tune", *args.collectives, *where, "--sizes",
                                        args.sizes, "--launches", str(args.launches), "-o",
                                        str(rules), "--mpi", mpi, "--db", str(db), "--json"])
    (keep / f"{name}-tune.json").write_text(json.dumps(tuned, indent=1))
    checked, t_verify, code = command(runner, ["tune", "--verify", str(rules), *where,
                                               "--sizes", args.sizes, "--launches",
                                               str(args.launches), "--mpi", mpi, "--db",
                                               str(db), "--json"])
    (keep / f"{name}-verify.json").write_text(json.dumps(checked, indent=1))
    print(f"{name}: tune {t_tune:.0f} s, verify {t_verify:.0f} s (exit {code})")
    for coll in args.collectives:
        mine = [p for p in tuned["points"] if p["collective"] == coll]
        chosen = [p for p in mine if p["choice"]]
        best = max(chosen, key=lambda p: p["gain"], default=None)
        gain = "no choice"
        if best:
            low, high = next(a["ci"] for a in best["algorithms"]
                             if a["algorithm"] == best["choice"])
            gain = (f"largest gain {best['gain']:.0%} at {best['bytes']} B ({best['choice']}, "
                    f"ratio interval {low:.2f}-{high:.2f})")
        checks = [c for c in checked["checks"] if c["collective"] == coll]
        high = max((c["ci"][1] for c in checks if c["ci"]), default=float("nan"))
        slower = [c["bytes"] for c in checks if c["failing"]]
        print(f"  {coll:9s} chosen at {len(chosen)} of {len(mine)} points, {gain}; rules: "
              f"highest upper bound {high:.3f}, slower at {slower or 'no size'}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("where", choices=("local", "cluster"))
    p.add_argument("--mpi", action="append",
                   help="MPI prefixes (default: the repository's .venv and .mpich)")
    p.add_argument("--collectives", nargs="+", default=list(COLLECTIVES))
    p.add_argument("--np", default="4", help="local: ranks (default 4)")
    p.add_argument("--sizes", default="8,1KiB,32KiB,256KiB")
    p.add_argument("--launches", type=int, default=5)
    p.add_argument("--rate", type=float, default=400e6, help="cluster: bit/s per host")
    p.add_argument("--keep", type=Path, help="keep stores, rules and JSON here")
    p.add_argument("--smoke", action="store_true",
                   help="allreduce alone, 2 sizes, 2 launches: the path, not the figures")
    args = p.parse_args()
    if args.smoke:
        args.collectives, args.sizes, args.launches = ["allreduce"], "8,1KiB", 2
    mpis = args.mpi or [str(HERE.parent / ".venv"), str(HERE.parent / ".mpich")]
    with tempfile.TemporaryDirectory() as tmp:
        keep = args.keep or Path(tmp)
        keep.mkdir(parents=True, exist_ok=True)
        if args.where == "local":
            run = lambda argv: subprocess.run(argv, capture_output=True, text=True)  # noqa: E731
            for mpi in mpis:
                bench(run, mpi, ["--np", args.np], args, keep)
            return
        from commscope.system.cluster import ClusterUnavailable, shaped
        try:
            with shaped(8, args.rate) as cluster:
                run = lambda argv: cluster.run(cluster.hosts[0], argv,  # noqa: E731
                                               env=cluster.mpi_env(), timeout=7200)
                for mpi in mpis:
                    bench(run, mpi, ["--hosts", ",".join(cluster.hosts), "--np", "8"], args,
                          keep)
        except ClusterUnavailable as exc:
            raise SystemExit(f"cluster: {exc}")


if __name__ == "__main__":
    main()
