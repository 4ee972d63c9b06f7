"""`commscope tune COLL...`: measure the library's default and each of its own algorithms
for every collective, np and size, in the same launches; choose the fastest where it is
faster beyond doubt; write the choice in the library's own format. `--verify FILE`: the
default and those rules in alternate launches (docs/tune.md)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from ..store.names import ranges as ranges_of
from ..system.build import native_binary
from ..system.errors import UserError, to_run
from ..system.kernels import catalog
from ..measure.launches import measure_runs
from ..system.mpi import find_mpi
from ..measure.plan import (AUTO_LAUNCHES, LATE_CYCLES, parse_late, parse_launches, parse_ranks,
                            plans, sampling)
from ..judge.rules import mpich, openmpi
from ..judge.tune import (VARY, absorbing_points, by_run, can_name, choose, points, ranges,
                          verify)
from ..stats.verdict import DEFAULTS, VerdictSpec, parse_threshold
from ..views.skew import render_absorbing
from ..views.tune import junit, render, render_verify
from .common import (add_db, add_fail_on, add_mpi, check_output, emit, exit_code, print_json,
                     say_oversubscribed, write_atomic, writing_store)
from .hosts import add_host_flags, host_args

DEFAULT_SIZES = "8,64,512,4KiB,32KiB,256KiB,1MiB"
LATE_SIZES = "8,4KiB,256KiB"  # --late: each size's samples wait out every delay
# Seconds of sampling each case gets per launch: a plan (one collective at one np, every
# algorithm at every size) may spend this times its cases times its launches.
CASE_S = 0.2
LAUNCHES = DEFAULTS["tune"].launches
FORMATS = {"openmpi": openmpi, "mpich": mpich}  # each library's rules module


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("tune", help=summary,
                       description="Measure the MPI library's default and each of its own "
                                   "algorithms for each collective, process count and size "
                                   "in the same launches; choose the fastest where it is "
                                   "faster beyond doubt (ties keep the default); write the "
                                   "choice as the library's own rules: an Open MPI dynamic "
                                   "rules file, or MPICH selection JSON. --verify FILE "
                                   "measures the default and those rules in alternate "
                                   "launches; exit 1 where the rules are slower, else 3 "
                                   "where any size is undetermined.")
    p.add_argument("collectives", nargs="*", metavar="COLL",
                   help="collectives, e.g. allreduce bcast allgather reduce alltoall")
    p.add_argument("--np", metavar="LIST",
                   help="process counts (default 4; --verify: the sizes the file names)")
    p.add_argument("--sizes", metavar="SPEC",
                   help=f"message sizes (default {DEFAULT_SIZES}; --verify: both sides of "
                        "every boundary between the file's ranges)")
    p.add_argument("--launches", default=str(LAUNCHES), metavar="K|auto",
                   help=f"launches, each measuring every algorithm (default %(default)s; "
                        f"auto: at least {AUTO_LAUNCHES[0]}, as `run`)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the rules file to write (default tune-openmpi.rules or "
                        "tune-mpich.json, as the MPI is)")
    p.add_argument("--verify", metavar="FILE",
                   help="measure the default against a rules file `tune` wrote instead")
    p.add_argument("--min-gain", default=DEFAULTS["tune"].threshold, metavar="G",
                   help="the least gain worth a rule: an algorithm is chosen only where it "
                        "is faster than the default by more, beyond doubt; --verify fails a "
                        "size where the rules are slower by more (default %(default)s)")
    p.add_argument("--late", metavar="RANK:DELAYS",
                   help="choose instead the algorithm that absorbs a late rank best: each "
                        "algorithm with RANK late by each delay (run --late), the lowest skew "
                        "sensitivity below the default's beyond doubt; prints the choice, "
                        "writes no rules (docs/under-load.md)")
    p.add_argument("--json", action="store_true", help="every point (or check) as JSON")
    p.add_argument("--junit", metavar="FILE",
                   help="--verify: also write JUnit XML, a testcase per size, rules slower "
                        "than the default a failure")
    add_fail_on(p)
    add_host_flags(p)
    add_mpi(p)
    add_db(p)
    p.set_defaults(func=run)


def _algorithm(known, name: str, label: str) -> None:
    """Refuses a kernel that is no collective with the library's algorithms."""
    takers = ", ".join(n for n, o in known.kernels.items() if VARY in o.params)
    if name not in known.kernels:
        raise UserError(f"tune: no collective '{name}'; tune takes {takers}")
    k = known.runnable(name)
    param = k.params.get(VARY)
    if param is None or param.kind != VARY:
        raise UserError(f"tune: {name} has no algorithm a library chooses; tune takes {takers}")
    if not param.choices:
        why = f"keeps {param.setting} fixed while a job runs" if param.fixed else \
            f"has no {param.setting}"
        raise UserError(f"tune: {label} {why}, so its {name} algorithm cannot be forced; "
                        "leave it out")


