"""`commscope run KERNEL`: measure one kernel over sizes, modes and process counts."""

from __future__ import annotations

import argparse
import re

from ..stats import skew
from ..system import units
from ..system.errors import UserError
from ..system.kernels import Catalog, catalog
from ..system.launcher import BIND_TO, MAP_BY, TRANSPORTS
from ..measure.launches import measure_runs
from ..system.mpi import find_mpi
from ..measure.plan import (AUTO_LAUNCHES, DEFAULT_MAX_TIME, DEFAULT_PRECISION, DEFAULT_SIZES,
                            LATE_CYCLES, LATE_LAUNCHES, parse_late, plans, sampling)
from ..figures.read import measured, skews
from ..views.export import FIGURES, VARIED
from .common import (add_db, add_expect, add_mpi, add_wide, expect_from, kernel_list, print_json,
                     show_runs, writing_store)
from .hosts import add_host_flags, host_args


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("run", help=summary, allow_abbrev=False,
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Measure one kernel over message sizes, send modes and "
                                   "process counts. Each kernel parameter is also a flag: "
                                   "--NAME VALUE, as --param NAME=VALUE (listed below).\n\n"
                                   "Figures against OSU and IMB: a median of timed batches, "
                                   "where osu_latency prints a mean of round trips each timed by "
                                   "its own MPI_Wtime reads; a collective's time is the slowest "
                                   "rank's (OSU averages over ranks: the rank-mean column); bw "
                                   "and bibw receive into one buffer as osu_bw and IMB do "
                                   "(--recv-buffers window: one per message); collectives show "
                                   "nccl-tests' algbw and busbw. docs/references.md says more.")
    p.more_help = kernel_list
    p.add_argument("kernel", help="the kernel (listed below)")
    p.add_argument("--np", default="2", metavar="LIST",
                   help="process counts: 2, a list 2,4,8 or a power-of-two range 2:16 (default 2)")
    p.add_argument("--sizes", metavar="SPEC",
                   help="message sizes: 8,1K,64KiB or a power-of-two range 0:4MiB "
                        f"(default {DEFAULT_SIZES})")
    p.add_argument("--modes", metavar="LIST",
                   help="send modes of the kernel (listed below), or all (default: the first)")
    p.add_argument("--window", type=int, metavar="W",
                   help="messages in flight per iteration, or operations per epoch for rma, "
                        "for the kernels that take a window (default: the kernel's, listed "
                        "below)")
    p.add_argument("--launches", default="auto", metavar="K|auto",
                   help="launches (mpiruns) each case is measured in: K, or auto: at least "
                        f"{AUTO_LAUNCHES[0]}, more (up to {AUTO_LAUNCHES[1]}) while a case's "
                        "interval is wider than --precision and --max-time allows "
                        "(default %(default)s)")
    count = p.add_mutually_exclusive_group()
    count.add_argument("--precision", metavar="P",
                       default=units.percent(DEFAULT_PRECISION, decimals=None),
                       help="the goal: each case's 95% interval over its launches within +-P "
                            "of its median (default %(default)s)")
    count.add_argument("--iters", type=int, metavar="N",
                       help="a fixed number of samples per case and launch")
    count.add_argument("--min-time", type=float, metavar="S",
                       help="fixed seconds of samples per case and launch")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="end the job when a case makes no progress for S seconds (default: "
                        "60 s + 10x the case's time budget; 10 min per case with --iters)")
    p.add_argument("--max-time", type=float, default=DEFAULT_MAX_TIME, metavar="S",
                   help="with --precision: seconds the run may spend on its launches; once "
                        f"{AUTO_LAUNCHES[0]} are in, no launch starts after it (default "
                        "%(default)s)")
    p.add_argument("--validate", action="store_true",
                   help="check every payload byte on every iteration")
    p.add_argument("--cold-cache", action="store_true",
                   help="rotate each case's buffers through twice the last-level cache, so "
                        "no iteration finds its data in cache (IMB's -off_cache idea; "
                        "default: warm)")
    p.add_argument("--info", action="append", default=[], metavar="KEY=VALUE",
                   help="a label stored with the run (repeatable): a column of `results "
                        "export --format csv`, kept in its JSON")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a kernel parameter by name; vector_sum takes n=N (the vector length)")
    p.add_argument("--each", metavar="KEY=V1,V2,...",
                   help="measure every case once per value of one kernel parameter, in the "
                        "same launches (side by side: a launch's state reaches every value)")
    p.add_argument("--sync", metavar="barrier|window|EPOCH",
                   help="start of each sample: a barrier (the default), or agreed times on "
                        "offset-corrected clocks (late starts marked invalid; the default "
                        "with --late); for rma, the access epoch (fence, lock, "
                        "lock_all_flush, pscw), with samples started by a barrier")
    p.add_argument("--late", metavar="RANK:DELAYS",
                   help="a collective with one rank late: RANK:0.1ms,1ms,10ms (or random:"
                        "DELAYS, a rank drawn per sample) waits each delay before its call in "
                        "samples interleaved with punctual ones; shows each punctual rank's "
                        "propagated delay and the skew sensitivity S (docs/under-load.md). "
                        f"--iters counts cycles (default {LATE_CYCLES})")
    p.add_argument("--late-wait", choices=("sleep", "spin"), default="sleep",
                   help="how the late rank waits: sleeping (its core free) or busy-waiting "
                        "(default %(default)s)")
    p.add_argument("--late-placebo", action="store_true",
                   help="the late rank waits after its call instead, where it must cost "
                        "nothing: a check of the method")
    p.add_argument("--map-by", choices=MAP_BY, help="rank mapping, translated for the launcher")
    p.add_argument("--bind-to", choices=BIND_TO, help="rank binding, translated for the launcher")
    p.add_argument("--transport", choices=TRANSPORTS, default="auto",
                   help="shared memory, TCP, or the library's choice (default auto)")
    add_host_flags(p)
    p.add_argument("--json", action="store_true",
                   help="print JSON (docs/schemas.md) instead of a table")
    add_wide(p)
    add_expect(p)
    add_mpi(p)
    add_db(p)
    p.set_defaults(func=run, kernel_flags=True)


