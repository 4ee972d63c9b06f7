"""Options and output shared by several verbs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .. import names
from ..advice import fold
from ..errors import UserError
from ..store import Store
from ..summary import case_summary
from ..views.run import rank_times, render, render_phases, render_ranks


def add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default="commscope.db", metavar="PATH",
                   help="results file (SQLite; default ./commscope.db)")


def add_mpi(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mpi", metavar="PREFIX",
                   help="MPI installation prefix (default: COMMSCOPE_MPI, $MPICC, mpicc on "
                        "PATH, then the embedded Open MPI)")


def existing_store(path: str) -> Store:
    """The results file at --db, which must exist: reading verbs never create one."""
    if not Path(path).is_file():
        raise UserError(f"--db {path}: no such results file; run `commscope run` first "
                        "or point --db at one")
    return Store(path)


def print_json(value) -> None:
    print(json.dumps(value, indent=2))


def kernel_list() -> str:
    """The kernels as the native binary of the MPI found describes them, for --help."""
    from ..kernels import catalog  # finding an MPI and building happen only for help
    try:
        known = catalog()
    except (UserError, OSError, RuntimeError) as exc:
        return f"kernels: listed once an MPI is found ({exc})"
    lines = ["kernels (commscope-native --describe):"]
    for k in known.kernels.values():
        modes = f"; modes {', '.join(k.modes)}" if k.modes else ""
        lines.append(f"  {k.name:<15} {k.description} ({k.family}, {k.min_ranks}+ ranks{modes})")
        for p in k.params.values():
            values = "|".join(p.choices) if p.choices else p.kind
            lines.append(f"      --{p.name} {values}: {p.help} (default {p.default or 'none'})")
    return "\n".join(lines)


def show_launch(store, outcome, plan, db: str, as_json: bool, table=None) -> list[dict]:
    """Print one launch's table (unless JSON is wanted later) and its skips; its summaries.

    `table(cases, summaries)`, if given, is the table instead (an app's own view).
    """
    cases = store.cases(outcome.run_id)
    summaries = [case_summary(c) for c in cases]
    if not as_json and summaries:
        lib = names.library((outcome.ingest.context or {}).get("mpi_library_version"))
        print(f"run {outcome.run_id}: {plan.kernel.name} on {plan.ranks} ranks, {lib}, "
              f"results in {db}")
        print(table(cases, summaries) if table else render(summaries))
        per_rank = [rank_times(c, store.rank_samples) for c in cases]
        if per_rank[0] is not None:  # who waits: each rank's own time
            print(render_ranks(cases, per_rank))
        if not table and len(summaries[0].get("phase_median_s", {})) > 1:
            print(render_phases(summaries))
    # Oversubscription is told once per command, by warn_oversubscribed.
    advice = [w for w in store.warnings(outcome.run_id) if w["kind"] != "oversubscribed"]
    for line in fold(advice):
        print(line, file=sys.stderr)
    for skip in outcome.ingest.skips:
        print(f"commscope: skipped {skip['kernel']} {skip.get('send_mode') or ''} "
              f"{skip['bytes']} B: {skip['reason']}", file=sys.stderr)
    if outcome.status != "complete":
        print(f"commscope: run {outcome.run_id} {outcome.message}", file=sys.stderr)
    return summaries


def warn_oversubscribed(outcome, plan, warned: bool) -> bool:
    """Warn once per command about oversubscription; True once warned."""
    if outcome.oversubscribed and not warned:
        print(f"commscope: warning: {plan.ranks} ranks on fewer cores: oversubscribed "
              "(recorded with the run); latencies include time-slicing; run fewer ranks "
              "per host for clean figures", file=sys.stderr)
        return True
    return warned


def exit_code(outcome) -> int:
    return {"complete": 0, "interrupted": 130}.get(outcome.status, 1)
