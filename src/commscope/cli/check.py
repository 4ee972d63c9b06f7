"""`commscope check [ID...|--all]`: measure both sides of each performance guideline in the
same launches, or judge stored runs (--runs), and give each (np, size) a verdict
(docs/guidelines.md)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from ..store import names, selection
from ..system.errors import UserError, to_run
from ..judge.guidelines import SIZE_KINDS, catalogue, impossible, measures, sides
from ..system.kernels import catalog
from ..measure.launches import measure_runs
from ..system.mpi import family, find_mpi
from ..measure.plan import AUTO_LAUNCHES, parse_ranks, plans, sampling
from ..judge.checks import Checked, check, remedies
from ..judge.tune import judged
from ..system.sizes import format_bytes
from ..stats.verdict import DEFAULTS, VerdictSpec, parse_threshold
from ..stats.verdict.spec import by_spec
from ..views.check import junit, render
from .common import (add_db, add_fail_on, add_mpi, check_output, emit, existing_store,
                     say_oversubscribed, writing_store)

DEFAULT_SIZES = "8:1MiB"
# Seconds each plan (a kernel and what varies on it) may spend on its launches: a verdict
# compares two sides, so each gets more than a `run` case's 1 s (docs/guidelines.md).
MAX_TIME = 3.0
# Launches by default: 5 give the paired t 4 degrees of freedom. With auto's 3 (2 degrees
# of freedom, a heavy tail), Benjamini-Hochberg over the ~1400 verdicts of --all left a
# ratio of 1.87 (interval 1.72-2.04) 'within noise' in one command and violated in the next.
LAUNCHES = DEFAULTS["check"].launches


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("check", help=summary,
                       description="Judge the MPI library by its own performance guidelines "
                                   "(Traff, Gropp and Thakur 2010): a collective no slower "
                                   "than a mock-up of it, a specialised call no slower than "
                                   "a general one, weaker semantics no slower, time not "
                                   "falling as a message grows, one message no slower than "
                                   "k of a k-th. Both sides run in the same launches. Exit "
                                   "1 when a guideline is violated; else 3 when any verdict "
                                   "is undetermined or inconclusive.")
    p.add_argument("ids", nargs="*", metavar="ID",
                   help="guidelines by id (listed below), e.g. allreduce<=reduce+bcast, "
                        "monotony:bcast")
    p.add_argument("--all", action="store_true", help="every guideline of the catalogue")
    p.add_argument("--runs", metavar="SEL",
                   help=f"judge stored runs instead of measuring: {selection.SYNTAX}")
    p.add_argument("--np", default="2", metavar="LIST", help="process counts (default 2)")
    p.add_argument("--sizes", default=DEFAULT_SIZES, metavar="SPEC",
                   help="message sizes (default %(default)s)")
    p.add_argument("--launches", default=str(LAUNCHES), metavar="K|auto",
                   help=f"launches each side is measured in: K, or auto (at least "
                        f"{AUTO_LAUNCHES[0]}, as `run`; default %(default)s)")
    p.add_argument("--threshold", metavar="T",
                   help="how far below the right side's bandwidth the left side must be to "
                        f"violate (default {DEFAULTS['check'].threshold}; with --runs, what the "
                        "command that measured them gave)")
    p.add_argument("--families", choices=("command", "guideline"), default="command",
                   help="how verdicts are adjusted: the guidelines selected together, so "
                        "the command as a gate fails falsely at most 5% of the time "
                        "(default), or each guideline on its own (docs/statistics.md)")
    p.add_argument("--catalogue", metavar="FILE",
                   help="more guidelines of your own, in the format of commscope's "
                        "guidelines.json (docs/guidelines.md)")
    p.add_argument("--json", action="store_true", help="the runs and verdicts as JSON")
    p.add_argument("--junit", metavar="FILE", help="also write the verdicts as JUnit XML")
    add_fail_on(p)
    add_mpi(p)
    add_db(p)
    p.more_help = lambda: "guidelines:\n  " + "\n  ".join(catalogue().ids)
    p.set_defaults(func=run)


def _judgeable(g, sizes: list[int]) -> None:
    """Refuse, before measuring, a size guideline the sizes cannot judge."""
    if g.kind == "monotony" and len(sizes) < 2:
        raise UserError(f"check: {g.id} compares neighbouring sizes; give two or more in "
                        "--sizes")
    if g.kind == "split" and not any(m and m % g.k == 0 and m // g.k in sizes for m in sizes):
        wanted = ",".join(format_bytes(m // g.k) for m in sizes if m and m % g.k == 0)
        raise UserError(f"check: {g.id} compares m with {g.k} messages of m/{g.k}, and no "
                        f"m/{g.k} is among --sizes; add {wanted or 'sizes divisible by 2'}")


def _measure(args, cat, command: list[str], verdict: VerdictSpec
             ) -> tuple[list[int], object, list, str]:
    """Plan every guideline at every process count, refusing what cannot be checked
    before anything runs; then measure them, launch k of every plan before launch k+1.
    Each run stores `verdict`, how its claims are made, so --runs and the report judge as
    this command did."""
    mpi = find_mpi(args.mpi)
    known = catalog(mpi)
    chosen = cat.everything() if args.all else cat.find(args.ids, known.kernels)
    planned = []
    for np_ in parse_ranks(args.np):
        for g in chosen:
            reason = impossible(g, np_, known.kernel(g.kernel).min_ranks)
            if reason:
                raise UserError(f"check: {reason}")
        for m in measures(chosen):
            (plan,) = plans(known, mpi, kernel=m.kernel, np=str(np_), sizes=args.sizes,
                            sampling=sampling(launches=args.launches, max_time=MAX_TIME),
                            verdict=replace(verdict, guidelines=tuple(g.id for g in chosen)),
                            **sides(m, chosen, cat))
            if not args.all:
                for g in chosen:
                    if g.kernel == m.kernel and g.kind in SIZE_KINDS:
                        _judgeable(g, plan.sizes)
            planned.append(plan)
    store = writing_store(args.db)  # checked before launching
    runs = measure_runs(store, mpi, planned, command)
    for r in runs:
        if r.run_id is not None and not store.cases(r.run_id):
            print(f"commscope: run {r.run_id} ({r.plan.kernel.name}) measured no case: "
                  f"{_why_none(store, r.run_id)}", file=sys.stderr)
    return [r.run_id for r in runs if r.run_id is not None], store, chosen, mpi.family


def _why_none(store, run_id: int) -> str:
    """Why a run of check holds no case: its skips' reasons, or its end."""
    skips = store.skips(run_id)
    row = store.run(run_id)
    if skips:
        return "; ".join(dict.fromkeys(s.reason for s in skips))
    return row.message or f"it ended {names.status(row)}"