def kernel_params(args: argparse.Namespace, known: Catalog) -> dict[str, str]:
    """--param KEY=VALUE and the --NAME VALUE flags of kernel parameters, by name."""
    given = {}
    extra = list(args.extra)
    while extra:
        item = extra.pop(0)
        name, eq, value = item[2:].partition("=") if item.startswith("--") else ("", "", "")
        name = name.replace("-", "_")  # --recv-buffers names recv_buffers
        if not any(name in k.params for k in known.kernels.values()):
            raise UserError(f"run: unrecognized arguments: {' '.join(args.extra)}")
        switch = any(name in k.params and k.params[name].kind == "switch"
                     for k in known.kernels.values())
        if not eq and switch and (not extra or extra[0].startswith("--")):
            value = "yes"  # --persistent alone
        elif not eq:
            if not extra or extra[0].startswith("--"):
                raise UserError(f"{item}: give a value")
            value = extra.pop(0)
        given[name] = value
    for item in args.param:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise UserError(f"--param {item}: write KEY=VALUE")
        given[key.strip()] = value.strip()
    return given


def plans_from(args: argparse.Namespace, mpi):
    """One plan per process count, every one checked before anything is launched."""
    known = catalog(mpi)
    late, iters, launches = _late(args)
    return plans(known, mpi, kernel=args.kernel, np=args.np, sizes=args.sizes,
                 modes=args.modes, window=args.window, params=kernel_params(args, known),
                 sync=args.sync or ("window" if late else "barrier"), validate=args.validate,
                 cold_cache=args.cold_cache,
                 sampling=sampling(iters=iters, min_time=args.min_time,
                                   precision=None if iters or args.min_time
                                   else args.precision,
                                   max_time=args.max_time, timeout=args.timeout,
                                   launches=launches),
                 map_by=args.map_by, bind_to=args.bind_to, transport=args.transport,
                 late=late, info=labels(args.info, known), each=_each(args.each),
                 each_from="--each", **host_args(args))


def _each(text: str | None) -> tuple[str, list[str]] | None:
    """--each KEY=V1,V2 as (name, values); the values are checked with the plan."""
    if text is None:
        return None
    key, eq, values = text.partition("=")
    found = [v.strip() for v in values.split(",") if v.strip()]
    if not eq or not key.strip() or not found:
        raise UserError(f"--each {text}: write KEY=V1,V2,... (a kernel parameter's values)")
    return key.strip().replace("-", "_"), found


def _late(args: argparse.Namespace):
    """--late as a plan's Late, with the samples (cycles of a punctual sample and one of each
    delay) and launches it takes; without it, --iters and --launches as given."""
    if not args.late:
        if args.late_placebo or args.late_wait != "sleep":
            raise UserError(f"{'--late-placebo' if args.late_placebo else '--late-wait'}: "
                            "give --late RANK:DELAYS too")
        return None, args.iters, args.launches
    if args.min_time:
        raise UserError("--min-time: with --late, give --iters (cycles of a punctual sample "
                        "and one of each delay)")
    late = parse_late(args.late, args.late_wait, args.late_placebo)
    launches = LATE_LAUNCHES if args.launches == "auto" else args.launches
    return late, (args.iters or LATE_CYCLES) * (len(late.delays_s) + 1), launches


def labels(items: list[str], known: Catalog) -> dict[str, str]:
    """--info KEY=VALUE: a key names a column of the tidy export, so it is a name (letters,
    digits, _) that no column or kernel parameter has (param_NAME is a parameter's)."""
    taken = {*VARIED, *FIGURES, *(n for k in known.kernels.values() for n in k.params)}
    found = {}
    for item in items:
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise UserError(f"--info {item}: write KEY=VALUE, KEY of letters, digits and _")
        if key in taken or key.startswith("param_"):
            raise UserError(f"--info {item}: {key} is already a column of the export; "
                            "choose another name")
        found[key] = value
    return found


def run(args: argparse.Namespace, argv: list[str]) -> int:
    mpi = find_mpi(args.mpi)
    planned = plans_from(args, mpi)
    if args.expect and planned[0].late:
        raise UserError("--expect: a --late run's cases are punctual samples beside a late "
                        "rank's, expected nowhere; leave out --expect or --late")
    # Both files checked before launching: foreign or damaged, untouched
    expect = None if planned[0].late else expect_from(args.expect, args.db)
    store = writing_store(args.db)
    runs = measure_runs(store, mpi, planned, ["commscope", *argv])
    everything, code = show_runs(store, runs, args.db, args.json, wide=args.wide,
                                 expect=expect)
    if args.json and planned[0].late:
        print_json("skew", {"cases": everything, "skew": [
            row for summary, found in skews(store, measured(store, [r.run_id for r in runs
                                                                     if r.run_id]))
            for row in skew.as_json(summary, found)]})
    elif args.json:
        # what was measured, also when a later launch failed
        print_json("cases", {"cases": everything})
    return code
