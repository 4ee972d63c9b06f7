"""`commscope predict KERNEL --from RUN`: ring and collective times from a fitted t(m)."""

from __future__ import annotations

import argparse
import itertools
import sys

from ..store import selection
from ..figures.read import summaries
from ..stats.summary import CaseSummary
from ..system.errors import UserError
from ..models.collectives import ALGORITHMS
from ..models.groups import MAX_SEGMENTS, GroupFit, fit_runs, kept_cases
from ..models.loggp import fit_loggp
from ..models.maxrate import fit_maxrate
from ..models.predict import comparable, predictions
from ..measure.plan import parse_ranks
from ..system.sizes import parse_sizes
from ..store.store import Store
from ..views.message_models import loggp_label, maxrate_label
from ..views.models import render_predictions, source_label
from .common import add_db, existing_store, print_json


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("predict", help=summary,
                       description="Predict the ring (seed 001) and collectives (Thakur, "
                                   "Rabenseifner & Gropp 2005) from alpha and B fitted to a "
                                   "point-to-point run (or LogGP from a loggp run), and "
                                   "mbw_mr from the max-rate model of mbw_mr runs, against "
                                   "measured runs; see docs/models.md.")
    p.add_argument("kernel", nargs="?", choices=list(ALGORITHMS), metavar="KERNEL",
                   help=f"what to predict: {', '.join(ALGORITHMS)}")
    p.add_argument("--profile", metavar="RUN",
                   help="instead: price a profiled program's calls (commscope profile, or an "
                        "imported mpisee or mpiP profile) on this cluster's measurements: "
                        "dominance, efficiency and what-ifs (docs/profile.md)")
    p.add_argument("--on", action="append", metavar="RUNS|FILE",
                   help="with --profile: the measurements to price on, runs of --db or "
                        "another results file (default every measured run of --db); each "
                        "further --on is a what-if")
    p.add_argument("--scale-bandwidth", type=float, metavar="X",
                   help="with --profile: a what-if with every bandwidth times X")
    p.add_argument("--rules", metavar="FILE",
                   help="with --profile: a what-if with the collectives priced on the runs "
                        "measured under this rules file of `commscope tune` (its --verify "
                        "measures them)")
    p.add_argument("--from", dest="source", metavar="RUNS",
                   help="the run(s) whose fit gives t(m), e.g. a pingping or pingpong run, "
                        "or a loggp run (LogGP's o_s + (m-1) G + L + o_r): "
                        f"{selection.SYNTAX}")
    p.add_argument("--mode", metavar="MODE",
                   help="the send mode to take from --from when it has several")
    p.add_argument("--np", metavar="LIST", help="process counts: 2,3,4 or 2:16")
    p.add_argument("--sizes", metavar="SPEC", help="sizes, as for `commscope run`")
    p.add_argument("--compare", nargs="+", default=[], metavar="RUNS",
                   help=f"measured runs of KERNEL to set the predictions against: "
                        f"{selection.SYNTAX}")
    p.add_argument("--one-line", action="store_true",
                   help="use the single Hockney line, not the segments the BIC chose")
    p.add_argument("--gamma", type=float, default=0.0, metavar="S_PER_BYTE",
                   help="reduction compute time per byte (default 0: not modelled)")
    p.add_argument("--json", action="store_true",
                   help="print JSON: a prediction per row (docs/schemas.md)")
    add_db(p)
    p.set_defaults(func=run)


def source_fit(store: Store, spec: str, mode: str | None) -> GroupFit:
    """The one configuration of the runs `spec` (of send mode `mode`) with its fit."""
    run_ids = selection.parse(spec, store, "--from")
    found = fit_runs(store, run_ids, None, MAX_SEGMENTS, resamples=0, flag="--from")
    if mode:
        found = [g for g in found if g.group.config["send_mode"] == mode]
        if not found:
            raise UserError(f"--mode {mode}: run {spec} has no {mode} cases")
    if len(found) > 1:
        modes = ", ".join(str(g.group.config["send_mode"]) for g in found)
        raise UserError(f"--from {spec}: {len(found)} configurations (send modes {modes}); "
                        "choose one with --mode")
    if found[0].fit is None:
        raise UserError(f"--from {spec}: {found[0].note}")
    return found[0]


