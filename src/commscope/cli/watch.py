"""`commscope watch PLAN.toml`: one probe set measured again and again into one results
file, each probe stored as the plan's runs labelled watch=NAME and probe=N (docs/watch.md,
"Running a watch")."""

from __future__ import annotations

import argparse
import math
import re
import sys

from ..watch.history import folding, history
from ..measure.sweep import load
from ..watch.probe import (DEFAULT_BUDGET_S, check_budget, check_same_cases, probes,
                             write_default)
from ..figures.read import measured
from ..watch import points as stored
from ..system.errors import UserError, to_run
from ..system.mpi import find_mpi
from ..views.watch import probe_header, probe_json, render_probe
from .common import add_db, add_mpi, print_json, writing_store

KEEP = 10  # probes kept whole: a step is found within a few, and its remedy compares them
UNITS_S = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|s|m|h)?")


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("watch", help=summary,
                       description="Measure a sweep plan's cases again and again into one "
                                   "results file, a probe at a time (docs/watch.md).")
    p.add_argument("plan", metavar="PLAN.toml", nargs="?",
                   help="a sweep plan (docs/sweeps.md); its name (name = ..., else the "
                        "file's stem) names the watch")
    p.add_argument("--default", metavar="PLAN.toml",
                   help="write the default probe set to this new file and exit: 8 B and "
                        "1 MiB pingpong (pairs over --hosts) and an 8 B allreduce, "
                        "3 launches each")
    p.add_argument("--every", default="10m", metavar="DURATION",
                   help="a probe begins every DURATION (10s, 10m, 1h) on a fixed schedule; "
                        "a slot missed by a probe that overran is skipped (default 10m)")
    p.add_argument("--count", metavar="N",
                   help="measure N probes, then exit (default: until Ctrl-C)")
    p.add_argument("--once", action="store_true",
                   help="one probe, then exit: for cron, a systemd timer or Slurm's scrontab")
    p.add_argument("--budget", default=f"{DEFAULT_BUDGET_S:g}s", metavar="DURATION",
                   help="the most one probe may take: its launches share half of it, a "
                        "case without progress for half of it is hung, and a probe past "
                        "it is stopped and stored as over budget (default "
                        f"{DEFAULT_BUDGET_S:g}s)")
    p.add_argument("--keep", default=str(KEEP), metavar="N|all",
                   help="the latest N probes are kept whole, every sample; older ones are "
                        "folded to each case's figure and launch medians, but for those a "
                        f"step or a flapping launch names (default {KEEP}; all: fold none)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document (docs/schemas.md, watch:1) of the probes "
                        "when the watch ends (at Ctrl-C too) instead of a line per case")
    p.add_argument("--hosts", metavar="HOST,HOST,...",
                   help="where the plan's experiments that name no hosts run; with "
                        "--default, the hosts the default probe set pairs")
    add_mpi(p)
    add_db(p)
    p.set_defaults(func=run)


def parse_duration(text: str, flag: str) -> float:
    """Seconds from 10s, 10m, 1h, 250ms or a bare number of seconds; above 0."""
    m = DURATION.fullmatch(str(text).strip())
    seconds = float(m.group(1)) * UNITS_S[m.group(2) or "s"] if m else math.nan
    if not seconds > 0 or not math.isfinite(seconds):
        raise UserError(f"{flag} {text}: give a duration above 0, such as 10s, 10m or 1h")
    return seconds


def _count(args: argparse.Namespace) -> int | None:
    if args.once and args.count is not None:
        raise UserError("--once is one probe: give --once or --count N, not both")
    if args.once:
        return 1
    if args.count is None:
        return None
    if not str(args.count).isdigit() or int(args.count) < 1:
        raise UserError(f"--count {args.count}: give a whole number of probes, 1 or more")
    return int(args.count)


def _keep(args: argparse.Namespace) -> int | None:
    if args.keep == "all":
        return None
    if not str(args.keep).isdigit() or int(args.keep) < 1:
        raise UserError(f"--keep {args.keep}: give a whole number of probes, 1 or more, or "
                        "all")
    return int(args.keep)


def _hosts(args: argparse.Namespace) -> list[str] | None:
    return [h.strip() for h in args.hosts.split(",") if h.strip()] if args.hosts else None


def run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.default:
        if args.plan:
            raise UserError(f"--default {args.default}: writes a plan and exits; leave out "
                            f"{args.plan}, then watch the file written")
        write_default(args.default, _hosts(args))
        print(f"wrote the default probe set to {args.default}; watch it with "
              f"{to_run('watch', args.default, '--every', '10m', db=args.db)}", file=sys.stderr)
        return 0
    if not args.plan:
        raise UserError("give a plan: commscope watch PLAN.toml; "
                        f"{to_run('watch', '--default', 'watch.toml', db=args.db)} writes the "
                        "default probe set")
    every_s = parse_duration(args.every, "--every")
    budget_s = parse_duration(args.budget, "--budget")
    count = _count(args)
    keep = _keep(args)
    mpi = find_mpi(args.mpi)
    plan = load(args.plan, mpi, hosts=args.hosts)  # every case checked before anything runs
    check_budget(plan, budget_s)
    store = writing_store(args.db)
    check_same_cases(store, plan, plan.name)
    how_many = "once" if count == 1 else \
        f"{f'{count} probes' if count else 'probes until Ctrl-C'} every {args.every}"
    print(f"watch {plan.name}: {plan.cases} cases in {len(plan.points)} runs a probe, "
          f"{how_many}, at most {budget_s:g} s each; results in {args.db}", file=sys.stderr)
    code, done = 0, []
    try:
        for probe in probes(store, mpi, plan, plan.name, budget_s, every_s, count,
                            ["commscope", *argv]):
            for line in probe_header(probe.number, probe.took_s, probe.word, probe.missed,
                                     every_s):
                print(line, file=sys.stderr)
            for run in probe.runs:
                for stopped in (o for o in run.outcomes if o.status != "complete"):
                    print(f"commscope: probe {probe.number}: run {run.run_id} "
                          f"{stopped.message}", file=sys.stderr)
            found = measured(store, [r.run_id for r in probe.runs if r.run_id is not None])
            series = history(store, plan.name)
            done.append(probe_json(probe, [s for _, s in found], series))
            if not args.json:
                print(render_probe(probe.number, [s for _, s in found], series), flush=True)
            code = code or (1 if probe.word else 0)
            if keep is not None:
                for number, run_ids, points in folding(store, plan.name, keep, series):
                    stored.fold(store, plan.name, run_ids, points)
    finally:  # at a stop signal too: the probes measured are one document
        if args.json:
            print_json("watch", {"watch": plan.name, "db": args.db, "probes": done})
    return code
