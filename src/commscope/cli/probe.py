"""`commscope probe protocols`: the sizes at which the MPI changes protocol, beside the
library's own settings for them (probe.py)."""

from __future__ import annotations

import argparse
import sys

from ..measure import probe
from ..system.errors import UserError
from ..system.launcher import TRANSPORTS
from ..measure.launches import measure_runs
from ..system.mpi import find_mpi
from ..measure.plan import plans, sampling
from ..system.sizes import parse_sizes
from ..store.store import Store
from ..figures.read import summaries
from ..system.units import MB
from ..views.probe import probe_json, render_probe, withheld
from .common import add_db, add_mpi, exit_code, print_json, say_oversubscribed, writing_store
from .hosts import add_host_flags, host_args

KERNELS = ("pingpong", "bw")
ROUND_TIME_S = 2.0  # each round's launch: its cases share this much sampling time


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("probe", help=summary,
                       description="Probe the MPI library: `probe protocols` locates each "
                                   "size where the latency jumps (eager to rendezvous, copy "
                                   "to single copy) within 1% or 64 B, and shows the "
                                   "library's settings for it (MPI_T).")
    what = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    q = what.add_parser("protocols", help="protocol switches by message size",
                        description="A coarse sweep (two sizes a factor of 2, 0 B-4 MiB), "
                                    "then bisection of each jump, one launch per round; every "
                                    "round is stored as a run. Exit 1 where a library "
                                    "setting names a switch that was not found there.")
    q.add_argument("--kernel", choices=KERNELS, default="pingpong",
                   help="the kernel whose time is probed (default pingpong)")
    q.add_argument("--modes", metavar="LIST",
                   help="send modes, each probed on its own, or all (default: the first)")
    q.add_argument("--sizes", metavar="SPEC",
                   help="the coarse sizes instead of the ladder (0, 1, 2, 3, 4, 6, 8, ... "
                        "4 MiB); at least 3")
    q.add_argument("--transport", choices=TRANSPORTS, default="auto",
                   help="shared memory, TCP, or the library's choice (default auto)")
    q.add_argument("--np", default="2", metavar="N", help="ranks (default 2)")
    q.add_argument("--max-time", type=float, default=ROUND_TIME_S, metavar="S",
                   help="seconds of sampling per round (default %(default)s)")
    add_host_flags(q)
    q.add_argument("--json", action="store_true", help="print a JSON object")
    add_mpi(q)
    add_db(q)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    if not args.np.strip().isdigit():
        raise UserError(f"--np {args.np}: give one process count; a probe is of one")
    mpi = find_mpi(args.mpi)
    coarse = parse_sizes(args.sizes) if args.sizes else probe.ladder()
    if len(coarse) < 3:
        raise UserError(f"--sizes {args.sizes}: give at least 3 sizes to find a jump between")
    from ..system.kernels import catalog
    known = catalog(mpi)

    def planned(sizes, modes):
        return plans(known, mpi, kernel=args.kernel, np=args.np,
                     sizes=",".join(map(str, sizes)), modes=modes,
                     sampling=sampling(max_time=args.max_time, launches="1"),
                     transport=args.transport, **host_args(args))[0]

    modes = planned(coarse[:1], args.modes).modes  # checked before anything is launched
    store = writing_store(args.db)
    found, code, notes = [], 0, []
    for mode in modes:
        runs, ceilings = [], []

        def measure(sizes):
            done = measure_runs(store, mpi, [planned(sizes, mode)], ["commscope", *argv])[0]
            runs.append(done.run_id)
            if done.status != "complete":
                raise _Stopped(exit_code(done), done)
            found = summaries(store, [done.run_id])
            ceilings.extend(s.ceiling_MBps * MB for s in found if s.ceiling_MBps)
            return {s.bytes: s.median_s for s in found if s.measured}

        def expected():
            return _settings(store, runs[0])[2]

        try:
            result = probe.probe(measure, coarse, expected)
        except _Stopped as stopped:  # a failed or stopped round: its own exit code
            outcome = stopped.run.outcomes[-1] if stopped.run.outcomes else None
            print(f"commscope: probe protocols: run {stopped.run.run_id} "
                  f"{outcome.message if outcome else stopped.run.status}; the rounds "
                  f"before it are stored in {args.db}", file=sys.stderr)
            return stopped.code
        say_oversubscribed(store, runs[:1])
        result = probe.bounded(result, max(ceilings) if ceilings else None)
        found.append(_report(store, mode, runs, result))
        notes += withheld(result)
        code = code or (1 if found[-1]["disagreements"] else 0)
    if args.json:
        print_json("probe", {"kernel": args.kernel, "db": args.db, "probes": found,
                             "switches": [s for f in found for s in f["switches"]]})
    else:
        print("\n".join([render_probe(args.kernel, args.db, found), *notes]))
    return code


class _Stopped(Exception):
    def __init__(self, code: int, run):
        super().__init__(code)
        self.code, self.run = code, run


def _settings(store: Store, run_id: int):
    """A probe run's path and the library's settings for it, read through MPI_T
    (probe.protocol_settings): (over_network, applies, limits, all read)."""
    row = store.run(run_id)
    context = row.context
    over_network = row.settings.get("transport") == "tcp" or len(context.get("hosts", [])) > 1
    read = context.get("library_protocols")
    return (over_network, *probe.protocol_settings(context.get("mpi_library"), read,
                                                   over_network), read)


def _report(store: Store, mode, runs: list[int], result: probe.Probe) -> dict:
    """One mode's probe with the library's settings beside it (views.probe.probe_json)."""
    over_network, applies, limits, read = _settings(store, runs[0])
    return probe_json(mode, runs, store.run(runs[0]).mpi_version, over_network, result,
                      applies, limits, read)
