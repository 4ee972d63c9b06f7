"""`commscope compare A B`: which cases changed between two sets of runs; `compare --live
KERNEL ...`: A and B measured side by side in one command (docs/compare.md)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from ..judge import live
from ..store import selection
from ..judge.compare import compare, load_side
from ..measure.plan import side
from ..system.errors import UserError, to_run
from ..system.mpi import find_mpi
from ..system.progress import Progress
from ..figures.read import case_history
from ..stats.verdict import DEFAULTS, UNDETERMINED, parse_threshold
from ..views import live as live_view
from ..views.compare import TIMED_OTHERWISE, differ_lines, junit, render
from .common import (add_db, add_fail_on, check_output, emit, existing_store, say_oversubscribed,
                     writing_store)


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("compare", help=summary,
                       description="Test every case present in both A and B at the "
                                   "threshold: a t test on the log launch medians, each side "
                                   "one command (see docs/compare.md). Exit 1 when a case is "
                                   "slower by more than --threshold, beyond doubt; else 3 "
                                   "when any is undetermined or inconclusive.")
    p.add_argument("a", metavar="A", help=f"the baseline: {selection.SYNTAX}; with --live, "
                                          "the kernel (and every option of `commscope run`)")
    p.add_argument("b", metavar="B", nargs="?", help=f"compared with A: {selection.SYNTAX}")
    p.add_argument("--live", action="store_true",
                   help="measure A (the run command as given) and B (the same with the --b-* "
                        "changes) alternated in one command, judged on launch pairs, until "
                        f"every case is decided or --max-time (default {live.LIVE_MAX_TIME:g} "
                        "s) runs out")
    _b_options(p)
    p.add_argument("--threshold", default=DEFAULTS["compare"].threshold, metavar="T",
                   help="the bandwidth shortfall that fails the comparison: 5% (B below 0.95 "
                        "of A's rate) or 0.05 (default %(default)s)")
    p.add_argument("--all", action="store_true",
                   help="every matched case and the unmatched ones, not only significant changes")
    p.add_argument("--json", action="store_true", help="every matched case as JSON")
    p.add_argument("--junit", metavar="FILE",
                   help="also write JUnit XML: a testcase per matched case, a regression "
                        "a failure")
    add_fail_on(p)
    add_db(p)
    p.set_defaults(func=run, kernel_flags=True)  # --live: the run options, parsed again


def _b_options(p) -> None:
    p.add_argument("--b-env", action="append", default=[], metavar="NAME=VALUE",
                   help="--live: environment for B's ranks (repeatable), e.g. LD_PRELOAD=...")
    p.add_argument("--b-mpi", metavar="PREFIX", help="--live: B runs on this MPI installation")
    p.add_argument("--b-mca", action="append", default=[], metavar="NAME=VALUE",
                   help="--live: a library setting for B (repeatable): an Open MPI MCA "
                        "parameter, an MPICH MPIR_CVAR_*")


def run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.live:
        return run_live(argv)
    if args.b is None or args.extra:
        raise UserError(f"compare: unrecognized arguments: {' '.join(args.extra)}"
                        if args.b is not None else
                        "compare: give A and B (stored runs), or --live KERNEL")
    if args.b_env or args.b_mpi or args.b_mca:
        raise UserError("--b-env, --b-mpi and --b-mca: give them with --live KERNEL")
    threshold = parse_threshold(args.threshold)
    check_output("--junit", args.junit)
    store = existing_store(args.db)
    runs_a = selection.parse(args.a, store, "A")
    runs_b = selection.parse(args.b, store, "B")
    both = sorted(set(runs_a) & set(runs_b))
    if both:
        raise UserError(f"run {both[0]} is in both A and B; give each run to one side")
    result = replace(compare(load_side(store, runs_a), load_side(store, runs_b), threshold,
                             lambda cases: case_history(store, cases)),
                     a_runs=runs_a, b_runs=runs_b)
    if not result.changes and result.timed_otherwise:
        raise UserError(f"no case of A ({args.a}) matches one of B ({args.b}): "
                        f"{TIMED_OTHERWISE}")
    if not result.changes:
        shows = to_run("results", "show", f"{args.a},{args.b}", db=args.db)
        raise UserError(f"no case of A ({args.a}) matches one of B ({args.b}) in kernel, "
                        f"size, ranks and settings; {shows} lists them")
    say_oversubscribed(store, runs_a + runs_b)
    if args.json:
        for line in differ_lines(result):
            print(f"commscope: {line}", file=sys.stderr)
    return emit(args, "compare", result.as_dict, lambda: render(
        result, args.all, _live_remedy(store, runs_a, runs_b)
        if result.count(UNDETERMINED) else None), result.testcases(), junit)


def _live_remedy(store, runs_a: list[int], runs_b: list[int]) -> str:
    a, b = store.run(runs_a[0]), store.run(runs_b[0])
    return live.live_command(a.command, b.command, a.kernel)


def _live_args(argv: list[str]) -> argparse.Namespace:
    """The command line again, as `commscope run` reads it (its one argument building),
    with compare's own options and the B changes."""
    from . import _Parser
    from . import run as run_verb
    top = _Parser(prog="commscope", allow_abbrev=False)
    sub = top.add_subparsers(dest="verb", parser_class=_Parser)
    run_verb.add_parser(sub, "")
    p = sub.choices["run"]
    p.prog = "commscope compare --live"
    p.add_argument("--live", action="store_true")
    _b_options(p)
    p.add_argument("--threshold", default=DEFAULTS["compare"].threshold)
    p.add_argument("--junit", metavar="FILE")
    add_fail_on(p)
    p.set_defaults(max_time=None)
    rest = list(argv)
    rest.remove("compare")
    args, extra = top.parse_known_args(["run", *rest])
    args.extra = extra
    return args


