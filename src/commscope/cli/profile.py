"""`commscope profile [--np N] [--hosts ...] -- PROGRAM ARGS...`: run an MPI program under
commscope's profiling library and store what it communicates (docs/profile.md)."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..system.build import profile_library
from ..system.errors import UserError
from ..system.launcher import host_fields, launch
from ..system.launcher.placement import Placement
from ..system.mpi import find_mpi
from ..profiles import stored
from ..profiles.recorded import Recorded, read
from ..store.store import utc_now
from ..views.profile import profile_json, render_profile
from .common import add_db, add_mpi, print_json, writing_store
from .hosts import add_host_flags, host_args


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("profile", help=summary,
                       description="Run an MPI program under commscope's profiling library "
                                   "(built with the MPI's mpicc and preloaded into each rank) "
                                   "and store its calls by call, communicator size, size "
                                   "bucket and peer distance, with the time in each and the "
                                   "program's wall time (docs/profile.md). Then `commscope "
                                   "predict --profile RUN` prices them on this cluster.")
    p.add_argument("program", nargs=argparse.REMAINDER, metavar="-- PROGRAM ARGS",
                   help="the MPI program and its arguments, after --")
    p.add_argument("--np", type=int, default=2, metavar="N", help="ranks (default 2)")
    p.add_argument("--measure", action="store_true",
                   help="then measure exactly the cases the profile needs to be priced "
                        "(its calls, sizes and process counts) and nothing else")
    p.add_argument("--json", action="store_true",
                   help="print JSON: the profile's rows and wall time (docs/schemas.md)")
    add_host_flags(p)
    add_mpi(p)
    add_db(p)
    p.set_defaults(func=run)


def _program(args: argparse.Namespace) -> list[str]:
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        raise UserError("profile: give the program to run after --, e.g. "
                        "commscope profile --np 4 -- ./solver input.dat")
    found = shutil.which(program[0])
    if found is None:
        raise UserError(f"profile: {program[0]}: no such program (not a file here, nor on "
                        "PATH); give its path")
    return [os.path.abspath(found) if os.sep in program[0] else found, *program[1:]]


def run(args: argparse.Namespace, argv: list[str]) -> int:
    program = _program(args)
    if args.np < 1:
        raise UserError(f"--np {args.np}: give the number of ranks, 1 or more")
    mpi = find_mpi(args.mpi)
    placement = Placement(**host_fields(**host_args(args), mpi=mpi))
    store = writing_store(args.db)  # checked before the program runs
    return profiled(store, mpi, program, args.np, placement, ["commscope", *argv], args)


def profiled(store, mpi, program: list[str], ranks: int, placement: Placement,
             command: list[str], args: argparse.Namespace) -> int:
    """`program` run on `ranks` ranks under the profiling library, its profile stored and
    shown (args: json, measure, db); the program's exit status. A program that made no MPI
    call is the user's mistake: nothing is stored."""
    library = profile_library(mpi)
    started_utc = utc_now()
    with tempfile.TemporaryDirectory(prefix="commscope-profile-") as tmp:
        # env(1) sets the preload for the ranks alone, whichever launcher starts them; the
        # user's own preloads after it, so that a program's MPI calls reach it first
        preload = " ".join([str(library), *os.environ.get("LD_PRELOAD", "").split()])
        started = launch(mpi, ranks, Path(shutil.which("env") or "/usr/bin/env"),
                         [f"LD_PRELOAD={preload}", f"COMMSCOPE_PROFILE_DIR={tmp}", *program],
                         placement)

        def save(recorded, status, message=None):
            return stored.save(store, command, program, ranks, started.oversubscribed,
                               started_utc, recorded, status, message)
        try:
            # --json is the one document on stdout: the program's own output goes beside
            # commscope's messages
            status = subprocess.run(started.argv, env=started.env,
                                    stdout=_stderr() if args.json else None).returncode
        except KeyboardInterrupt:
            recorded = read(Path(tmp), program, ranks)
            if len(recorded.missing) < ranks:
                save(recorded, "interrupted",
                     "interrupted: what the ranks recorded to their last write is kept")
            raise
        recorded = read(Path(tmp), program, ranks)
    if len(recorded.missing) == ranks:
        ended = f"exited with status {status} and " if status else ""
        raise UserError(f"profile: {program[0]} {ended}made no MPI call under the profiling "
                        f"library: not an MPI program, or not linked to the MPI of "
                        f"{mpi.mpicc} (give its --mpi, or rebuild the program with that MPI's "
                        "mpicc); nothing stored")
    failed = status != 0 or recorded.missing or recorded.unfinished
    message = _what_failed(status, recorded) if failed else None
    run_id = save(recorded, "failed" if failed else "complete", message)
    found = stored.recorded(store, run_id)  # a program that died before its first call: none
    if not args.json:
        print(render_profile(run_id, found, message) if found.rows else
              stored.no_calls(run_id, store.run(run_id), found))
    measured = []
    if args.measure and failed:
        print(f"commscope: profile: not measuring for a profile that did not finish "
              f"({message})", file=sys.stderr)
    elif args.measure:
        from .profile_measure import measure_profile
        measured = measure_profile(store, mpi, run_id, found, recorded.hosts, args.db,
                                   args.json)
    if args.json:
        print_json("profile", {**profile_json(run_id, found, recorded.hosts),
                               "status": "failed" if failed else "complete",
                               "message": message, "measured": measured})
    return status


def _stderr():
    """This process's stderr as a file descriptor for a child (2 where it has none)."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return 2


def _what_failed(status: int, recorded: Recorded) -> str:
    parts = [f"the program exited with status {status}"] if status else []
    if recorded.missing:
        parts.append(f"ranks {', '.join(map(str, recorded.missing))} recorded nothing")
    if recorded.unfinished:
        parts.append(f"ranks {', '.join(map(str, recorded.unfinished))} did not reach "
                     "MPI_Finalize (their rows are to their last write, at most 1 s before)")
    return "; ".join(parts)

