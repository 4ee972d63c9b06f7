"""`commscope compare A B`: which cases changed between two sets of runs (docs/compare.md)."""

from __future__ import annotations

import argparse

from .. import names, selection
from ..compare import compare, load_side
from ..errors import UserError
from ..results import case_history
from ..verdict import ALPHA, DEFAULTS, parse_threshold
from ..views.compare import TIMED_OTHERWISE, junit, render
from .common import (add_db, check_directory, existing_store, print_json, say_oversubscribed,
                     write_atomic)


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("compare", help=summary,
                       description="Test every case present in both A and B at the "
                                   "threshold: a t test on the log launch medians, each side "
                                   "one command (see docs/compare.md). Exit 1 when a case is "
                                   "slower by more than --threshold, beyond doubt.")
    p.add_argument("a", metavar="A", help=f"the baseline: {selection.SYNTAX}")
    p.add_argument("b", metavar="B", help=f"compared with A: {selection.SYNTAX}")
    p.add_argument("--threshold", default=DEFAULTS["compare"], metavar="T",
                   help="the bandwidth shortfall that fails the comparison: 5%% (B below 0.95 "
                        "of A's rate) or 0.05 (default %(default)s)")
    p.add_argument("--all", action="store_true",
                   help="every matched case and the unmatched ones, not only significant changes")
    p.add_argument("--json", action="store_true", help="every matched case as JSON")
    p.add_argument("--junit", metavar="FILE",
                   help="also write JUnit XML: a testcase per matched case, a regression "
                        "a failure")
    add_db(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    threshold = parse_threshold(args.threshold)
    check_directory("--junit", args.junit)
    store = existing_store(args.db)
    runs_a = selection.parse(args.a, store, "A")
    runs_b = selection.parse(args.b, store, "B")
    both = sorted(set(runs_a) & set(runs_b))
    if both:
        raise UserError(f"run {both[0]} is in both A and B; give each run to one side")
    result = compare(load_side(store, runs_a), load_side(store, runs_b), threshold,
                     lambda cases, near: case_history(store, cases, near))
    if not result.changes and result.timed_otherwise:
        raise UserError(f"no case of A ({args.a}) matches one of B ({args.b}): "
                        f"{TIMED_OTHERWISE}")
    if not result.changes:
        raise UserError(f"no case of A ({args.a}) matches one of B ({args.b}) in kernel, "
                        "size, ranks and settings; `commscope results show RUN` lists them")
    say_oversubscribed(store, runs_a + runs_b)
    if args.junit:
        write_atomic(args.junit, junit(result))
    if args.json:
        print_json("compare", {
            "a_runs": runs_a, "b_runs": runs_b, "alpha": ALPHA, "threshold": threshold.fraction,
            "correction": "benjamini-hochberg",
            "cases": [c.as_dict(names.identity) for c in result.changes],
            "only_a": [dict(ident, case=names.identity(ident)) for ident in result.only_a],
            "only_b": [dict(ident, case=names.identity(ident)) for ident in result.only_b],
            "regressions": len(result.regressions)})
    else:
        print(render(result, args.all))
    return 1 if result.regressions else 0