def _algorithms(known, name: str) -> tuple:
    """--each's values for every algorithm of `name` beside the default (None)."""
    return VARY, (None, *known.kernel(name).params[VARY].choices)


def _plans(args, mpi, known, kernels: list[str], np: str, sizes: str, launches: str,
           library=(), each: bool = False, verdict: VerdictSpec | None = None) -> list:
    """One plan per (np, collective), each case sampling CASE_S per launch; `each`: every
    algorithm beside the default."""
    return [plan for np_ in parse_ranks(np) for name in kernels
            for plan in plans(known, mpi, kernel=name, np=str(np_), sizes=sizes,
                              sampling=sampling(launches=launches), case_time_s=CASE_S,
                              library=library, verdict=verdict,
                              each=_algorithms(known, name) if each else None,
                              **host_args(args))]


def _measure(store, mpi, planned, argv) -> list[int]:
    """The runs' ids; a run that did not complete ends the command with its words."""
    runs = measure_runs(store, mpi, planned, ["commscope", *argv])
    for r in runs:
        if r.status != "complete":
            print(f"commscope: tune: run {r.run_id} ({r.plan.kernel.name} at {r.plan.ranks} "
                  f"ranks) {r.status}: {r.outcomes[-1].message}", file=sys.stderr)
            raise SystemExit(exit_code(r))
    say_oversubscribed(store, [r.run_id for r in runs])
    return [r.run_id for r in runs]


def _output(args, family: str) -> Path:
    check_output("-o", args.output)
    return Path(args.output or f"tune-{family}{FORMATS[family].SUFFIX}").resolve()


def _tune_late(args, argv, mpi, known) -> int:
    """tune --late: every algorithm of each collective beside the default, in the same
    launches, with a rank late (skew.py); per point and delay the one that absorbs it
    best beyond doubt (skew.absorbing)."""
    late = parse_late(args.late)
    made = [plan for np_ in parse_ranks(args.np or "4") for name in args.collectives
            for plan in plans(known, mpi, kernel=name, np=str(np_),
                              sizes=args.sizes or LATE_SIZES, sync="window", late=late,
                              each=_algorithms(known, name), **host_args(args),
                              sampling=sampling(iters=LATE_CYCLES * (len(late.delays_s) + 1),
                                                launches=args.launches))]
    store = writing_store(args.db)  # checked before launching
    run_ids = _measure(store, mpi, made, argv)
    found = absorbing_points(store, run_ids)
    if args.json:
        print_json("tune-late", {"runs": run_ids, "mpi": mpi.label, "points": found})
    else:
        print(render_absorbing(found, run_ids, args.db))
    return 0


