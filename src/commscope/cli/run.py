"""`commscope run KERNEL`: measure one kernel over sizes, modes and process counts."""

from __future__ import annotations

import argparse

from ..errors import UserError
from ..kernels import KERNELS, PARAMS, SEND_MODES, check_sizes, modes_for, params_for, runnable
from ..launcher import BIND_TO, MAP_BY, TRANSPORTS, Placement, check_placement
from ..measure import measure
from ..mpi import find_mpi
from ..plan import (DEFAULT_MAX_TIME, DEFAULT_PRECISION, EPOCHS, SYNCS, Plan, check_memory,
                    check_sample_count, parse_precision, parse_ranks, split_sync)
from ..sizes import parse_sizes
from ..store import Store
from .common import add_db, add_mpi, exit_code, print_json, show_launch, warn_oversubscribed
from .hosts import add_host_flags, host_fields

DEFAULT_SIZES = "0:4MiB"
DEFAULT_VECTOR = 1_000_000  # vector_sum's N when --param n= is not given


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="measure one kernel",
                       description="Measure one kernel over message sizes, send modes and "
                                   "process counts.")
    p.add_argument("kernel", help=f"one of: {', '.join(KERNELS)}")
    p.add_argument("--np", default="2", metavar="LIST",
                   help="process counts: 2, a list 2,4,8 or a power-of-two range 2:16 (default 2)")
    p.add_argument("--sizes", metavar="SPEC",
                   help="message sizes: 8,1K,64KiB or a power-of-two range 0:4MiB "
                        f"(default {DEFAULT_SIZES})")
    p.add_argument("--modes", metavar="LIST",
                   help=f"send modes: {', '.join(SEND_MODES)}, or all (default standard)")
    p.add_argument("--window", type=int, metavar="W",
                   help="messages in flight per iteration for bw and bibw (default 64); "
                        "operations per epoch for rma (default 1)")
    count = p.add_mutually_exclusive_group()
    count.add_argument("--precision", metavar="P", default=f"{DEFAULT_PRECISION:.0%}",
                       help="sample each case until the 95%% CI of its median is within +-P "
                            "of it, at least 10 samples (default %(default)s)")
    count.add_argument("--iters", type=int, metavar="N", help="a fixed number of samples per case")
    count.add_argument("--min-time", type=float, metavar="S", help="fixed seconds of samples per case")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="end the job when a case makes no progress for S seconds (default: "
                        "60 s + 10x the case's time budget; 10 min per case with --iters)")
    p.add_argument("--max-time", type=float, default=DEFAULT_MAX_TIME, metavar="S",
                   help="with --precision: seconds of sampling after which a case stops short, "
                        "flagged (default %(default)s)")
    p.add_argument("--validate", action="store_true",
                   help="check every payload byte on every iteration")
    for param in (p for p in PARAMS.values() if p.flag):
        choices = param.metavar or "|".join(param.choices) or "N|rotate"
        p.add_argument(f"--{param.name}", metavar=choices, help=f"{param.help} (default {param.default})")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a kernel parameter by name; vector_sum takes n=N (the vector length)")
    p.add_argument("--sync", choices=SYNCS + EPOCHS, default="barrier",
                   help="start of each sample: a barrier, or agreed times on offset-corrected "
                        "clocks (late starts marked invalid); for rma, the access epoch "
                        "(default fence), with samples started by a barrier")
    p.add_argument("--map-by", choices=MAP_BY, help="rank mapping, translated for the launcher")
    p.add_argument("--bind-to", choices=BIND_TO, help="rank binding, translated for the launcher")
    p.add_argument("--transport", choices=TRANSPORTS, default="auto",
                   help="shared memory, TCP, or the library's choice (default auto)")
    add_host_flags(p)
    p.add_argument("--json", action="store_true", help="print a JSON array instead of a table")
    add_mpi(p)
    add_db(p)
    p.set_defaults(func=run)


def _given_params(args: argparse.Namespace) -> dict[str, str]:
    given = {name: getattr(args, name) for name in PARAMS
             if getattr(args, name, None) is not None}
    for item in args.param:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise UserError(f"--param {item}: write KEY=VALUE")
        given[key.strip()] = value.strip()
    return given


def _sizes(k, args: argparse.Namespace, given: dict[str, str]) -> list[int]:
    if k.fixed_bytes:
        if args.sizes:
            raise UserError(f"--sizes: {k.name}'s bytes follow from its parameters; drop --sizes")
        return [k.fixed_bytes(given, "--")]
    if k.name != "vector_sum":
        return parse_sizes(args.sizes or DEFAULT_SIZES)
    if args.sizes:
        raise UserError("--sizes: vector_sum's size is its length; give --param n=N instead")
    n = given.pop("n", str(DEFAULT_VECTOR))
    if not n.isdigit() or int(n) < 1:
        raise UserError(f"--param n={n}: give the vector length as a positive integer")
    return [8 * int(n)]  # 64-bit integers


def plans_from(args: argparse.Namespace, mpi) -> list[Plan]:
    """One plan per process count, every one checked before anything is launched."""
    k = runnable(args.kernel)
    window = k.default_window if args.window is None else args.window
    if window < 1:
        raise UserError(f"--window {window}: give at least 1 message in flight")
    check_sample_count(args.iters, args.min_time, args.max_time, timeout=args.timeout)
    precision = parse_precision(args.precision)
    sync, given = split_sync(k, args.sync, _given_params(args))
    sizes = _sizes(k, args, given)
    modes = modes_for(k, args.modes)
    placement = Placement(args.map_by, args.bind_to, args.transport, **host_fields(args, mpi))
    plans = []
    for ranks in parse_ranks(args.np):
        if ranks < k.min_ranks:
            raise UserError(f"--np {ranks}: {k.name} needs at least {k.min_ranks} ranks")
        params = params_for(k, given, ranks)
        check_sizes(k, sizes, params)
        check_placement(mpi, ranks, placement)
        plan = Plan(k, ranks, modes, sizes, args.iters, args.min_time, window,
                    args.validate, params, sync, placement, precision, args.max_time,
                    args.timeout)
        check_memory(plan)
        plans.append(plan)
    return plans


def run(args: argparse.Namespace, argv: list[str]) -> int:
    mpi = find_mpi(args.mpi)
    plans = plans_from(args, mpi)
    store = Store(args.db)  # checked before launching: a foreign file is refused untouched
    everything, warned = [], False
    for plan in plans:
        outcome = measure(store, mpi, plan, ["commscope", *argv])
        everything += show_launch(store, outcome, plan, args.db, args.json)
        warned = warn_oversubscribed(outcome, plan, warned)
        code = exit_code(outcome)
        if code:
            break
    if args.json:
        print_json(everything)  # what was measured, also when a later launch failed
    return code
