"""Options and output shared by several verbs."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import numpy as np

from ..store import names
from ..measure import recovery
from ..views import schemas
from ..system import stopping
from ..stats.advice import KINDS, remedy
from ..system.errors import DEFAULT_DB, UserError, to_run
from ..figures.read import measured, quality, skews
from ..system.sizes import format_bytes
from ..store.schema import APPLICATION_ID, SCHEMA_VERSION
from ..store.store import Store
from ..stats.summary import CaseSummary
from ..stats.verdict import FAIL_ON, exit_status
from ..watch.history import against
from ..views.run import rank_times, render, render_phases, render_ranks
from ..views.skew import render_skews


def add_wide(p) -> None:
    p.add_argument("--wide", action="store_true",
                   help="the table with how each case was measured: launches, samples, the "
                        "interval as a factor, spread, percentiles (docs/statistics.md)")


def add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=DEFAULT_DB, metavar="PATH",
                   help="results file (SQLite; default ./commscope.db)")


def add_mpi(p: argparse.ArgumentParser) -> None:
    """The MPI to launch, and whether launches may oversubscribe this host: every verb
    that launches takes both."""
    p.add_argument("--mpi", metavar="PREFIX",
                   help="MPI installation prefix (default: COMMSCOPE_MPI, $MPICC, mpicc on "
                        "PATH, then the embedded Open MPI)")
    p.add_argument("--oversubscribe", action="store_true",
                   help="run more ranks on this host than it has cores (refused otherwise: "
                        "they time-slice; COMMSCOPE_OVERSUBSCRIBE=1 sets it for every command, "
                        "as on a small CI runner); the runs record it")


def add_fail_on(p: argparse.ArgumentParser) -> None:
    """Beside each --junit: what a gate may fail on besides its failing word."""
    p.add_argument("--fail-on", choices=FAIL_ON, metavar="undetermined",
                   help="write undetermined and inconclusive verdicts as JUnit failures, "
                        "not skipped, and exit 1, not 3, on them (docs/ci.md)")


def add_expect(p: argparse.ArgumentParser) -> None:
    p.add_argument("--expect", metavar="FILE",
                   help="read each case against its level in another results file (a "
                        "fleet's, to judge a new node), on any hosts; default: its earlier "
                        "commands in --db on the same hosts (docs/watch.md)")


@dataclass(frozen=True)
class Expect:
    """Where a command's cases are read against their expected level: `store` (None: the
    results file they are stored in), `fleet` where it is another machine's file."""
    store: Store | None = None
    fleet: bool = False


def expect_from(path: str | None, db: str) -> Expect:
    """--expect FILE, checked before anything is measured and opened read-only: a commscope
    results file of this schema, not --db itself (its own runs would be their own
    expectation); without it, the cases' own results file."""
    if path is None:
        return Expect()
    target = Path(path)
    if not target.is_file():
        raise UserError(f"--expect {path}: no such results file; give the results file of "
                        "the machines to judge against")
    if Path(db).exists() and target.resolve() == Path(db).resolve():
        raise UserError(f"--expect {path}: is the --db file; give another machine's results "
                        "file, or leave --expect out to read the --db history")
    try:  # the header read without writing: Store would create or migrate the file
        with contextlib.closing(sqlite3.connect(f"file:{quote(str(target.resolve()))}?mode=ro",
                                                uri=True)) as con:
            app_id = con.execute("PRAGMA application_id").fetchone()[0]
            version = con.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError:
        app_id = version = None
    if app_id != APPLICATION_ID:
        raise UserError(f"--expect {path}: not a commscope results file; give one that "
                        "commscope run wrote")
    if version != SCHEMA_VERSION:
        raise UserError(f"--expect {path}: results schema {version}, this commscope reads "
                        f"schema {SCHEMA_VERSION}; open it once with a matching commscope")
    return Expect(Store(path), fleet=True)


def existing_store(path: str, append: bool = False) -> Store:
    """The results file at --db, which must exist: reading verbs never create one (nor
    does `results recover`, which writes: `append`)."""
    if Path(path).is_dir():
        raise UserError(f"--db {path}: is a directory; give the results file's path")
    if not Path(path).is_file():
        raise UserError(f"--db {path}: no such results file; measure into it first, e.g. "
                        f"{to_run('run', 'pingpong', db=path)}, or point --db at one")
    return Store(path, append)