def _tune(args, argv, mpi, known) -> int:
    if not args.collectives:
        raise UserError("tune: name the collectives to tune, e.g. commscope tune allreduce "
                        "bcast, or give --verify FILE")
    if args.junit or args.fail_on:
        raise UserError(f"tune: {'--junit' if args.junit else '--fail-on'} is for --verify, "
                        "whose checks pass or fail; drop it")
    for name in args.collectives:
        _algorithm(known, name, mpi.label)
    if args.late:
        if args.output:
            raise UserError("tune --late: it prints the choice and writes no rules file; "
                            "drop -o")
        return _tune_late(args, argv, mpi, known)
    path = _output(args, mpi.family)
    min_gain = parse_threshold(args.min_gain, "--min-gain")
    rules = FORMATS[mpi.family]
    writable = rules.writable(native_binary(mpi))
    # How the choice is made, stored with the runs so the report chooses as this did.
    verdict = VerdictSpec("tune", min_gain=f"{min_gain.fraction:g}", writable=None
                          if writable is None else {k: sorted(v) for k, v in writable.items()})
    planned = _plans(args, mpi, known, args.collectives, args.np or "4",
                     args.sizes or DEFAULT_SIZES, args.launches, each=True, verdict=verdict)
    store = writing_store(args.db)  # checked before launching
    run_ids = _measure(store, mpi, planned, argv)
    chosen = choose(points(by_run(store, run_ids)), can_name(verdict.writable), min_gain)
    if not chosen:
        shows = to_run("results", "show", ranges_of(run_ids, ","), db=args.db)
        raise UserError("tune: no point holds both the default and an algorithm; every "
                        f"case failed or was refused ({shows})")
    written = []
    for where, text in rules.files(path, ranges(chosen), known.kernels,
                                   native_binary(mpi)).items():
        if text is None:
            where.unlink(missing_ok=True)
        else:
            write_atomic(str(where), text)
            written.append(str(where))
    use = rules.use(path)
    if args.json:
        print_json("tune", {"runs": run_ids, "mpi": mpi.label, "written": written, "use": use,
                            "points": [p.as_dict() for p in chosen]})
    else:
        print(render(chosen, written, use, min_gain))
    return 0


def _verify(args, argv, mpi, known) -> int:
    if args.late:
        raise UserError("tune --verify: --late is for choosing; drop one of them")
    path = Path(args.verify).resolve()
    if not path.is_file():
        raise UserError(f"--verify {args.verify}: no such file")
    if args.collectives:
        raise UserError("tune --verify: the file names the collectives; drop "
                        f"{' '.join(args.collectives)}")
    check_output("--junit", args.junit)
    min_gain = parse_threshold(args.min_gain, "--min-gain")
    rules = FORMATS[mpi.family]
    read = rules.read(path.read_text(errors="replace"), args.verify)
    covered = read.collectives
    if not covered:
        raise UserError(f"--verify {args.verify}: it sets no collective's algorithm at any "
                        "communicator size; nothing to verify")
    for name in covered:
        _algorithm(known, name, mpi.label)
    settings = rules.settings(path)
    # the communicator sizes the file was tuned at
    np = args.np or ",".join(map(str, sorted({n for sizes in covered.values() for n in sizes})))
    # Per collective and np two pairs of runs, default (D) and rules (R), in the order
    # D R R D: launch k of each runs D R R D, so neither side always goes first.
    launches = str(math.ceil((parse_launches(args.launches) or LAUNCHES) / 2))
    quads = []
    for name in covered:
        sizes = _sizes(args, read, name, np)
        default, ruled = (_plans(args, mpi, known, [name], np, sizes, launches, library)
                          for library in ((), settings))
        quads += [[d, r, r, d] for d, r in zip(default, ruled)]
    store = writing_store(args.db)
    run_ids = _measure(store, mpi, [p for q in quads for p in q], argv)
    done = [run_ids[i:i + 4] for i in range(0, len(run_ids), 4)]
    checks = verify(store, [r for d, _, _, e in done for r in (d, e)],
                    [r for _, r1, r2, _ in done for r in (r1, r2)], min_gain)
    return emit(args, "tune-verify", lambda: {"runs": run_ids, "mpi": mpi.label,
                                               "rules": str(path), "min_gain": min_gain.fraction,
                                               "checks": checks},
                lambda: render_verify(checks, args.verify, min_gain), checks, junit)


def _sizes(args, read, name: str, np: str) -> str:
    """The sizes --verify measures `name` at: --sizes where given, else both sides of each
    boundary between the file's ranges (the default sizes where it has none: one choice
    at every size)."""
    if args.sizes:
        return args.sizes
    found = sorted({b for np_ in parse_ranks(np) for b in read.sizes(name, np_)})
    return ",".join(map(str, found)) if found else DEFAULT_SIZES


def run(args: argparse.Namespace, argv: list[str]) -> int:
    mpi = find_mpi(args.mpi)
    if mpi.family not in FORMATS:
        raise UserError(f"tune: {mpi.label} is neither Open MPI nor MPICH, whose rules "
                        "formats tune writes; choose one with --mpi PREFIX")
    known = catalog(mpi)
    return _verify(args, argv, mpi, known) if args.verify else _tune(args, argv, mpi, known)
