"""`commscope sweep PLAN.toml`: every combination of a plan, stored as it completes."""

from __future__ import annotations

import argparse
import sys

from ..errors import UserError
from ..measure import measure
from ..mpi import find_mpi
from ..progress import Progress
from ..store import Store
from ..sweep import load, remaining
from .common import add_db, add_mpi, exit_code, print_json, show_launch, warn_oversubscribed


def add_parser(sub) -> None:
    p = sub.add_parser("sweep", help="run a TOML plan of kernels x sizes x processes x "
                                     "placements x transports",
                       description="Run every case of a sweep plan (see docs/sweeps.md).")
    p.add_argument("plan", metavar="PLAN.toml")
    p.add_argument("--resume", action="store_true",
                   help="run only the cases of this plan's last sweep not yet stored")
    p.add_argument("--json", action="store_true", help="print a JSON array of the cases run")
    add_mpi(p)
    add_db(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    mpi = find_mpi(args.mpi)
    plan = load(args.plan, mpi)  # every combination checked before anything runs
    store = Store(args.db)
    if args.resume:
        sweep_id = store.last_sweep(plan.hash)
        if sweep_id is None:
            raise UserError(f"--resume: {args.db} holds no sweep of {args.plan} as it is now; "
                            "run without --resume")
        stored = store.case_keys(sweep_id)
    else:
        sweep_id = store.add_sweep(plan.name, plan.path, plan.text, plan.hash)
        stored = set()
    todo = [(launch, p) for launch in plan.launches for p in remaining(launch, stored)]
    total = sum(p.cases for _, p in todo)
    print(f"sweep {sweep_id} ({plan.name}): {plan.cases} cases in {len(plan.launches)} launches; "
          f"{plan.cases - total} already stored, {total} to run", file=sys.stderr)
    progress = Progress(total, f"sweep {sweep_id}")
    everything, warned, code = [], False, 0
    for launch, p in todo:
        outcome = measure(store, mpi, p, ["commscope", *argv], sweep_id, launch.number,
                          lambda rec, launch=launch: launch.key(rec.get("send_mode"), rec["bytes"]),
                          progress)
        everything += show_launch(store, outcome, p, args.db, args.json)
        warned = warn_oversubscribed(outcome, p, warned)
        code = exit_code(outcome)
        if code:
            print(f"commscope: sweep {sweep_id} stopped; `commscope sweep {args.plan} --resume` "
                  "runs the cases not stored", file=sys.stderr)
            break
    progress.close()
    if args.json:
        print_json(everything)
    return code
