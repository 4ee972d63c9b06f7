"""`commscope import FILE...`: OSU, IMB and nccl-tests output stored as runs, and mpisee
and mpiP profiles stored as profile runs."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from ..importers import imported
from ..store import names
from ..system.errors import UserError
from ..importers import ImportedRun, parse
from ..profiles import Profile, stored
from ..system.sizes import format_bytes
from ..store.store import Store, utc_now
from .common import add_db, print_json, writing_store


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("import", help=summary,
                       description="Read the text output of OSU Micro-Benchmarks (5.x to 7.x), "
                                   "IMB-MPI1 (one run per benchmark block) or nccl-tests (text "
                                   "or -J JSON) and store each as a run of the figures as "
                                   "printed, without raw samples: results, report, fit and "
                                   "compare work on them, and a statistic that needs samples "
                                   "says so. An mpisee profile (its SQLite file) or an mpiP "
                                   "report is stored as a profile of the program's calls "
                                   "(docs/import.md). Every file is read before anything "
                                   "is stored.")
    p.add_argument("files", nargs="+", metavar="FILE", help="a tool's output")
    p.add_argument("--np", type=int, metavar="P",
                   help="the process count, for outputs that do not print it (OSU collectives)")
    p.add_argument("--json", action="store_true",
                   help="print JSON: the runs stored (docs/schemas.md)")
    add_db(p)
    p.set_defaults(func=run)


def _read(path: Path) -> list:
    if not path.exists():  # a directory, an empty or binary file: parse() says which
        raise UserError(f"{path}: no such file; give a file of OSU, IMB or nccl-tests output, "
                        "or an mpisee or mpiP profile")
    found = parse(path)
    if not found:
        raise UserError(f"{path}: no benchmark table found; expected OSU, IMB or nccl-tests "
                        "output")
    return found


def run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.np is not None and args.np < 1:
        raise UserError(f"--np {args.np}: give the process count, 1 or more")
    read = [(str(p), _read(p)) for p in map(Path, args.files)]  # every file, then store
    store = writing_store(args.db)
    started = utc_now()
    shown = []  # (line, JSON item) a run, in file order: a transaction a file
    for path, found in read:
        shown += [_profile(store, path, found[0])] if isinstance(found[0], Profile) \
            else _benchmarks(store, started, path, found, args.np)
    if args.json:
        print_json("imported", {"runs": [item for _, item in shown]})
    else:
        print("\n".join(line for line, _ in shown))
    return 0


def _benchmarks(store: Store, started: str, path: str, found: list[ImportedRun],
                np: int | None) -> list[tuple[str, dict]]:
    found = [r if r.ranks or np is None else dataclasses.replace(r, ranks=np) for r in found]
    ids = store.add_imported([imported.stored(r, path, started) for r in found])
    shown = []
    for run_id, r in zip(ids, found):
        for warning in filter(None, (r.warning, None if r.ranks else (
                f"{r.tool} prints no process count for {r.benchmark}: its ranks are unknown "
                "(import the file again with --np P)"))):
            print(f"commscope: warning: run {run_id} ({path}): {warning}", file=sys.stderr)
        sizes = f"{format_bytes(r.rows[0].bytes)} to {format_bytes(r.rows[-1].bytes)}"
        shown.append((f"run {run_id}: {r.tool} {r.version} {r.benchmark} as {r.kernel}, "
                      f"{names.ranks(r.ranks)}, {len(r.rows)} sizes ({sizes}) from {path}",
                      {"run": run_id, "kind": "benchmark", "tool": r.tool,
                       "version": r.version, "benchmark": r.benchmark, "kernel": r.kernel,
                       "ranks": r.ranks, "sizes": len(r.rows), "file": path}))
    return shown


# The tools' own spelling, for the line printed (the store keeps the lower-case name).
SPELLED = {"mpip": "mpiP", "mpisee": "mpisee"}


def _profile(store: Store, path: str, profile: Profile) -> tuple[str, dict]:
    run_id = stored.save_imported(store, ["commscope", "import", path], profile)
    tool, version = profile.source["tool"], profile.source.get("version", "")
    keys = len(profile.summed())  # the calls x sizes, over ranks
    return (f"run {run_id}: {SPELLED[tool]} {version} profile of {' '.join(profile.program)}, "
            f"{names.ranks(profile.ranks)}, {keys} rows (calls x sizes) from {path}",
            {"run": run_id, "kind": "profile", "tool": tool, "version": version,
             "program": list(profile.program), "ranks": profile.ranks, "rows": keys,
             "file": path})
