"""`commscope compare` as a CI user meets it: one results file that keeps every run, some of
them regressions. 2 x --pairs runs of allreduce at np 2, alternated: a baseline, then one
made --factor times as slow by a PMPI wrapper (every MPI_Allreduce busy-waits for
factor - 1 of its own time; tests/pmpi.py), and so on. Then every baseline against every
slowed run, and every baseline against every later baseline, each compare reading the
whole file as its history: the share of sizes called a regression in each.

usage: python bench/slowdown.py [--mpi PREFIX] [--pairs 4] [--factor 1.3]
                                [--sizes 8,64,512,4KiB,32KiB,256KiB] [--launches 3]
                                [--keep FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

WRAPPER = r"""
static double factor = -1;

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    if (factor < 0) {
        const char *given = getenv("SLOWDOWN_FACTOR");
        factor = given ? atof(given) : 1.0;
    }
    double start = PMPI_Wtime();
    int rc = PMPI_Allreduce(s, r, count, type, op, comm);
    delay((factor - 1) * (PMPI_Wtime() - start) * 1e6);
    return rc;
}
"""


def commscope(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "commscope.cli", *argv], capture_output=True,
                          text=True, env=env, stdin=subprocess.DEVNULL)


def main() -> None:
    from pmpi import preloadable

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mpi", default=str(HERE.parent / ".venv"))
    p.add_argument("--pairs", type=int, default=4)
    p.add_argument("--factor", type=float, default=1.3)
    p.add_argument("--sizes", default="8,64,512,4KiB,32KiB,256KiB")
    p.add_argument("--launches", default="3")
    p.add_argument("--keep", metavar="FILE", help="also copy the results file here")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lib = preloadable(Path(args.mpi), Path(tmp), "slowdown",
                          "#include <stdlib.h>\n" + WRAPPER)
        db = str(Path(tmp) / "results.db")
        slowed = {**os.environ, "LD_PRELOAD": lib, "SLOWDOWN_FACTOR": str(args.factor)}
        kinds = []
        for i in range(2 * args.pairs):
            env = slowed if i % 2 else None
            done = commscope(["run", "allreduce", "--np", "2", "--sizes", args.sizes,
                              "--launches", args.launches, "--mpi", args.mpi, "--db", db,
                              "--info", "bench=slowdown"], env)
            if done.returncode != 0:
                raise SystemExit(f"run {i + 1} failed ({done.returncode}): {done.stderr[-2000:]}")
            kinds.append("slowed" if i % 2 else "baseline")
        runs = list(range(1, len(kinds) + 1))
        base = [r for r, k in zip(runs, kinds) if k == "baseline"]
        slow = [r for r, k in zip(runs, kinds) if k == "slowed"]
        if args.keep:
            import shutil
            shutil.copy(db, args.keep)
        for label, pairs in (("baseline vs slowed", [(a, b) for a in base for b in slow]),
                             ("baseline vs baseline", [(a, b) for a in base for b in base
                                                       if a < b])):
            called = total = 0
            words: dict[str, int] = {}
            for a, b in pairs:
                done = commscope(["compare", str(a), str(b), "--db", db, "--json"])
                if done.returncode not in (0, 1, 3):  # 3: a case undetermined
                    raise SystemExit(f"compare {a} {b}: {done.stderr[-2000:]}")
                for change in json.loads(done.stdout)["cases"]:
                    words[change["verdict"]] = words.get(change["verdict"], 0) + 1
                    called += change["verdict"] == "regression"
                    total += 1
            print(f"{label}: {len(pairs)} compares, {called} of {total} sizes regression "
                  f"({called / total:.0%}); verdicts {dict(sorted(words.items()))}",
                  flush=True)


if __name__ == "__main__":
    main()
