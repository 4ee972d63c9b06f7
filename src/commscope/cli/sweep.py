"""`commscope sweep PLAN.toml`: every combination of a plan, stored as it completes."""

from __future__ import annotations

import argparse
import sys

from ..system.errors import UserError, to_run
from ..measure.launches import measure_runs
from ..system.mpi import find_mpi
from ..measure.plan import AUTO_LAUNCHES
from ..measure.sweep import load
from .common import Expect, add_db, add_mpi, add_wide, print_json, show_runs, writing_store


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("sweep", help=summary,
                       description="Run every case of a sweep plan (see docs/sweeps.md).")
    p.add_argument("plan", metavar="PLAN.toml")
    p.add_argument("--resume", action="store_true",
                   help="run only the cases of this plan's last sweep not yet stored")
    p.add_argument("--json", action="store_true",
                   help="print JSON: the cases run (docs/schemas.md)")
    add_wide(p)
    add_mpi(p)
    add_db(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    mpi = find_mpi(args.mpi)
    plan = load(args.plan, mpi)  # every combination checked before anything runs
    store = writing_store(args.db)
    if args.resume:
        sweep_id = store.last_sweep(plan.hash)
        if sweep_id is None:
            raise UserError(f"--resume: {args.db} holds no sweep of {args.plan} as it is now; "
                            "run without --resume")
        held = store.claim_sweep(sweep_id)  # before reading what is stored: no case twice
        if held:
            raise UserError(f"--resume: sweep {sweep_id} is being run by pid {held['pid']} on "
                            f"{held['host']}; wait for it to end, then resume what is left")
        stored = store.case_keys(sweep_id)
    else:
        sweep_id = store.add_sweep(plan.name, plan.path, plan.text, plan.hash)
        stored = set()
    launches = plan.points[0].sampling.launches
    total = plan.cases * (launches or AUTO_LAUNCHES[0])
    per = f"{launches} launches" if launches else f"at least {AUTO_LAUNCHES[0]} launches (auto)"
    more = "" if launches else "at least "
    print(f"sweep {sweep_id} ({plan.name}): {plan.cases} cases in {len(plan.points)} points, "
          f"{per} each; {len(stored)} already stored, {more}{total - len(stored)} to run",
          file=sys.stderr)
    try:
        runs = measure_runs(store, mpi, plan.points, ["commscope", *argv], sweep_id, plan.key,
                            stored)
    finally:
        store.release_sweep(sweep_id)
    everything, code = show_runs(store, runs, args.db, args.json, wide=args.wide,
                                 expect=Expect())
    if code:
        again = to_run("sweep", args.plan, "--resume", db=args.db)
        print(f"commscope: sweep {sweep_id} stopped; {again} runs the cases not stored",
              file=sys.stderr)
    if args.json:
        print_json("cases", {"cases": everything})
    return code