def run_live(argv: list[str]) -> int:
    """Everything checked before the results file is opened, so bad input stores nothing."""
    from .run import plans_from
    args = _live_args(argv)
    threshold = parse_threshold(args.threshold)
    check_output("--junit", args.junit)
    env = live.assignments(args.b_env, "--b-env")
    mca = live.assignments(args.b_mca, "--b-mca")
    if not (env or mca or args.b_mpi):
        raise UserError("compare --live: give what B changes: --b-env NAME=VALUE, --b-mpi "
                        "PREFIX or --b-mca NAME=VALUE")
    budget = live.LIVE_MAX_TIME if args.max_time is None else args.max_time
    if args.launches == "auto":
        args.launches = str(live.MAX_PAIRS)
    elif not args.launches.isdigit() or int(args.launches) < 2:
        raise UserError(f"--launches {args.launches}: with --live, the most pairs: 2 or more")
    args.max_time = budget / 2  # checked by the plan builder; each side's half
    mpi_a = find_mpi(args.mpi)
    try:
        mpi_b = find_mpi(args.b_mpi) if args.b_mpi else mpi_a
    except UserError as exc:
        raise UserError(f"--b-mpi {args.b_mpi}: no MPI there ({exc})") from None
    sides = {"A": live.Side(mpi_a, side(plans_from(args, mpi_a), "A", budget / 2)),
             "B": live.Side(mpi_b, side(plans_from(args, mpi_b), "B", budget / 2, mca, env))}
    store = writing_store(args.db)
    cases = sum(p.cases for p in sides["A"].plans + sides["B"].plans)
    progress = Progress(cases * int(args.launches), f"{args.kernel} A/B")
    found = live.measure(store, sides, ["commscope", *argv], budget, threshold, progress)
    progress.close()
    change = {"env": dict(env), "mpi": args.b_mpi, "mca": dict(mca)}
    return emit(args, "compare-live", lambda: live_view.as_json(found, threshold, budget, change),
                lambda: live_view.render(found, threshold, budget), live_view.testcases(found),
                live_view.junit)
