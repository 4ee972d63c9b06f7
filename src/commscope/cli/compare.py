"""`commscope compare A B`: which cases changed between two sets of runs (docs/compare.md)."""

from __future__ import annotations

import argparse

from ..compare import (ALPHA, DEFAULT_THRESHOLD, CaseChange, Comparison, compare, load_side,
                       parse_runs, parse_threshold)
from ..errors import UserError
from .common import add_db, existing_store, print_json

RUNS_HELP = "a run (3), runs (3,4,5 or 3-5), or every run of a sweep (sweep:2)"
HEADER = ("case", "A us", "B us", "shift us", "95% CI us", "relative", "p (BH)")


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="which cases got faster or slower between runs",
                       description="Test every case present in both A and B for a shift "
                                   "(Mann-Whitney U, Hodges-Lehmann; see docs/compare.md). "
                                   "Exit 1 when a case is significantly slower by more than "
                                   "--threshold.")
    p.add_argument("a", metavar="A", help=f"the baseline: {RUNS_HELP}")
    p.add_argument("b", metavar="B", help=f"compared with A: {RUNS_HELP}")
    p.add_argument("--threshold", default=DEFAULT_THRESHOLD, metavar="T",
                   help="slowdown that fails the comparison: 5%% or 0.05 (default 5%%)")
    p.add_argument("--all", action="store_true",
                   help="every matched case and the unmatched ones, not only significant changes")
    p.add_argument("--json", action="store_true", help="every matched case as JSON")
    add_db(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    threshold = parse_threshold(args.threshold)
    store = existing_store(args.db)
    runs_a = parse_runs(args.a, store, "A")
    runs_b = parse_runs(args.b, store, "B")
    both = sorted(set(runs_a) & set(runs_b))
    if both:
        raise UserError(f"run {both[0]} is in both A and B; give each run to one side")
    result = compare(load_side(store, runs_a), load_side(store, runs_b), threshold)
    if not result.changes:
        raise UserError(f"no case of A ({args.a}) matches one of B ({args.b}) in kernel, "
                        "size, ranks and settings; `commscope results show RUN` lists them")
    if args.json:
        print_json({"a_runs": runs_a, "b_runs": runs_b, "alpha": ALPHA, "threshold": threshold,
                    "correction": "benjamini-hochberg",
                    "cases": [c.as_dict() for c in result.changes],
                    "only_a": [c.as_dict() for c in result.only_a],
                    "only_b": [c.as_dict() for c in result.only_b],
                    "regressions": len(result.regressions)})
    else:
        shown = [c for c in result.changes if args.all or c.change != "none"]
        if shown:
            print(_table(shown))
        if args.all:
            for side, unmatched in (("A", result.only_a), ("B", result.only_b)):
                for cid in unmatched:
                    print(f"only in {side}: {cid.label()}")
        print(_summary(result))
    return 1 if result.regressions else 0


def _us(seconds: float | None, signed: bool = False) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:{'+' if signed else ''}.3f}"


def _row(c: CaseChange) -> tuple[str, ...]:
    ci = "-" if c.shift_ci_low_s is None else \
        f"{_us(c.shift_ci_low_s, True)} to {_us(c.shift_ci_high_s, True)}"
    relative = "-" if c.relative is None else f"{c.relative * 100:+.1f}%"
    mark = "" if c.change == "none" else f" {c.change}"
    return (c.case.label(), _us(c.median_a_s), _us(c.median_b_s), _us(c.shift_s, True), ci,
            relative + mark, _p(c.p_adjusted))


def _p(p: float) -> str:
    # Far out in the tails the normal approximation's digits mean nothing.
    return "<1e-16" if p < 1e-16 else f"{p:.2g}"


def _table(changes: list[CaseChange]) -> str:
    rows = [HEADER] + [_row(c) for c in changes]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _summary(result: Comparison) -> str:
    matched = len(result.changes)
    faster, slower = result.count("faster"), result.count("slower")
    unmatched = len(result.only_a) + len(result.only_b)
    line = (f"{matched} matched cases: {faster} faster, {slower} slower, "
            f"{matched - faster - slower} without significant change "
            f"(BH-adjusted p < {ALPHA:g} and shift CI excluding 0); {unmatched} unmatched "
            f"({len(result.only_a)} only in A, {len(result.only_b)} only in B)")
    regressions = len(result.regressions)
    if regressions:
        line += (f"\n{regressions} case(s) slower by more than the threshold "
                 f"{result.threshold * 100:g}%")
    return line