def maxrate_source(store: Store, spec: str):
    """The max-rate model of the mbw_mr runs `spec` (at two rank counts or more)."""
    cases = [c for c in kept_cases(store, selection.parse(spec, store, "--from"))
             if c.kernel == "mbw_mr"]
    model = fit_maxrate(cases) if cases else None
    if model is None:
        raise UserError(f"--from {spec}: the max-rate model needs mbw_mr runs at two rank "
                        "counts or more, with two sizes or more")
    return model.time_s, maxrate_label(cases, model)


def measured_cases(store: Store, specs: list[str], kernel_name: str) -> list[CaseSummary]:
    """The --compare runs' cases of the kernel, each its figure (figures.read.measured,
    run by run)."""
    if not specs:
        return []
    run_ids = [r for spec in specs for r in selection.parse(spec, store, "--compare")]
    cases = [s for r in run_ids for s in summaries(store, [r]) if comparable(s, kernel_name)]
    if not cases:
        what = f"{kernel_name} cases with pattern ring" if kernel_name == "ring" \
            else f"{kernel_name} cases"
        raise UserError(f"--compare {' '.join(specs)}: no {what}")
    return cases


def grid(args: argparse.Namespace, measured: list[CaseSummary]) -> list[tuple[int, int]]:
    """--np x --sizes; else the measured (ranks, bytes), narrowed by whichever was given."""
    ranks = parse_ranks(args.np) if args.np else None
    sizes = parse_sizes(args.sizes) if args.sizes else None
    if ranks and sizes:
        return list(itertools.product(ranks, sizes))
    if not measured:
        raise UserError("predict: give --np and --sizes, or --compare RUN with measured cases")
    points = sorted({(c.ranks, c.bytes) for c in measured
                     if (not ranks or c.ranks in ranks) and (not sizes or c.bytes in sizes)})
    if not points:
        raise UserError("--np/--sizes: none of the --compare cases has these ranks and sizes")
    return points


def run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.profile is not None:
        from .predict_profile import run as run_profile
        return run_profile(args)
    if args.on or args.scale_bandwidth is not None or args.rules:
        raise UserError("predict: --on, --rules and --scale-bandwidth price a profile; give "
                        "--profile RUN")
    if not args.kernel or not args.source:
        raise UserError("predict: give KERNEL and --from RUNS (a fitted run), or --profile "
                        "RUN (a profiled program)")
    if args.gamma < 0:
        raise UserError(f"--gamma {args.gamma}: give a time per byte >= 0")
    store = existing_store(args.db)
    source = None if args.kernel == "mbw_mr" else source_fit(store, args.source, args.mode)
    measured = measured_cases(store, args.compare, args.kernel)
    points = grid(args, measured)
    if min(r for r, _ in points) < 2:
        raise UserError("--np: the models need at least 2 ranks")
    if args.kernel == "mbw_mr":  # several senders a node: the max-rate model
        t, label = maxrate_source(store, args.source)
    elif source.group.config["kernel"] == "loggp":  # a message's time by LogGP
        model = fit_loggp(source.group.cases)
        if model is None:
            raise UserError(f"--from {args.source}: its loggp cases have no phases stored")
        t, label = model.time_s, loggp_label(source.group, model)
    else:
        t = source.fit.single.line.time_s if args.one_line else source.fit.time_s
        label = source_label(source, args.one_line)
    rows = predictions(args.kernel, t, points, measured, args.gamma)
    for run_id in sorted({c.run for c in measured if c.oversubscribed}):
        print(f"commscope: warning: run {run_id} ran more ranks than cores: its times "
              "include time-slicing, which the models leave out; compare runs with one "
              "rank per core", file=sys.stderr)
    if args.json:
        print_json("predict", {"predictions": rows})
    else:
        print(render_predictions(rows, label, args.gamma))
    return 0
