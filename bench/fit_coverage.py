"""Do a fit's intervals hold for the next command? Real runs, side by side.

Runs the same `commscope run pingpong` N times in a row (each its own command of 3
launches) and fits each run's one line (alpha, B over its sizes) as soon as it is
stored, so that its results file holds only the runs before it (its history). For
every run i it asks whether run i+1's alpha and B fall inside run i's 95% intervals,
once with the intervals as `fit` draws them (launch and command variation carried
into the bootstrap, models/resample.launch_shocks) and once within the launches alone
(the samples' bootstrap only, as before). Prints both counts: on this shared machine
the next command differs by more than one launch's samples can show.

usage: python bench/fit_coverage.py [--mpi PREFIX] [--runs N] [--sizes SPEC] [--smoke]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

from commscope.models import groups
from commscope.store.store import Store

SMOKE = {"runs": 2, "sizes": "1KiB:8KiB"}  # one next command to check, 4 sizes to fit


def fits(db: Path, run: int, launch_aware: bool):
    store = Store(db)
    if launch_aware:
        (fit,) = groups.fit_runs(store, [run], "pingpong", groups.MAX_SEGMENTS)
        return fit.fit.single
    with mock.patch.object(groups, "launch_shocks", lambda *a: None):
        (fit,) = groups.fit_runs(store, [run], "pingpong", groups.MAX_SEGMENTS)
        return fit.fit.single


def inside(value: float, ci) -> bool:
    return ci is not None and ci[0] is not None and ci[1] is not None and ci[0] <= value <= ci[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi", default=None)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--sizes", default="1KiB:1MiB")
    ap.add_argument("--smoke", action="store_true",
                    help=f"--runs {SMOKE['runs']} --sizes {SMOKE['sizes']}: the same path, for "
                         "tests/test_bench.py")
    args = ap.parse_args()
    if args.smoke:
        args.runs, args.sizes = SMOKE["runs"], SMOKE["sizes"]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "results.db"
        found = {True: [], False: []}
        for run in range(1, args.runs + 1):
            cmd = [sys.executable, "-m", "commscope.cli", "run", "pingpong", "--sizes",
                   args.sizes, "--db", str(db), *(["--mpi", args.mpi] if args.mpi else [])]
            subprocess.run(cmd, check=True, capture_output=True)
            for launch_aware in found:
                found[launch_aware].append(fits(db, run, launch_aware))
        for launch_aware, lines in found.items():
            alpha = sum(inside(b.line.alpha_s, a.alpha_ci_s) for a, b in zip(lines, lines[1:]))
            bandwidth = sum(b.identifiable and inside(b.line.bandwidth_Bps, a.bandwidth_ci_Bps)
                            for a, b in zip(lines, lines[1:]))
            width = sorted((a.bandwidth_ci_Bps[1] - a.bandwidth_ci_Bps[0]) / a.line.bandwidth_Bps
                           for a in lines if a.identifiable and a.bandwidth_ci_Bps[1])
            median = f"{width[len(width) // 2]:.1%}" if width else "none (B not identifiable)"
            print(f"{'launches and commands' if launch_aware else 'within the launches':22}: "
                  f"next command's alpha inside {alpha} of {args.runs - 1}, B inside "
                  f"{bandwidth} of {args.runs - 1}; median B interval width {median}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
