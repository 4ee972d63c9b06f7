"""`commscope results list | show RUNS | export RUNS --format csv|json|bmf|gab|prom | history
CASE | recover`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..store import names
from ..store.rows import RunRow
from ..measure import recovery
from ..store import selection
from ..system.errors import UserError, to_run
from ..profiles import stored
from ..watch import history as watch
from ..views import watch as history_view
from ..views.prometheus import watch as watch_prom
from ..figures.read import exported, measured, quality, summaries
from ..views import export
from ..views.export import MEASURES
from ..views.profile import render_profile
from ..views.run import imported_from, labels, render, render_provenance, render_runs
from .common import (add_db, add_wide, check_output, emit, existing_store, json_text, print_json,
                     strict_json, write_atomic)

FORMATS = ("csv", "json", "bmf", "gab", "prom")

def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("results", help=summary)
    actions = p.add_subparsers(dest="action", required=True, parser_class=type(p))
    listing = actions.add_parser("list", help="one line per run")
    listing.add_argument("--json", action="store_true",
                         help="print JSON: a line per run (docs/schemas.md)")
    add_db(listing)
    show = actions.add_parser("show", help="the summary table of runs")
    show.add_argument("runs", metavar="RUNS", help=selection.SYNTAX)
    show.add_argument("--json", action="store_true",
                      help="print JSON: the runs' case summaries, as run --json does")
    add_wide(show)
    add_db(show)
    export = actions.add_parser("export", help="runs' cases for scripts, CI and dashboards "
                                               "(docs/schemas.md)")
    export.add_argument("runs", metavar="RUNS", help=selection.SYNTAX)
    add_db(export)
    fmt = export.add_mutually_exclusive_group(required=True)
    fmt.add_argument("--format", choices=FORMATS,
                     help="csv: tidy, a row per run and case; json: each run, its context and "
                          "every case with raw samples; bmf: Bencher Metric Format; gab: "
                          "github-action-benchmark's custom JSON; prom: Prometheus text")
    fmt.add_argument("--csv", dest="format", action="store_const", const="csv",
                     help="--format csv")
    fmt.add_argument("--json", dest="format", action="store_const", const="json",
                     help="--format json")
    export.add_argument("--measure", choices=MEASURES, default="latency",
                        help="gab: latency (customSmallerIsBetter) or bandwidth "
                             "(customBiggerIsBetter) (default %(default)s)")
    export.add_argument("-o", "--output", metavar="FILE",
                        help="write FILE (whole or not at all: a textfile collector never "
                             "reads half of it) instead of printing")
    _add_history(actions)
    recover = actions.add_parser("recover", help="end the runs whose command died, storing "
                                                  "the cases their ranks finished after")
    add_db(recover)
    p.set_defaults(func=run)


def _add_history(actions) -> None:
    h = actions.add_parser("history", help="a watch's cases over its probes: steps, flapping "
                                           "and the expected level (docs/watch.md)")
    h.add_argument("case", metavar="CASE",
                   help="the case's words as its name shows them, each one of them: "
                        "'pingpong 8 B', 'allreduce np4'; 'all': every case")
    h.add_argument("--watch", metavar="NAME", help="this watch only (default: every watch "
                                                   "in the results file)")
    h.add_argument("--expect", metavar="FILE",
                   help="judge against another results file (a fleet's): each case's "
                        "expected level from its commands there, on any hosts")
    h.add_argument("--json", action="store_true", help="print JSON (docs/schemas.md)")
    h.add_argument("--junit", metavar="FILE",
                   help="write a JUnit testcase per step and per case's flapping; the exit "
                        "status is then the gate's (0 passed, 1 a step or flapping, 3 "
                        "undetermined)")
    h.add_argument("--prom", metavar="FILE",
                   help="write Prometheus text for node_exporter's textfile collector: each "
                        "case's latest time, expected time, step and flapping indicators")
    add_db(h)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.action == "recover":
        return _recover(args.db)
    store = existing_store(args.db)
    if args.action == "history":
        return _history(args, store)
    if args.action == "list":
        if args.json:
            print_json("runs", {"runs": [_listed(row) for row in store.runs()]})
        else:
            print(render_runs(store.runs()))
        return 0
    runs = selection.parse(args.runs, store, "RUNS")
    if args.action == "show" and args.json:
        print_json("cases", {"cases": summaries(store, runs)})
    elif args.action == "show":
        print("\n\n".join(_show(store, run_id, args.wide) for run_id in runs))
    else:
        _write_export(args, store, runs)
    return 0


def _write_export(args, store, runs: list[int]) -> None:
    if args.measure != "latency" and args.format != "gab":
        raise UserError(f"--measure {args.measure}: only --format gab takes one measure; "
                        f"{args.format} holds latency and bandwidth both")
    check_output("--output", args.output)
    if args.format == "json":
        text = json_text("export", {"runs": [_export(store, r) for r in runs]}) + "\n"
    else:
        rows = exported(store, runs)
        text = {"csv": lambda: export.csv_text(rows),
                "bmf": lambda: strict_json(export.bmf(rows)) + "\n",
                "gab": lambda: strict_json(export.gab(rows, args.measure)) + "\n",
                "prom": lambda: export.prom(rows)}[args.format]()
    if args.output:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)


def _history(args, store) -> int:
    check_output("--junit", args.junit)
    check_output("--prom", args.prom)
    if args.expect and not Path(args.expect).is_file():
        raise UserError(f"--expect {args.expect}: no such results file; give the results "
                        "file of the machines to judge against")
    reference = existing_store(args.expect) if args.expect else None
    judged = watch.history(store, args.watch, reference=reference)
    if not judged:
        which = f"no watch {args.watch}" if args.watch else "no watch"
        raise UserError(f"{args.db}: {which} in this results file; commscope watch stores "
                        f"one ({to_run('results', 'list', db=args.db)} shows the runs)")
    found = _named(judged, args.case)
    code = emit(args, "history", lambda: history_view.as_json(found),
                lambda: history_view.render(found), watch.claims(found),
                lambda cases, fail_on: watch.junit_text(found), lambda: watch_prom(found))
    return code if args.junit else 0


def _named(judged: list, case: str) -> list:
    """The cases CASE names: each of its words a word of the case's name ('all': all)."""
    if case.strip() == "all":
        return judged
    words = case.split()
    found = [s for s in judged
             if all(w in s.name.replace("(", " ").replace(")", " ").split() for w in words)]
    if not found:
        known = "; ".join(dict.fromkeys(s.name for s in judged))
        raise UserError(f"CASE {case}: no case of the watch has these words; give words of "
                        f"one of: {known}")
    return found


