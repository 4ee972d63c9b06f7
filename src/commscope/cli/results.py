"""`commscope results list | show RUN | export RUN --csv|--json`."""

from __future__ import annotations

import argparse
import csv
import json
import sys

from ..summary import case_summary
from ..views.table import library_label, render
from .common import add_db, existing_store, print_json

FIELDS = ("run", "kernel", "send_mode", "bytes", "ranks", "window", "params", "sync", "map_by",
          "bind_to", "transport", "n", "median_s", "ci_low_s", "ci_high_s", "p05_s", "p95_s",
          "mean_s", "stddev_s", "precision", "capped", "outliers", "invalid", "bandwidth_MBps",
          "validated", "case_key")


def add_parser(sub) -> None:
    p = sub.add_parser("results", help="list, show and export stored runs")
    actions = p.add_subparsers(dest="action", required=True, parser_class=type(p))
    add_db(actions.add_parser("list", help="one line per run"))
    show = actions.add_parser("show", help="the summary table of one run")
    show.add_argument("run_id", type=int, metavar="RUN")
    add_db(show)
    export = actions.add_parser("export", help="a run's summaries and raw samples")
    export.add_argument("run_id", type=int, metavar="RUN")
    add_db(export)
    fmt = export.add_mutually_exclusive_group(required=True)
    fmt.add_argument("--csv", action="store_true", help="one summary row per case")
    fmt.add_argument("--json", action="store_true",
                     help="the run, its context and every case with raw samples")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    store = existing_store(args.db)
    if args.action == "list":
        print(f"{'run':>4}  {'started (UTC)':25}  {'status':11}  {'kernel':9}  {'ranks':>5}  "
              f"{'cases':>5}  MPI")
        for r in store.runs():
            note = "  (oversubscribed)" if r["oversubscribed"] else ""
            print(f"{r['id']:>4}  {r['started_utc']:25}  {r['status']:11}  {r['kernel']:9}  "
                  f"{r['ranks']:>5}  {r['n_cases']:>5}  {library_label(r['mpi_version'])}{note}")
        return 0
    run_row = store.run(args.run_id)
    cases = store.cases(args.run_id)
    summaries = [case_summary(c) for c in cases]
    if args.action == "show":
        print(f"run {run_row['id']}: {run_row['kernel']} on {run_row['ranks']} ranks, "
              f"{run_row['status']}, started {run_row['started_utc']}")
        if run_row["context"]:
            print(_provenance(json.loads(run_row["context"]), bool(run_row["oversubscribed"])))
        if run_row["message"]:
            print(run_row["message"])
        print(render(summaries))
    elif args.csv:
        out = csv.DictWriter(sys.stdout, fieldnames=FIELDS, lineterminator="\n",
                             extrasaction="ignore")  # per-phase medians stay in the JSON export
        out.writeheader()
        out.writerows(dict(s, params=json.dumps(s["params"], sort_keys=True)) for s in summaries)
    else:
        print_json({
            "run": {k: run_row[k] for k in run_row.keys() if k not in ("context", "command")},
            "command": json.loads(run_row["command"]),
            "context": json.loads(run_row["context"]) if run_row["context"] else None,
            "cases": [dict(s, samples_s=c.samples.tolist()) for s, c in zip(summaries, cases)],
        })
    return 0


def _provenance(ctx: dict, oversubscribed: bool) -> str:
    placement = ", ".join(f"{p['rank']}@{p['host']}:cpu{p['cpu']}" for p in ctx["placement"])
    t = ctx["timer"]
    return (f"MPI: {library_label(ctx['mpi_library_version'])} (MPI {ctx['mpi_standard']})\n"
            f"ranks: {ctx['ranks']}{' oversubscribed' if oversubscribed else ''}; "
            f"placement: {placement}\n"
            f"timer: {t['name']}, resolution {t['resolution_s']:.3g} s, "
            f"overhead {t['overhead_s']:.3g} s; compiler {ctx['compiler']}")
