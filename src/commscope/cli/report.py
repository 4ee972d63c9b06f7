"""`commscope report [RUN...] [--sweep N] -o FILE`: one self-contained HTML page of stored runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..store import selection
from ..system.errors import UserError
from .common import add_db, check_output, existing_store


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("report", help=summary,
                       description="Write one HTML file (figures embedded, no network needed) "
                                   "with latency, bandwidth, fits, distributions, per-rank "
                                   "times, scaling, provenance and warnings; see docs/report.md.")
    p.add_argument("runs", nargs="*", metavar="RUNS",
                   help=f"{selection.SYNTAX} (default: every run in the file)")
    p.add_argument("--sweep", type=int, metavar="N", help="add every run of sweep N")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the HTML file to write")
    add_db(p)
    p.set_defaults(func=run)


def chosen_runs(store, given: list[str], sweep: int | None) -> tuple[list[int], str]:
    """The runs to report and how they were chosen, in words for the page."""
    runs: list[int] = []
    for item in given:
        runs += [r for r in selection.parse(item, store, "RUN") if r not in runs]
    if sweep is not None:
        found = store.sweep_runs(sweep)
        if not found:
            raise UserError(f"--sweep {sweep}: no runs of sweep {sweep} in {store.path}; "
                            "`commscope results list` shows the runs")
        runs += [r for r in found if r not in runs]
    if runs:
        return runs, "as given"
    return [r.id for r in store.runs()], "every run in the file"


def write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"-o {path}: cannot write ({exc.strerror}); choose another path") \
            from None


def run(args: argparse.Namespace, argv: list[str]) -> int:
    output = Path(args.output)
    check_output("-o", args.output)
    store = existing_store(args.db)
    run_ids, how = chosen_runs(store, args.runs, args.sweep)
    from ..views.report import build  # matplotlib: imported only by the verbs that draw

    write(output, build(store, run_ids, how))
    print(f"report of run {', '.join(map(str, run_ids))} written to {output}")
    return 0
