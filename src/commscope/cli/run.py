"""`commscope run KERNEL`: measure one kernel over sizes and send modes, store, show."""

from __future__ import annotations

import argparse
import sys

from ..errors import UserError
from ..kernels import KERNELS, SEND_MODES, kernel, modes_for
from ..measure import Plan, check_memory, measure
from ..mpi import find_mpi
from ..sizes import parse_sizes
from ..store import Store
from ..summary import case_summary
from ..views.table import library_label, render
from .common import add_db, add_mpi, print_json

DEFAULT_SIZES = "0:4MiB"


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="measure one kernel",
                       description="Measure one kernel over message sizes and send modes.")
    p.add_argument("kernel", help=f"one of: {', '.join(KERNELS)}")
    p.add_argument("--np", type=int, default=2, help="number of ranks (default 2)")
    p.add_argument("--sizes", default=DEFAULT_SIZES, metavar="SPEC",
                   help="message sizes: 8,1K,64KiB or a power-of-two range 0:4MiB "
                        f"(default {DEFAULT_SIZES})")
    p.add_argument("--modes", metavar="LIST",
                   help=f"send modes for pingpong: {', '.join(SEND_MODES)}, or all "
                        "(default standard)")
    p.add_argument("--window", type=int, default=64, metavar="W",
                   help="messages in flight per iteration for bw and bibw (default 64)")
    count = p.add_mutually_exclusive_group()
    count.add_argument("--iters", type=int, metavar="N", help="timed samples per case")
    count.add_argument("--min-time", type=float, default=0.2, metavar="S",
                       help="timed seconds per case when --iters is not given (default 0.2)")
    p.add_argument("--validate", action="store_true",
                   help="check every payload byte on every iteration")
    p.add_argument("--json", action="store_true", help="print a JSON array instead of a table")
    add_mpi(p)
    add_db(p)
    p.set_defaults(func=run)


def plan_from(args: argparse.Namespace) -> Plan:
    k = kernel(args.kernel)
    if args.np < k.min_ranks:
        raise UserError(f"--np {args.np}: {k.name} needs at least {k.min_ranks} ranks")
    if args.window < 1:
        raise UserError(f"--window {args.window}: give at least 1 message in flight")
    if args.iters is not None and args.iters < 1:
        raise UserError(f"--iters {args.iters}: give at least 1 sample per case")
    if not args.min_time > 0:
        raise UserError(f"--min-time {args.min_time}: give a positive number of seconds")
    plan = Plan(k, args.np, modes_for(k, args.modes), parse_sizes(args.sizes), args.iters,
                args.min_time, args.window, args.validate)
    check_memory(plan)
    return plan


def run(args: argparse.Namespace, argv: list[str]) -> int:
    plan = plan_from(args)
    mpi = find_mpi(args.mpi)
    store = Store(args.db)  # checked before launching: a foreign file is refused untouched
    outcome = measure(store, mpi, plan, ["commscope", *argv])
    summaries = [case_summary(c) for c in store.cases(outcome.run_id)]
    if args.json:
        print_json(summaries)
    elif summaries:
        print(f"run {outcome.run_id}: {plan.kernel.name} on {plan.ranks} ranks, "
              f"{library_label((outcome.ingest.context or {}).get('mpi_library_version'))}, "
              f"results in {args.db}")
        print(render(summaries))
    for skip in outcome.ingest.skips:
        print(f"commscope: skipped {skip['kernel']} {skip.get('send_mode') or ''} "
              f"{skip['bytes']} B: {skip['reason']}", file=sys.stderr)
    if outcome.oversubscribed:
        print(f"commscope: warning: {plan.ranks} ranks on fewer cores: oversubscribed, "
              "latencies include time-slicing; run fewer ranks per host for clean figures",
              file=sys.stderr)
    if outcome.status != "complete":
        print(f"commscope: run {outcome.run_id} {outcome.message}", file=sys.stderr)
        return 130 if outcome.status == "interrupted" else 1
    return 0