def writing_store(path: str) -> Store:
    """The results file at --db for a verb that adds runs: created if new, refused before
    anything is measured if foreign or damaged, and first rid of runs whose command died
    (recovery.py)."""
    store = Store(path, append=True)
    recovery.recover(store)
    return store


def check_output(flag: str, path: str | None) -> None:
    """Refuse, before anything is measured, a file to write that could not be written: a
    directory there, its directory missing, or either not writable."""
    if not path:
        return
    target = Path(path)
    if target.is_dir():
        raise UserError(f"{flag} {path}: is a directory; give a file path")
    if not target.resolve().parent.is_dir():
        raise UserError(f"{flag} {path}: no such directory; create it first")
    if not os.access(target.resolve().parent, os.W_OK) or (
            target.exists() and not os.access(target, os.W_OK)):
        raise UserError(f"{flag} {path}: not writable; choose another path")


def write_atomic(path: str, text: str) -> None:
    """The whole file or the old one: node_exporter may read it at any moment."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    mask = os.umask(0)
    os.umask(mask)
    try:
        os.fchmod(fd, 0o666 & ~mask)  # as open() would make it, not mkstemp's 0600
        with os.fdopen(fd, "w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def json_text(schema: str, body: dict) -> str:
    """`body` with the `schema` field naming its JSON Schema (docs/schemas.md)."""
    return strict_json(schemas.tagged(schema, body))


def strict_json(body) -> str:
    """JSON that a strict parser (a browser's, jq's) reads: a figure that could not be
    worked out (NaN, an infinity) is null, never the bare NaN Python would write."""
    return json.dumps(_finite(body), indent=2, allow_nan=False)


def _finite(value):
    if hasattr(value, "as_dict"):  # a typed result (a case summary, a claim): its JSON item
        value = value.as_dict()
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def print_json(schema: str, body: dict) -> None:
    """A `--json` output."""
    print(json_text(schema, body))


def emit(args, schema: str, body, text, cases=None, junit=None, prom=None) -> int:
    """A verb's one result out, the one writer of every judging verb: its JUnit file
    (`junit(cases, fail_on)`) and Prometheus text (`prom()`) where asked, then its JSON
    (`body()` of `schema`) or its table (`text()`); the exit status from its testcases
    `cases` alone (0 without)."""
    fail_on = getattr(args, "fail_on", None)
    if junit and getattr(args, "junit", None):
        write_atomic(args.junit, junit(cases, fail_on))
    if prom and getattr(args, "prom", None):
        write_atomic(args.prom, prom())
    if args.json:
        print_json(schema, body())
    else:
        print(text())
    return 0 if cases is None else exit_status(cases, fail_on)


def kernel_list() -> str:
    """The kernels as the native binary of the MPI found describes them, for --help."""
    from ..system.kernels import catalog  # finding an MPI and building happen only for help
    try:
        known = catalog()
    except (UserError, OSError, RuntimeError) as exc:
        return f"kernels: listed once an MPI is found ({exc})"
    lines = ["kernels (commscope-native --describe):"]
    for k in known.kernels.values():
        modes = f"; modes {', '.join(k.modes)}" if k.modes else ""
        window = f"; --window {k.default_window}" if k.default_window else ""
        needs = f"; needs {known.features[k.needs].calls}" if k.needs else ""
        lines.append(f"  {k.name:<15} {k.description} ({k.family}, {k.min_ranks}+ "
                     f"ranks{modes}{window}{needs})")
        for p in k.params.values():
            values = "|".join(p.choices) if p.choices else p.kind
            values = "[yes|no]" if p.kind == "switch" else values  # alone: yes
            default = f"default {p.default}" if p.default else "optional"
            default += f"; needs {known.features[p.needs].calls}" if p.needs else ""
            lines.append(f"      --{p.name.replace('_', '-')} {values}: {p.help} ({default})")
    return "\n".join(lines)


def show_runs(store, runs, db: str, as_json: bool, table=None, wide: bool = False,
              expect: Expect | None = None) -> tuple[list[CaseSummary], int]:
    """Every run of a command (show_run), then its quality block, once; the case
    summaries of all of them and the command's exit code."""
    everything, code, of_run = [], 0, {}
    shown = [r for r in runs if r.run_id is not None]
    for run in shown:
        summaries = of_run[run.run_id] = show_run(store, run, db, as_json, table, wide,
                                                  expect)
        everything += summaries
        code = code or exit_code(run) or no_figure(summaries)
    for line in quality(store, [r.run_id for r in shown], of_run):
        print(line, file=sys.stderr)
    return everything, code