def stored_verdict(store, run_ids: list[int]) -> VerdictSpec:
    """How the command that measured these runs judged them (the first run's), or as
    check does by default."""
    for run_id in run_ids:
        found = VerdictSpec.of(store.run(run_id).settings.get("verdict"))
        if found:
            return found
    return VerdictSpec("check")


def _stored(args, cat) -> tuple[list[int], object, list, str | None]:
    store = existing_store(args.db)
    run_ids = selection.parse(args.runs, store, "--runs")
    kernels = {store.run(r).kernel for r in run_ids}
    chosen = cat.find(args.ids, kernels | {g.kernel for g in cat.guidelines}) if args.ids \
        else cat.on(sorted(kernels))
    return run_ids, store, chosen, family(store.run(run_ids[0]).mpi_version or "")


def _tuned(store, guidelines) -> list:
    """tune's choices for the collectives these guidelines judge, from the tune runs the
    results file holds, each judged as its command did (tune.judged)."""
    kernels = {g.kernel for g in guidelines if g.kind in ("pattern", "specialised")}
    groups = by_spec([r for r in store.runs() if r.kernel in kernels], "tune")
    return judged(store, [(given, [r.id for r in runs]) for given, runs in groups])


def run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.runs and args.all:
        raise UserError("check: --runs judges what the runs hold; drop --all")
    if not (args.ids or args.all or args.runs):
        raise UserError(f"check: name guidelines (listed in {to_run('check', '--help')}), or "
                        "give --all, or --runs SEL to judge stored runs")
    check_output("--junit", args.junit)
    if args.runs:
        given = stored_verdict(existing_store(args.db), selection.parse(
            args.runs, existing_store(args.db), "--runs"))
        threshold = parse_threshold(args.threshold) if args.threshold else given.limit
        cat = catalogue(args.catalogue, given.catalogue)
        args.ids = args.ids or given.guidelines  # the command's, so its families
        run_ids, store, chosen, family = _stored(args, cat)
    else:
        threshold = parse_threshold(args.threshold or DEFAULTS["check"].threshold)
        cat = catalogue(args.catalogue)
        verdict = VerdictSpec("check", f"{threshold.fraction:g}", catalogue=cat.extra)
        run_ids, store, chosen, family = _measure(args, cat, ["commscope", *argv], verdict)
    say_oversubscribed(store, run_ids)
    found = check(store, run_ids, chosen, threshold, args.families == "command")
    if args.runs and not found:
        wanted = ", ".join(g.id for g in chosen if g.kind not in SIZE_KINDS) or "monotony, split"
        raise UserError(f"check --runs {args.runs}: nothing to check; these runs hold no "
                        f"size sweep and neither side of a guideline ({wanted}) together")
    tuned = _tuned(store, chosen) if any(c.failing for c in found) else []
    result = Checked(run_ids, threshold, args.families, found,
                     remedies(found, chosen, family, tuned))
    return emit(args, "check", result.as_dict, lambda: render(result), found, junit)
