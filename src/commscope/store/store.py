"""The results store: one SQLite file, schema-versioned, raw samples kept (but for the
old probes a watch folds to their figures: watch/points.py).

Samples are stored as little-endian float64 blobs (seconds per iteration), one
blob per case for the kernel's samples and one (ranks x n, row-major) for
every rank's own samples. Every write is committed at once, so a crash loses
at most the case in flight. The file's layout and migrations are schema.py's; what
reading it gives, typed rows with their JSON decoded, is rows.py's.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import sqlite3
import time
import weakref
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator, TypeVar
from urllib.parse import quote

import numpy as np

from . import names, rows
from ..system import owner, stopping
from .cases import Case
from .rows import LaunchRow, PairCase, RunRow, SkipRow, SweepRow, WarningRow
from .schema import APPLICATION_ID, SCHEMA_VERSION, migrate
from ..system.errors import UserError, to_run

BUSY_TIMEOUT_S = 60.0  # how long a command waits for another's lock on the results file
LOCK_POLL_S = 0.05  # SQLite's own wait for a lock, between two checks for a stop signal
T = TypeVar("T")

# Record fields kept in columns or blobs; everything else a case record has goes to `extra`.
CASE_COLUMNS = {"type", "kernel", "send_mode", "bytes", "ranks", "window", "batch",
                "warmup_iterations", "validated", "timed_by", "samples_s", "rank_samples_s",
                "phase_samples_s"}


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# A case row with the fields of its run and launch that make it what it is (rows.case). A
# case of an old sweep (its launches were runs) keeps its run's launch number.
CASES = ("SELECT cases.*, runs.settings, runs.ranks AS launched_ranks, runs.oversubscribed, "
         "runs.mpi_version, COALESCE(runs.launch, launches.number) AS launch, "
         "runs.kernel_facts, runs.sweep_id, "
         "json_extract(COALESCE(launches.context, runs.context), '$.hosts') AS hosts "
         "FROM cases JOIN runs ON runs.id = cases.run_id "
         "LEFT JOIN launches ON launches.id = cases.launch_id")

# A run row with how many cases and launches it holds (rows.run).
RUNS = ("SELECT runs.*, (SELECT count(*) FROM cases WHERE run_id = runs.id) AS n_cases, "
        "(SELECT count(*) FROM launches WHERE run_id = runs.id) AS n_launches FROM runs")


def _blob(values) -> bytes:
    return np.asarray(values, dtype="<f8").tobytes()


class Store:
    """A results file. Opening it checks that it is commscope's before anything is written."""

    _open: "weakref.WeakSet[Store]" = weakref.WeakSet()

    def __init__(self, path: str | Path, append: bool = False):
        """`append`: the command will add runs, so the file must be writable and whole
        (PRAGMA quick_check) before anything is measured."""
        self.path = Path(path)
        self._check_location(append)
        try:
            # Other commands may hold the file for a moment (a commit, another's schema
            # creation): wait for them rather than fail.
            # A file nothing can write (read-only media, an archive) is read as immutable:
            # SQLite cannot open a write-ahead-logged file otherwise, lacking its -shm.
            # (A log left beside it holds commits: read-only mode reads it, given its -shm.)
            frozen = not append and self.path.exists() and not self._writable()
            log = Path(f"{self.path}-wal")
            mode = "mode=ro" if log.exists() and log.stat().st_size else "immutable=1"
            target = f"file:{quote(str(self.path.resolve()))}?{mode}" if frozen else self.path
            self.db = sqlite3.connect(target, isolation_level=None, timeout=LOCK_POLL_S,
                                      uri=frozen)
            Store._open.add(self)
            self.db.row_factory = sqlite3.Row
            self._check_or_create()  # before any write: a foreign file stays untouched
            # Write-ahead logging, synced at checkpoints: a commit survives the process
            # dying at once, and a run's hundreds of commits are not each an fsync
            # (half a second of a 2 s bw run here). A power cut may lose the last ones.
            if not frozen:
                self._write_ahead()
                self.db.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as exc:
            if "malformed" in str(exc):
                raise UserError(self._damaged(str(exc))) from None
            raise UserError(f"--db {self.path}: not a commscope results file ({exc}); "
                            "choose another --db path") from None
        if append:
            self._check_whole()

    def _write_ahead(self) -> None:
        """WAL mode (kept in the file: once set, every later open finds it). Switching
        needs the file to itself, and SQLite answers `locked` at once rather than
        waiting while another command reads it: 3 of 200 concurrent starts failed so."""
        self._retrying(lambda: self.db.execute("PRAGMA journal_mode = WAL"))

    def _writable(self) -> bool:
        parent = self.path.parent
        return not os.statvfs(parent).f_flag & os.ST_RDONLY and \
            os.access(self.path, os.W_OK) and os.access(parent, os.W_OK | os.X_OK)

    def _check_location(self, append: bool) -> None:
        if self.path.is_dir():
            raise UserError(f"--db {self.path}: is a directory; give a file path")
        if not self.path.parent.is_dir():
            raise UserError(f"--db {self.path}: directory {self.path.parent} does not exist; "
                            "create it or choose another --db path")
        # SQLite writes its log (-wal, -shm) beside the file: the directory must take them.
        if (append or not self.path.exists()) and \
                os.statvfs(self.path.parent).f_flag & os.ST_RDONLY:
            raise UserError(f"--db {self.path}: {self.path.parent} is on a read-only "
                            "filesystem; choose another --db path")
        if not os.access(self.path.parent, os.W_OK | os.X_OK) and (
                append or not self.path.exists()):
            raise UserError(f"--db {self.path}: directory {self.path.parent} is not writable; "
                            "make it writable or choose another --db path")
        if append and self.path.exists() and not os.access(self.path, os.W_OK):
            raise UserError(f"--db {self.path}: the file is read-only; make it writable or "
                            "choose another --db path")

    def _check_whole(self) -> None:
        """Refuse to add to a damaged file: a run appended to it could be lost with it."""
        try:
            problems = [r[0] for r in self.db.execute("PRAGMA quick_check(3)")]
        except sqlite3.DatabaseError as exc:
            problems = [str(exc)]
        if problems != ["ok"]:
            raise UserError(self._damaged("; ".join(problems)))

    def _damaged(self, problem: str) -> str:
        readable = []
        try:
            for (run_id,) in self.db.execute("SELECT id FROM runs ORDER BY id").fetchall():
                try:
                    self.db.execute("SELECT count(samples), count(rank_samples) FROM cases "
                                    "WHERE run_id = ?", (run_id,)).fetchall()
                    readable.append(run_id)
                except sqlite3.DatabaseError:
                    continue
        except (sqlite3.DatabaseError, AttributeError):
            pass
        saved = (f"run{'s' * (len(readable) > 1)} {names.ranges(readable)} still read whole: "
                 "export with " + to_run("results", "show", names.ranges(readable, ","),
                                         "--json", db=self.path)
                 if readable else "no run in it reads whole")
        return (f"--db {self.path}: the file is damaged ({problem}); {saved}; measure into "
                "another --db path")

    def end_running(self, run_id: int, status: str, message: str) -> None:
        """The run and its launch in flight ended `status`, unless already ended."""
        def body():
            for table, key in (("launches", "run_id"), ("runs", "id")):
                self.db.execute(f"UPDATE {table} SET status = ?, finished_utc = ?, message = ? "
                                f"WHERE {key} = ? AND status = 'running'",
                                (status, utc_now(), message, run_id))
        self._write(body)

    def _write(self, body: Callable[[], T]) -> T:
        """`body()` in one immediate transaction (`_retrying`)."""
        def transaction():
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                return body()
        return self._retrying(transaction)

    def _retrying(self, attempt: Callable[[], T]) -> T:
        """`attempt()`, again while another command holds the file, for up to
        BUSY_TIMEOUT_S. SQLite's own wait is kept short (LOCK_POLL_S) because no signal
        cuts it short; a second stop signal ends the waiting (stopping.py)."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                return attempt()
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() > deadline or stopping.hurry():
                    raise
            time.sleep(LOCK_POLL_S)

    def _check_or_create(self) -> None:
        """Check the file is a store of this schema, creating or migrating it first where
        needed: all under one write lock (BEGIN IMMEDIATE), so commands that open a new
        file at the same moment create it once and the others find it made."""
        version = self._read_pragma("user_version")
        if version == SCHEMA_VERSION:  # the common case, without taking the write lock
            return self._check_application()
        def body():
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            tables = self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            app_id = self.db.execute("PRAGMA application_id").fetchone()[0]
            if app_id == 0 and tables == 0:
                migrate(self.db, 0)  # a store is created whole or not at all
            elif app_id == APPLICATION_ID and 0 < version < SCHEMA_VERSION:
                migrate(self.db, version)
        self._write(body)
        self._check_application()

    def _read_pragma(self, name: str) -> int:
        """A header field, read without the write lock: again while another command
        creating the file holds it, whose commit locks out readers for a moment (2 of 6
        concurrent starts failed so in a CI run under the test suite's load)."""
        return self._retrying(lambda: self.db.execute(f"PRAGMA {name}").fetchone()[0])

    def _check_application(self) -> None:
        app_id = self._read_pragma("application_id")
        version = self._read_pragma("user_version")
        if app_id != APPLICATION_ID:
            raise UserError(f"--db {self.path}: a SQLite file that commscope did not write; "
                            "choose another --db path")
        if version != SCHEMA_VERSION:
            raise UserError(f"--db {self.path}: results schema {version}, this commscope reads "
                            f"schema {SCHEMA_VERSION}; use a matching commscope or another --db")

    def close(self) -> None:
        self.db.close()

    @classmethod
    def close_all(cls) -> None:
        """Close every results file this process opened: a command run in-process leaves
        none open (a process's end closes them anyway). SQLite keeps a closed file open
        while a statement of it lives on (a result only partly iterated): collecting
        the garbage finalizes those."""
        for store in list(cls._open):
            store.close()
        gc.collect()

    # --- writing, each call one committed transaction ---

    def begin_run(self, command: list[str], kernel: str, ranks: int, oversubscribed: bool,
                  settings: dict | None = None, sweep_id: int | None = None,
                  launch: int | None = None, kernel_facts: dict | None = None,
                  host_facts: dict | None = None, started_utc: str | None = None) -> int:
        return self._write(lambda: self.db.execute(
            "INSERT INTO runs (started_utc, status, command, kernel, ranks, oversubscribed, "
            "settings, sweep_id, launch, kernel_facts, host_facts, owner) "
            "VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (started_utc or utc_now(), json.dumps(command), kernel, ranks, int(oversubscribed),
             json.dumps(settings or {}), sweep_id, launch, json.dumps(kernel_facts or {}),
             None if host_facts is None else json.dumps(host_facts),
             json.dumps(owner.me()))).lastrowid)

    def begin_launch(self, run_id: int, number: int, oversubscribed: bool,
                     settings: dict | None = None) -> int:
        def body():
            if oversubscribed:
                self.db.execute("UPDATE runs SET oversubscribed = 1 WHERE id = ?", (run_id,))
            return self.db.execute(
                "INSERT INTO launches (run_id, number, started_utc, status, oversubscribed, "
                "settings) VALUES (?, ?, ?, 'running', ?, ?)",
                (run_id, number, utc_now(), int(oversubscribed),
                 json.dumps(settings or {}))).lastrowid
        return self._write(body)

    def set_context(self, launch_id: int, context: dict) -> None:
        """The launch's context record; the run's too, when it is the run's first."""
        text = json.dumps(context)

        def body():
            self.db.execute("UPDATE launches SET context = ? WHERE id = ?", (text, launch_id))
            self.db.execute("UPDATE runs SET context = ?, mpi_library = ?, mpi_version = ? "
                            "WHERE id = (SELECT run_id FROM launches WHERE id = ?) "
                            "AND context IS NULL",
                            (text, context.get("mpi_library"),
                             context.get("mpi_library_version"), launch_id))
        self._write(body)

    def set_in_flight(self, launch_id: int, case: dict | None) -> None:
        """The case in flight in this launch, and so in its run."""
        text = json.dumps(case) if case else None
        self._write(lambda: self._in_flight(launch_id, text))

    def _in_flight(self, launch_id: int, text: str | None) -> None:
        self.db.execute("UPDATE launches SET in_flight = ? WHERE id = ?", (text, launch_id))
        self.db.execute("UPDATE runs SET in_flight = ? "
                        "WHERE id = (SELECT run_id FROM launches WHERE id = ?)", (text, launch_id))

    def add_case(self, launch_id: int, rec: dict, case_key: str | None = None) -> int:
        """The case, and its launch no longer having it in flight: one transaction."""
        samples = rec["samples_s"]
        extra = {k: v for k, v in rec.items() if k not in CASE_COLUMNS}

        def body():
            self._in_flight(launch_id, None)
            return self._insert_case(launch_id, rec, samples, extra, case_key)
        return self._write(body)

    def _insert_case(self, launch_id: int, rec: dict, samples, extra: dict,
                     case_key: str | None) -> int:
        phases = rec.get("phase_samples_s")
        if phases:
            extra = {**extra, "phase_names": list(phases)}
        cur = self.db.execute(
            "INSERT INTO cases (run_id, launch_id, kernel, send_mode, bytes, ranks, window, "
            "batch, warmup_iterations, validated, timed_by, n, samples, rank_samples, extra, "
            "case_key, phase_samples) VALUES ((SELECT run_id FROM launches WHERE id = ?), ?, "
            "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (launch_id, launch_id, rec["kernel"], rec.get("send_mode"), rec["bytes"],
             rec["ranks"], rec.get("window"), rec["batch"], rec["warmup_iterations"],
             int(rec["validated"]), rec["timed_by"], len(samples), _blob(samples),
             _blob(rec["rank_samples_s"]), json.dumps(extra) if extra else None, case_key,
             _blob(list(phases.values())) if phases else None))
        return cur.lastrowid

    def add_imported(self, runs: list[tuple[dict, list[dict]]]) -> list[int]:
        """Runs read from other tools' output, each (run fields, case records): all of them
        in one transaction, so a failure stores none."""
        return self._write(lambda: [self._insert_imported(run, records)
                                    for run, records in runs])

    def _insert_imported(self, run: dict, records: list[dict]) -> int:
        run_id = self.db.execute(
            "INSERT INTO runs (started_utc, finished_utc, status, command, kernel, "
            "ranks, settings, kernel_facts, mpi_version, source) "
            "VALUES (?, ?, 'complete', ?, ?, ?, ?, ?, ?, ?)",
            (run["started_utc"], utc_now(), json.dumps(run["command"]), run["kernel"],
             run["ranks"], json.dumps(run["settings"]),
             json.dumps({"family": run["family"]}), run.get("mpi_version"),
             json.dumps(run["source"]))).lastrowid
        launch = self.db.execute(
            "INSERT INTO launches (run_id, number, started_utc, finished_utc, status) "
            "VALUES (?, 1, ?, ?, 'complete')",
            (run_id, run["started_utc"], utc_now())).lastrowid
        for rec in records:
            self._insert_case(launch, rec, rec["samples_s"],
                              {k: v for k, v in rec.items() if k not in CASE_COLUMNS}, None)
        return run_id

    def add_profile_rows(self, run_id: int, rows) -> None:
        """A profile's rows (profiles.Row, each of a rank), in one transaction."""
        self._write(lambda: self.db.executemany(
            "INSERT INTO profile_rows (run_id, rank, call, comm_size, bytes, peer, count, "
            "time_s, bytes_sum, overlap_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(run_id, r.rank, r.call, r.comm_size, r.bytes, r.peer, r.count, r.time_s,
              r.bytes_sum, r.overlap_s) for r in rows]))

    def set_mpi_version(self, run_id: int, version_text: str) -> None:
        """A run's MPI_Get_library_version text, where no context record gave it."""
        self._write(lambda: self.db.execute("UPDATE runs SET mpi_version = ? WHERE id = ?",
                                            (version_text, run_id)))

    def profile_rows(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM profile_rows WHERE run_id = ? ORDER BY rank, "
                               "call, comm_size, bytes, peer", (run_id,)).fetchall()

    def add_skip(self, run_id: int, rec: dict) -> None:
        self._write(lambda: self.db.execute(
            "INSERT INTO skips (run_id, kernel, send_mode, bytes, reason) VALUES (?, ?, ?, ?, ?)",
            (run_id, rec["kernel"], rec.get("send_mode"), rec["bytes"], rec["reason"])))

    def add_warnings(self, run_id: int, warnings) -> None:
        """Replaces the run's warnings with these (advice.Advice)."""
        def body():
            self.db.execute("DELETE FROM warnings WHERE run_id = ?", (run_id,))
            self.db.executemany(
                "INSERT INTO warnings (run_id, case_id, kind, message, severity) "
                "VALUES (?, ?, ?, ?, ?)",
                [(run_id, w.case_id, w.kind, w.message, w.severity) for w in warnings])
        self._write(body)

    def finish_launch(self, launch_id: int, status: str, message: str | None = None) -> None:
        def body():
            self.db.execute("UPDATE launches SET status = ?, finished_utc = ?, message = ? "
                            "WHERE id = ?", (status, utc_now(), message, launch_id))
            if status == "complete":
                self._in_flight(launch_id, None)
        self._write(body)

    def note_launch(self, launch_id: int, **values) -> None:
        """Facts learnt of a launch once it ended, into its settings (JSON): its start-up
        cost (launches.py), its round of a screen (preflight.py)."""
        self._note("launches", launch_id, values)

    def note_run(self, run_id: int, **values) -> None:
        """Facts learnt of a run as it went, into its settings (JSON): a screen's nodes and
        faults (preflight.py)."""
        self._note("runs", run_id, values)

    def _note(self, table: str, row_id: int, values: dict) -> None:
        paths = ", ".join("?, json(?)" for _ in values)
        args = [x for key, value in values.items() for x in (f"$.{key}", json.dumps(value))]
        self._write(lambda: self.db.execute(
            f"UPDATE {table} SET settings = json_set(COALESCE(settings, '{{}}'), {paths}) "
            "WHERE id = ?", (*args, row_id)))

    def finish_run(self, run_id: int, status: str, message: str | None = None) -> None:
        def body():
            self.db.execute("UPDATE runs SET status = ?, finished_utc = ?, message = ? "
                            "WHERE id = ?", (status, utc_now(), message, run_id))
            if status == "complete":
                self.db.execute("UPDATE runs SET in_flight = NULL WHERE id = ?", (run_id,))
        self._write(body)

    def replace_runs(self, run_ids: list[int], instead: Callable[[], None]) -> None:
        """Delete runs with everything they hold and do `instead()` (its writes), in one
        transaction: a watch folds an old probe's runs into its figures so
        (watch/points.py), and a crash leaves either the runs or the figures."""
        marks = ",".join("?" * len(run_ids))
        def body():
            instead()
            for table in ("cases", "launches", "skips", "warnings", "profile_rows"):
                self.db.execute(f"DELETE FROM {table} WHERE run_id IN ({marks})", run_ids)
            self.db.execute(f"DELETE FROM runs WHERE id IN ({marks})", run_ids)
        self._write(body)

    # --- reading ---

    def runs(self) -> list[RunRow]:
        return [rows.run(r) for r in self.db.execute(f"{RUNS} ORDER BY id")]

    def running_runs(self) -> list[RunRow]:
        """Runs still `running` that name the process measuring them."""
        return [rows.run(r) for r in self.db.execute(
            f"{RUNS} WHERE status = 'running' AND owner IS NOT NULL ORDER BY id")]

    def running_launches(self, run_id: int) -> list[LaunchRow]:
        return [rows.launch(r) for r in self.db.execute(
            "SELECT * FROM launches WHERE run_id = ? AND status = 'running' ORDER BY number",
            (run_id,))]

    def count_cases(self, run_id: int | None = None, launch_id: int | None = None) -> int:
        column, value = ("launch_id", launch_id) if launch_id is not None else ("run_id", run_id)
        return self.db.execute(f"SELECT count(*) FROM cases WHERE {column} = ?",
                               (value,)).fetchone()[0]

    def launches(self, run_id: int) -> list[LaunchRow]:
        return [rows.launch(r) for r in self._launch_rows(run_id)]

    def _launch_rows(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM launches WHERE run_id = ? ORDER BY number",
                               (run_id,)).fetchall()

    def latest_host_facts(self, count: int = 10) -> list[dict]:
        """The host facts of the latest runs that have them, latest first."""
        return [json.loads(r[0]) for r in self.db.execute(
            "SELECT host_facts FROM runs WHERE host_facts IS NOT NULL ORDER BY id DESC LIMIT ?",
            (count,))]

    def start_ups(self, key: str, count: int = 10) -> list[float]:
        """The start-up costs of the latest launches stored under this key, latest first."""
        return [r[0] for r in self.db.execute(
            "SELECT json_extract(settings, '$.start_up_s') FROM launches "
            "WHERE json_extract(settings, '$.start_up_key') = ? ORDER BY id DESC LIMIT ?",
            (key, count))]

    def run(self, run_id: int) -> RunRow:
        return rows.run(self._run_row(RUNS, run_id))

    def _run_row(self, query: str, run_id: int) -> sqlite3.Row:
        row = self.db.execute(f"{query} WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise UserError(f"no run {run_id} in {self.path}; "
                            f"{to_run('results', 'list', db=self.path)} shows the runs")
        return row

    def as_stored(self, run_id: int) -> dict:
        """The run, its command, first context and launches as `results export --format
        json` writes them (rows.as_stored), and its warnings."""
        return {**rows.as_stored(self._run_row("SELECT * FROM runs", run_id),
                                 self._launch_rows(run_id)),
                "warnings": [dataclasses.asdict(w) for w in self.warnings(run_id)]}

    def cases(self, run_id: int, launch: int | None = None) -> list[Case]:
        """The run's cases, of launch number `launch` alone where given."""
        if launch is None:
            return [rows.case(r) for r in self.db.execute(
                f"{CASES} WHERE cases.run_id = ? ORDER BY cases.id", (run_id,))]
        return [rows.case(r) for r in self.db.execute(
            f"{CASES} WHERE cases.run_id = ? AND COALESCE(runs.launch, launches.number) = ? "
            "ORDER BY cases.id", (run_id, launch))]

    def case_labels(self, run_id: int) -> dict[int, tuple]:
        """id -> (kernel, send mode, bytes, launched ranks, ranks taking part) of each case,
        without its samples: what naming a case needs (a 1024-node health run's blobs are
        450 MB)."""
        return {r[0]: tuple(r[1:]) for r in self.db.execute(
            "SELECT cases.id, cases.kernel, cases.send_mode, cases.bytes, runs.ranks, "
            "cases.ranks FROM cases JOIN runs ON runs.id = cases.run_id "
            "WHERE cases.run_id = ? ORDER BY cases.id", (run_id,))}

    def case_phases(self, run_id: int, sizes: tuple[int, ...],
                    launch: int | None = None) -> Iterator[PairCase]:
        """Each case of these sizes (of launch number `launch` alone, where given) as its
        peers and phase times, and nothing else of it: the health matrices' read, and a
        screen's after each round."""
        only = "" if launch is None else " AND launches.number = ?"
        return rows.pair_cases(self.db.execute(
            "SELECT cases.bytes, cases.window, cases.ranks, cases.n, cases.phase_samples, "
            "json_extract(cases.extra, '$.peers') AS peers, "
            "json_extract(cases.extra, '$.phase_names') AS names, launches.number "
            "FROM cases LEFT JOIN launches ON launches.id = cases.launch_id "
            "WHERE cases.run_id = ? AND cases.bytes IN "
            f"({','.join('?' * len(sizes))}){only}",
            (run_id, *sizes, *([] if launch is None else [launch]))))

    def case_sizes(self, run_id: int) -> list[int]:
        return [r[0] for r in self.db.execute(
            "SELECT DISTINCT bytes FROM cases WHERE run_id = ? ORDER BY bytes", (run_id,))]

    def same_cases(self, kernel: str, send_mode: str | None, nbytes: int,
                   ranks: int, up_to: int | None = None) -> list[Case]:
        """Every stored case of this kernel, send mode, size and ranks (of runs up to run
        `up_to`; a later one, damaged, is never read): the candidates for a case's history
        (cases.identity decides which are the same)."""
        return [rows.case(r) for r in self.db.execute(
            f"{CASES} WHERE cases.kernel = ? AND cases.send_mode IS ? AND cases.bytes = ? "
            "AND cases.ranks = ? AND runs.status = 'complete' AND cases.run_id <= ? "
            # in cases_by_run's order, which reads no row of a later run
            "ORDER BY cases.run_id, cases.id", (kernel, send_mode, nbytes, ranks,
                                  1 << 62 if up_to is None else up_to))]

    # --- sweeps ---

    def add_sweep(self, name: str, plan_path: str, plan_text: str, plan_hash: str) -> int:
        """A new sweep, held by this process (claim_sweep) until release_sweep."""
        return self._write(lambda: self.db.execute(
            "INSERT INTO sweeps (name, plan_path, plan_text, plan_hash, created_utc, owner) "
            "VALUES (?, ?, ?, ?, ?, ?)", (name, plan_path, plan_text, plan_hash, utc_now(),
                                          json.dumps(owner.me()))).lastrowid)

    def claim_sweep(self, sweep_id: int) -> dict | None:
        """Hold the sweep for this process: None, or the owner that still holds it (a
        process that lives, or one on another host, whose life cannot be told)."""
        def body():
            text = self.db.execute("SELECT owner FROM sweeps WHERE id = ?",
                                   (sweep_id,)).fetchone()[0]
            held = json.loads(text) if text else None
            if held and not owner.gone(held) and held != owner.me():
                return held
            self.db.execute("UPDATE sweeps SET owner = ? WHERE id = ?",
                            (json.dumps(owner.me()), sweep_id))
            return None
        return self._write(body)

    def release_sweep(self, sweep_id: int) -> None:
        self._write(lambda: self.db.execute(
            "UPDATE sweeps SET owner = NULL WHERE id = ? AND owner = ?",
            (sweep_id, json.dumps(owner.me()))))

    def last_sweep(self, plan_hash: str) -> int | None:
        row = self.db.execute("SELECT max(id) FROM sweeps WHERE plan_hash = ?",
                              (plan_hash,)).fetchone()
        return row[0]

    def case_keys(self, sweep_id: int) -> set[str]:
        rows = self.db.execute("SELECT case_key FROM cases JOIN runs ON runs.id = cases.run_id "
                               "WHERE runs.sweep_id = ?", (sweep_id,))
        return {r[0] for r in rows}

    def sweep(self, sweep_id: int) -> SweepRow | None:
        """The sweep's name, plan path, plan text and hash, and when it was created."""
        row = self.db.execute("SELECT id, name, plan_path, plan_text, plan_hash, created_utc "
                              "FROM sweeps WHERE id = ?", (sweep_id,)).fetchone()
        return None if row is None else SweepRow(*row)

    def latest_command_runs(self, each_kernel: bool = False) -> list[int]:
        """The latest command's runs: the latest sweep's, or consecutive runs of one command line.

        `commscope run --np 2,4` stores one run per process count with the same
        command line; an identical command repeated right after is pooled with it.
        `each_kernel`: the latest command's runs of every kernel in the file.
        """
        runs = self.runs()
        if not runs:
            raise UserError(f"--db {self.path}: no runs stored; measure one first, e.g. "
                            f"{to_run('run', 'pingpong', db=self.path)}")
        commands: list[list] = []  # latest first: a sweep's runs, or consecutive runs of one
        sweeps = set()             # command line
        for r in reversed(runs):
            if r.sweep_id is not None:
                if r.sweep_id not in sweeps:
                    sweeps.add(r.sweep_id)
                    commands.append([s for s in runs if s.sweep_id == r.sweep_id])
            elif commands and commands[-1][-1].sweep_id is None \
                    and commands[-1][-1].command == r.command:
                commands[-1].append(r)
            else:
                commands.append([r])
        chosen, seen = [], set()
        for command in commands[:None if each_kernel else 1]:
            kernels = {r.kernel for r in command}
            if not kernels <= seen:
                chosen += [r.id for r in command]
                seen |= kernels
        return sorted(chosen)

    def sweep_runs(self, sweep_id: int) -> list[int]:
        return [r[0] for r in self.db.execute("SELECT id FROM runs WHERE sweep_id = ? ORDER BY id",
                                              (sweep_id,))]

    def rank_samples(self, case_id: int) -> np.ndarray:
        row = self.db.execute("SELECT ranks, n, rank_samples FROM cases WHERE id = ?",
                              (case_id,)).fetchone()
        return np.frombuffer(row["rank_samples"], dtype="<f8").reshape(row["ranks"], row["n"])

    def warnings(self, run_id: int) -> list[WarningRow]:
        return [WarningRow(*r) for r in self.db.execute(
            "SELECT case_id, kind, message, severity FROM warnings WHERE run_id = ? "
            "ORDER BY rowid", (run_id,))]

    def skips(self, run_id: int) -> list[SkipRow]:
        return [SkipRow(*r) for r in self.db.execute(
            "SELECT kernel, send_mode, bytes, reason FROM skips WHERE run_id = ?", (run_id,))]