def say_oversubscribed(store, run_ids: list[int]) -> None:
    """One line on stderr where ranks outnumbered cores in any of these runs, for the verbs
    that show no quality block (check, tune, health, probe, compare): their verdicts rest
    on latencies that include time-slicing."""
    over = [row for row in map(store.run, run_ids) if row.oversubscribed]
    if over:
        ranks = max(row.ranks for row in over)
        print(f"commscope: oversubscribed (up to {ranks} ranks in run"
              f"{'s' if len(over) > 1 else ''} {', '.join(str(row.id) for row in over)}): "
              f"{KINDS['oversubscribed']}; {remedy('oversubscribed', {})}", file=sys.stderr)


def no_figure(summaries: list[CaseSummary]) -> int:
    """1, with a line each, where a measured case has no figure: every sample started late
    (--sync window), so the statistics have nothing; else 0. A number is never printed."""
    empty = [s for s in summaries if not s.measured]
    for s in empty:
        print(f"commscope: no figure for {s.kernel} {format_bytes(s.bytes)} on "
              f"{s.ranks} ranks: every sample started late under --sync window; use "
              "--sync barrier (the default)", file=sys.stderr)
    return 1 if empty else 0


def show_run(store, run, db: str, as_json: bool, table=None, wide: bool = False,
             expect: Expect | None = None) -> list[CaseSummary]:
    """Print a run's table, its launches combined (unless JSON is wanted later), its
    skips and failures; its case summaries, each against its expected level where
    `expect` is given (watch.history.against).

    `table(measured)`, if given, is the table instead (an app's own view), from
    figures.read.measured's (cases, summary) pairs.
    """
    found = measured(store, [run.run_id])
    if expect is not None:
        found = [(cases, s.against(against(expect.store or store, cases, s, expect.fleet)))
                 for cases, s in found]
    summaries = [s for _, s in found]
    if not as_json and summaries:
        context = next((o.ingest.context for o in run.outcomes if o.ingest.context), None) or {}
        lib = names.library(context.get("mpi_library_version"))
        launches = f", {run.launches} launches" if run.launches > 1 else ""
        print(f"run {run.run_id}: {run.plan.kernel.name} on {names.ranks(run.plan.ranks)}"
              f"{launches}, {lib}, results in {db}")
        print(table(found) if table else render(summaries, wide))
        per_rank = [_rank_times(cases, store.rank_samples) for cases, _ in found]
        if per_rank[0] is not None:  # who waits: each rank's own time
            print(render_ranks([cases[0] for cases, _ in found], per_rank))
        if not table and len(summaries[0].phase_median_s or {}) > 1:
            print(render_phases(summaries))
        late = skews(store, found)
        if late:
            print(render_skews(run.plan.kernel.name, run.plan.ranks, late))
    for outcome in run.outcomes:
        for skip in outcome.ingest.skips:
            print(f"commscope: skipped {skip['kernel']} {skip.get('send_mode') or ''} "
                  f"{skip['bytes']} B: {skip['reason']}", file=sys.stderr)
        if outcome.status != "complete":
            print(f"commscope: run {run.run_id} {outcome.message}", file=sys.stderr)
    if not summaries and run.status == "complete":
        print(f"commscope: run {run.run_id} ({run.plan.kernel.name}) measured no case: "
              "its sizes are none the kernel takes (skipped, above)", file=sys.stderr)
    return summaries


def _rank_times(cases, rank_samples):
    """Each rank's own times over all the case's launches, or None (views.run.rank_times)."""
    parts = [rank_times(c, rank_samples) for c in cases]
    return None if parts[0] is None else np.concatenate(parts, axis=1)


def exit_code(run) -> int:
    return {"complete": 0, "interrupted": stopping.exit_code()}.get(run.status, 1)
