"""`commscope import FILE...`: OSU, IMB and nccl-tests output stored as runs."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from .. import imported
from ..errors import UserError
from ..importers import parse
from ..sizes import format_bytes
from ..store import utc_now
from .common import add_db, print_json, writing_store


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("import", help=summary,
                       description="Read the text output of OSU Micro-Benchmarks (5.x to 7.x), "
                                   "IMB-MPI1 (one run per benchmark block) or nccl-tests (text "
                                   "or -J JSON) and store each as a run of the figures as "
                                   "printed, without raw samples: results, report, fit and "
                                   "compare work on them, and a statistic that needs samples "
                                   "says so (docs/import.md). Every file is read before "
                                   "anything is stored.")
    p.add_argument("files", nargs="+", metavar="FILE", help="a tool's output")
    p.add_argument("--np", type=int, metavar="P",
                   help="the process count, for outputs that do not print it (OSU collectives)")
    p.add_argument("--json", action="store_true",
                   help="print JSON: the runs stored (docs/schemas.md)")
    add_db(p)
    p.set_defaults(func=run)


def _read(path: Path) -> list:
    if not path.is_file():
        raise UserError(f"{path}: no such file; give a file of OSU, IMB or nccl-tests output")
    found = parse(path)
    if not found:
        raise UserError(f"{path}: no benchmark table found; expected OSU, IMB or nccl-tests "
                        "output")
    return found


def run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.np is not None and args.np < 1:
        raise UserError(f"--np {args.np}: give the process count, 1 or more")
    read = [(str(p), r if r.ranks or args.np is None else dataclasses.replace(r, ranks=args.np))
            for p in map(Path, args.files) for r in _read(p)]  # every file, then store
    store = writing_store(args.db)
    started = utc_now()
    ids = store.add_imported([imported.stored(r, path, started) for path, r in read])
    listed = []
    for run_id, (path, r) in zip(ids, read):
        sizes = f"{format_bytes(r.rows[0].bytes)} to {format_bytes(r.rows[-1].bytes)}"
        line = (f"run {run_id}: {r.tool} {r.version} {r.benchmark} as {r.kernel}, "
                f"{r.ranks or '?'} ranks, {len(r.rows)} sizes ({sizes}) from {path}")
        listed.append({"run": run_id, "tool": r.tool, "version": r.version,
                       "benchmark": r.benchmark, "kernel": r.kernel, "ranks": r.ranks,
                       "sizes": len(r.rows), "file": path})
        if not args.json:
            print(line)
    if args.json:
        print_json("imported", {"runs": listed})
    return 0