def _recover(db: str) -> int:
    """What `results list` shows as `interrupted (process gone)`, made so in the file, with
    the cases the dead command's ranks wrote after it died (recovery.py)."""
    store = existing_store(db, append=True)
    ended = recovery.recover(store)
    for run_id in ended:
        row = store.run(run_id)
        print(f"run {run_id}: {names.status(row)}; {row.message}")
    if not ended:
        print(f"{db}: no run of a dead command on this host; nothing to recover")
    return 0


def _listed(row: RunRow) -> dict:
    """`results list --json`: one run's line as an object."""
    return {"run": row.id, "started_utc": row.started_utc,
            "finished_utc": row.finished_utc, "status": names.status(row),
            "kernel": row.kernel, "ranks": row.ranks, "launches": row.n_launches,
            "cases": row.n_cases, "mpi": names.library(row.mpi_version),
            "mpi_version": row.mpi_version, "oversubscribed": row.oversubscribed,
            "sweep": row.sweep_id, "command": row.command,
            "labels": row.settings.get("info") or {}}


def _show(store, run_id: int, wide: bool = False) -> str:
    row = store.run(run_id)
    if row.kernel == stored.KERNEL:  # a program's calls, not a kernel's cases
        p = stored.recorded(store, run_id)
        return render_profile(run_id, p, row.message) if p.rows else \
            stored.no_calls(run_id, row, p)
    named = labels(row.settings.get("info"))
    lines = [f"run {row.id}: {row.kernel} on {names.ranks(row.ranks)}, {names.status(row)}, "
             f"started {row.started_utc}" + (f", labels {named}" if named else "")]
    if row.context:
        lines.append(render_provenance(row.context, row.oversubscribed))
    if row.source:
        lines.append(imported_from(row.source))
    if row.message:
        lines.append(row.message)
    found = summaries(store, [run_id])
    lines.append(render(found, wide))
    return "\n".join(lines + quality(store, [run_id], {run_id: found}))


def _export(store, run_id: int) -> dict:
    """The run, its command and first context, each launch, and each case with its
    launches' raw samples."""
    return {**store.as_stored(run_id),
            "cases": [dict(s.as_dict(), samples_s=[c.samples.tolist() for c in cases],
                           launch_numbers=[c.launch for c in cases])
                      for cases, s in measured(store, [run_id])]}
