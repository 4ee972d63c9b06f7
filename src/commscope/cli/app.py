"""`commscope app advection2d`: a verified application, timed by the one timing loop and stored."""

from __future__ import annotations

import argparse
import os

from ..measure.advection import (INITS, METHODS, Problem, app_summary, check, check_points,
                                 default_dt, field_bytes, parse_grid)
from ..system.errors import UserError
from ..system.kernels import catalog
from ..system.launcher.placement import cores
from ..measure.launches import measure_runs
from ..system.mpi import find_mpi
from ..measure.plan import Plan, parse_ranks, plans, sampling
from ..views.advection import render
from ..system.build import native_binary
from .common import add_db, add_mpi, print_json, show_runs, writing_store
from .hosts import add_host_flags, host_args
from .profile import profiled

APPS = ("advection2d",)
DEFAULT_ITERS = 10  # solves are long: a fixed count, enough for a 95% CI of the median


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("app", help=summary,
                       description="Solve an application problem, check it against its exact "
                                   "solution and time each whole solve (docs/app-advection2d.md).")
    p.add_argument("app", choices=APPS, help="advection2d: c_t + u c_x + v c_y = 0, periodic")
    p.add_argument("--n", type=int, default=256, help="grid points per side (default 256)")
    p.add_argument("--u", type=float, default=0.5, help="velocity along x (default 0.5)")
    p.add_argument("--v", type=float, default=0.5, help="velocity along y (default 0.5)")
    p.add_argument("--dt", type=float, help="time step (default: CFL number 0.5)")
    p.add_argument("--steps", type=int, default=100, help="time steps per solve (default 100)")
    p.add_argument("--init", default="sin", metavar="|".join(INITS),
                   help="initial condition: sin(x), or a periodic Gaussian bump of width 0.5 "
                        "(default sin)")
    p.add_argument("--method", choices=METHODS, default="rma",
                   help="halo exchange: MPI_Put between fences, or Irecv/Isend (default rma)")
    p.add_argument("--no-comm", action="store_true",
                   help="fill each tile's ghosts from the tile itself: no communication, "
                        "wrong on purpose, to show what communication costs")
    p.add_argument("--grid", metavar="PXxPY",
                   help="process grid (default: the most nearly square, as MPI_Dims_create)")
    p.add_argument("--np", metavar="N", help="ranks (default 4, or this host's cores where "
                                             "fewer and no hosts are named)")
    count = p.add_mutually_exclusive_group()
    count.add_argument("--iters", type=int, metavar="N",
                       help=f"solves timed (default {DEFAULT_ITERS})")
    count.add_argument("--min-time", type=float, metavar="S", help="seconds of timed solves")
    p.add_argument("--field", metavar="PATH",
                   help="rank 0 writes the final field: n*n little-endian float64, y outer")
    p.add_argument("--json", action="store_true",
                   help="print JSON (docs/schemas.md) instead of a table")
    p.add_argument("--profile", action="store_true",
                   help="instead of timing solves, run them under the profiling library: "
                        "which MPI calls the app makes and the time in each (as `commscope "
                        "profile`; docs/profile.md)")
    p.add_argument("--measure", action="store_true",
                   help="with --profile: then measure the cases that price its calls")
    add_host_flags(p)
    add_mpi(p)
    add_db(p)
    p.set_defaults(func=run)


def problem_from(args: argparse.Namespace, ranks: int) -> Problem:
    check_points(args.n)
    dt = default_dt(args.n, args.u, args.v) if args.dt is None else args.dt
    problem = Problem(args.n, args.u, args.v, dt, args.steps, args.init, args.method,
                      not args.no_comm, parse_grid(args.grid, ranks),
                      args.field and os.path.abspath(args.field))  # ranks may start elsewhere
    check(problem)
    return problem


def plan_from(args: argparse.Namespace, mpi) -> Plan:
    # the default fits a laptop: more ranks than cores is refused without --oversubscribe
    named = args.hosts or args.hostfile or os.environ.get("SLURM_JOB_ID")
    ranks = parse_ranks(args.np or str(4 if named else min(4, cores())))
    if len(ranks) != 1:
        raise UserError(f"--np {args.np}: give one process count; the app runs one launch")
    iters = DEFAULT_ITERS if args.iters is None and args.min_time is None else args.iters
    solves = sampling(iters=iters, min_time=args.min_time, launches=1)
    problem = problem_from(args, ranks[0])
    (plan,) = plans(catalog(mpi), mpi, kernel=args.app, np=ranks, sizes=[field_bytes(problem.n)],
                    params=problem.params(), sampling=solves, app=True, **host_args(args))
    return plan


def run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.measure and not args.profile:
        raise UserError("--measure: give --profile too (it measures what the profile needs)")
    mpi = find_mpi(args.mpi)
    plan = plan_from(args, mpi)
    store = writing_store(args.db)  # checked before launching: foreign or damaged, untouched
    if args.profile:  # the native binary as a program: its records thrown away
        program = [str(native_binary(mpi)), *plan.native_args(), "--output", os.devnull]
        return profiled(store, mpi, program, plan.ranks, plan.placement,
                        ["commscope", *argv], args)
    (run,) = measure_runs(store, mpi, [plan], ["commscope", *argv])

    def table(found) -> str:
        return render([app_summary(cases[0], s) for cases, s in found])

    summaries, code = show_runs(store, [run], args.db, args.json, table)
    if args.json:
        cases = store.cases(run.run_id)
        print_json("app", {"cases": [app_summary(c, s) for c, s in zip(cases, summaries)]})
    return code
