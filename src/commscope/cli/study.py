"""`commscope study NAME -o DIR`: one seed report's experiment, run and written up."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..system import units
from ..system.errors import UserError, to_run
from ..measure.launches import measure_runs
from ..system.mpi import find_mpi
from ..measure.plan import DEFAULT_MAX_TIME, parse_ranks
from . import cluster_study
from .common import add_db, add_mpi, print_json, show_runs, writing_store


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("study", help=summary,
                       description="Run one study (a seed report's experiment, see "
                                   "../shared/seeds) and write its report with the seed's "
                                   "figure first.")
    p.add_argument("name", nargs="?", metavar="NAME", help="the study; --list names them")
    p.add_argument("--list", action="store_true", help="name every study with one line each")
    p.add_argument("--json", action="store_true", help="with --list: JSON (docs/schemas.md)")
    p.add_argument("--np", metavar="LIST", help="process counts (default: the study's own)")
    p.add_argument("-o", "--output", metavar="DIR", help="directory for report.html")
    p.add_argument("--max-time", type=float, metavar="S",
                   help="seconds each run may spend on its launches, as `commscope run "
                        f"--max-time` (default {units.seconds(DEFAULT_MAX_TIME)})")
    p.add_argument("--hosts", metavar="LIST",
                   help="many-rank studies: spread the ranks over these hosts, `a:1,b:1` "
                        "(as `commscope run --hosts`)")
    p.add_argument("--on", choices=("auto", "local", "cluster"), default="auto",
                   help="many-rank studies without --hosts: `cluster` runs them on a "
                        "namespace cluster on this machine, one host per rank, links shaped "
                        f"to {cluster_study.LINK_MBIT} Mbit/s (needs root); `local` on this "
                        "host; `auto` (default): cluster where it can be made")
    add_mpi(p)
    add_db(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    from ..views.studies import studies
    from .report import build

    known = studies()
    if args.list and args.json:
        print_json("studies", {"studies": [{"study": s.name, "seeds": s.seeds,
                                             "summary": s.summary} for s in known.values()]})
        return 0
    if args.list:
        for s in known.values():
            print(f"{s.name:<20} seed {s.seeds:<12} {s.summary}")
        return 0
    if args.name not in known:
        raise UserError(f"study {args.name or '(none)'}: choose one of {', '.join(known)} "
                        f"({to_run('study', '--list')})")
    if not args.output:
        raise UserError("-o DIR: name the directory the study's report goes to")
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise UserError(f"-o {out}: is a file; give a directory")
    study = known[args.name]
    counts = parse_ranks(args.np or study.default_np)
    if args.hosts and not study.across_hosts:
        across = ", ".join(s.name for s in known.values() if s.across_hosts)
        raise UserError(f"--hosts: study {study.name} runs on one host; the many-rank studies "
                        f"take hosts ({across})")
    mpi = find_mpi(args.mpi)
    if study.across_hosts and not args.hosts:
        where = cluster_study.choose(args.on, counts)
        if where is not None:
            return cluster_study.run_on(where, argv)
    hosts = {"hosts": args.hosts} if study.across_hosts else {}
    plans = study.plans(counts, mpi, max_time=args.max_time, **hosts)  # all checked first
    out.mkdir(parents=True, exist_ok=True)
    store = writing_store(args.db)
    runs = measure_runs(store, mpi, plans, ["commscope", *argv])
    _, code = show_runs(store, runs, args.db, as_json=True)  # skips, failures, quality only
    run_ids = [r.run_id for r in runs if r.run_id is not None]
    report = out / "report.html"
    report.write_text(build(store, run_ids, f"study {study.name}",
                            first=(study.section(store, run_ids),)))
    print(f"study {study.name}: runs {', '.join(map(str, run_ids))} in {args.db}; "
          f"report in {report}", file=sys.stderr)
    return code
