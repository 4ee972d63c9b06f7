"""`commscope results list | show RUNS | export RUNS --csv|--json | recover`."""

from __future__ import annotations

import argparse
import csv
import json
import sys

from .. import names, recovery, selection
from ..results import marks, measured, quality, summaries
from ..views.run import imported_from, render, render_provenance, render_runs
from .common import add_db, existing_store, print_json

FIELDS = ("run", "kernel", "send_mode", "bytes", "ranks", "window", "params", "sync", "map_by",
          "bind_to", "transport", "launches", "n", "median_s", "ci_low_s", "ci_high_s",
          "ci_basis", "within_ci_low_s", "within_ci_high_s", "between_launch_cv",
          "within_launch_cv", "dominant", "between_command_cv", "command_basis", "p05_s", "p95_s", "mean_s", "stddev_s", "precision",
          "capped", "outliers", "invalid", "bandwidth_MBps", "busbw_MBps", "bus_factor",
          "rank_mean_median_s", "ceiling_MBps", "ceiling_fraction", "cache", "validated",
          "case_key")


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("results", help=summary)
    actions = p.add_subparsers(dest="action", required=True, parser_class=type(p))
    listing = actions.add_parser("list", help="one line per run")
    listing.add_argument("--json", action="store_true", help="print a JSON array, one object per run")
    add_db(listing)
    show = actions.add_parser("show", help="the summary table of runs")
    show.add_argument("runs", metavar="RUNS", help=selection.SYNTAX)
    show.add_argument("--json", action="store_true",
                      help="print a JSON array of the runs' case summaries (as run --json)")
    add_db(show)
    export = actions.add_parser("export", help="runs' summaries and raw samples")
    export.add_argument("runs", metavar="RUNS", help=selection.SYNTAX)
    add_db(export)
    fmt = export.add_mutually_exclusive_group(required=True)
    fmt.add_argument("--csv", action="store_true", help="one summary row per case")
    fmt.add_argument("--json", action="store_true",
                     help="each run, its context and every case with raw samples")
    recover = actions.add_parser("recover", help="end the runs whose command died, storing "
                                                  "the cases their ranks finished after")
    add_db(recover)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.action == "recover":
        return _recover(args.db)
    store = existing_store(args.db)
    if args.action == "list":
        if args.json:
            print_json([_listed(row) for row in store.runs()])
        else:
            print(render_runs(store.runs()))
        return 0
    runs = selection.parse(args.runs, store, "RUNS")
    if args.action == "show" and args.json:
        print_json(summaries(store, runs))
    elif args.action == "show":
        print("\n\n".join(_show(store, run_id) for run_id in runs))
    elif args.csv:
        out = csv.DictWriter(sys.stdout, fieldnames=FIELDS, lineterminator="\n",
                             extrasaction="ignore")  # per-phase medians stay in the JSON export
        out.writeheader()
        out.writerows(dict(s, params=json.dumps(s["params"], sort_keys=True))
                      for run_id in runs for s in summaries(store, [run_id]))
    else:
        exported = [_export(store, run_id) for run_id in runs]
        print_json(exported[0] if len(exported) == 1 else exported)
    return 0


def _recover(db: str) -> int:
    """What `results list` shows as `interrupted (process gone)`, made so in the file, with
    the cases the dead command's ranks wrote after it died (recovery.py)."""
    store = existing_store(db, append=True)
    ended = recovery.recover(store)
    for run_id in ended:
        row = store.run(run_id)
        print(f"run {run_id}: {names.status(row)}; {row['message']}")
    if not ended:
        print(f"{db}: no run of a dead command on this host; nothing to recover")
    return 0


def _listed(row) -> dict:
    """`results list --json`: one run's line as an object."""
    return {"run": row["id"], "started_utc": row["started_utc"],
            "finished_utc": row["finished_utc"], "status": names.status(row),
            "kernel": row["kernel"], "ranks": row["ranks"], "launches": row["n_launches"],
            "cases": row["n_cases"], "mpi": names.library(row["mpi_version"]),
            "mpi_version": row["mpi_version"], "oversubscribed": bool(row["oversubscribed"]),
            "sweep": row["sweep_id"], "command": json.loads(row["command"])}


def _show(store, run_id: int) -> str:
    row = store.run(run_id)
    lines = [f"run {row['id']}: {row['kernel']} on {row['ranks']} ranks, {names.status(row)}, "
             f"started {row['started_utc']}"]
    if row["context"]:
        lines.append(render_provenance(json.loads(row["context"]), bool(row["oversubscribed"])))
    if row["source"]:
        lines.append(imported_from(json.loads(row["source"])))
    if row["message"]:
        lines.append(row["message"])
    found = measured(store, [run_id])
    lines.append(render([s for _, s in found], marks(store, run_id, found)))
    return "\n".join(lines + quality(store, [run_id]))


def _export(store, run_id: int) -> dict:
    """The run, its command and first context, each launch, and each case with its
    launches' raw samples."""
    row = store.run(run_id)
    return {"run": {k: row[k] for k in row.keys() if k not in ("context", "command")},
            "command": json.loads(row["command"]),
            "context": json.loads(row["context"]) if row["context"] else None,
            "launches": [{k: (json.loads(launch[k]) if k in ("settings", "context", "in_flight")
                              and launch[k] else launch[k]) for k in launch.keys()}
                         for launch in store.launches(run_id)],
            "warnings": [dict(w) for w in store.warnings(run_id)],
            "cases": [dict(s, samples_s=[c.samples.tolist() for c in cases],
                           launch_numbers=[c.launch for c in cases])
                      for cases, s in measured(store, [run_id])]}
