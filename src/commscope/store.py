"""The results store: one SQLite file, schema-versioned, raw samples kept.

Samples are stored as little-endian float64 blobs (seconds per iteration), one
blob per case for the kernel's samples and one (ranks x n, row-major) for
every rank's own samples. Every write is committed at once, so a crash loses
at most the case in flight.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .errors import UserError

SCHEMA_VERSION = 1
APPLICATION_ID = 0x436F6D53  # "ComS": marks the file as commscope's

SCHEMA = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    started_utc TEXT NOT NULL,
    finished_utc TEXT,
    status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    command TEXT NOT NULL,        -- JSON list: the commscope command line
    kernel TEXT NOT NULL,
    ranks INTEGER NOT NULL,
    oversubscribed INTEGER NOT NULL DEFAULT 0,
    mpi_library TEXT,
    mpi_version TEXT,
    context TEXT,                 -- JSON: the native context record
    in_flight TEXT,               -- JSON: the case being measured when the run stopped
    message TEXT                  -- why the run stopped early
);
CREATE TABLE cases (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    kernel TEXT NOT NULL,
    send_mode TEXT,
    bytes INTEGER NOT NULL,
    ranks INTEGER NOT NULL,
    window INTEGER,
    batch INTEGER NOT NULL,
    warmup_iterations INTEGER NOT NULL,
    validated INTEGER NOT NULL,
    timed_by TEXT NOT NULL,
    n INTEGER NOT NULL,
    samples BLOB NOT NULL,
    rank_samples BLOB NOT NULL
);
CREATE TABLE skips (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    kernel TEXT NOT NULL,
    send_mode TEXT,
    bytes INTEGER NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX cases_by_run ON cases(run_id);
"""


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Case:
    id: int
    run_id: int
    kernel: str
    send_mode: str | None
    bytes: int
    ranks: int
    window: int | None
    batch: int
    warmup_iterations: int
    validated: bool
    timed_by: str
    samples: np.ndarray

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> "Case":
        return cls(row["id"], row["run_id"], row["kernel"], row["send_mode"], row["bytes"],
                   row["ranks"], row["window"], row["batch"], row["warmup_iterations"],
                   bool(row["validated"]), row["timed_by"],
                   np.frombuffer(row["samples"], dtype="<f8"))


def _blob(values) -> bytes:
    return np.asarray(values, dtype="<f8").tobytes()


class Store:
    """A results file. Opening it checks that it is commscope's before anything is written."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._check_location()
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None)
            self.db.row_factory = sqlite3.Row
            self._check_or_create()
        except sqlite3.DatabaseError as exc:
            raise UserError(f"--db {self.path}: not a commscope results file ({exc}); "
                            "choose another --db path") from None

    def _check_location(self) -> None:
        if self.path.is_dir():
            raise UserError(f"--db {self.path}: is a directory; give a file path")
        if not self.path.parent.is_dir():
            raise UserError(f"--db {self.path}: directory {self.path.parent} does not exist; "
                            "create it or choose another --db path")

    def _check_or_create(self) -> None:
        app_id = self.db.execute("PRAGMA application_id").fetchone()[0]
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        tables = self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if app_id == 0 and tables == 0:
            # One transaction: a store is created whole or not at all.
            self.db.executescript(f"BEGIN; {SCHEMA} PRAGMA application_id = {APPLICATION_ID}; "
                                  f"PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
            return
        if app_id != APPLICATION_ID:
            raise UserError(f"--db {self.path}: a SQLite file that commscope did not write; "
                            "choose another --db path")
        if version != SCHEMA_VERSION:
            raise UserError(f"--db {self.path}: results schema {version}, this commscope reads "
                            f"schema {SCHEMA_VERSION}; use a matching commscope or another --db")

    def close(self) -> None:
        self.db.close()

    # --- writing, each call one committed transaction ---

    def begin_run(self, command: list[str], kernel: str, ranks: int, oversubscribed: bool) -> int:
        cur = self.db.execute(
            "INSERT INTO runs (started_utc, status, command, kernel, ranks, oversubscribed) "
            "VALUES (?, 'running', ?, ?, ?, ?)",
            (utc_now(), json.dumps(command), kernel, ranks, int(oversubscribed)))
        return cur.lastrowid

    def set_context(self, run_id: int, context: dict) -> None:
        self.db.execute("UPDATE runs SET context = ?, mpi_library = ?, mpi_version = ? WHERE id = ?",
                        (json.dumps(context), context.get("mpi_library"),
                         context.get("mpi_library_version"), run_id))

    def set_in_flight(self, run_id: int, case: dict | None) -> None:
        self.db.execute("UPDATE runs SET in_flight = ? WHERE id = ?",
                        (json.dumps(case) if case else None, run_id))

    def add_case(self, run_id: int, rec: dict) -> int:
        samples = rec["samples_s"]
        cur = self.db.execute(
            "INSERT INTO cases (run_id, kernel, send_mode, bytes, ranks, window, batch, "
            "warmup_iterations, validated, timed_by, n, samples, rank_samples) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, rec["kernel"], rec.get("send_mode"), rec["bytes"], rec["ranks"],
             rec.get("window"), rec["batch"], rec["warmup_iterations"], int(rec["validated"]),
             rec["timed_by"], len(samples), _blob(samples), _blob(rec["rank_samples_s"])))
        return cur.lastrowid

    def add_skip(self, run_id: int, rec: dict) -> None:
        self.db.execute("INSERT INTO skips (run_id, kernel, send_mode, bytes, reason) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (run_id, rec["kernel"], rec.get("send_mode"), rec["bytes"], rec["reason"]))

    def finish_run(self, run_id: int, status: str, message: str | None = None) -> None:
        self.db.execute("UPDATE runs SET status = ?, finished_utc = ?, message = ? WHERE id = ?",
                        (status, utc_now(), message, run_id))
        if status == "complete":
            self.set_in_flight(run_id, None)

    # --- reading ---

    def runs(self) -> list[sqlite3.Row]:
        return self.db.execute(
            "SELECT runs.*, (SELECT count(*) FROM cases WHERE run_id = runs.id) AS n_cases "
            "FROM runs ORDER BY id").fetchall()

    def run(self, run_id: int) -> sqlite3.Row:
        row = self.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise UserError(f"no run {run_id} in {self.path}; `commscope results list` shows the runs")
        return row

    def cases(self, run_id: int) -> list[Case]:
        rows = self.db.execute("SELECT * FROM cases WHERE run_id = ? ORDER BY id", (run_id,))
        return [Case.from_row(r) for r in rows]

    def rank_samples(self, case_id: int) -> np.ndarray:
        row = self.db.execute("SELECT ranks, n, rank_samples FROM cases WHERE id = ?",
                              (case_id,)).fetchone()
        return np.frombuffer(row["rank_samples"], dtype="<f8").reshape(row["ranks"], row["n"])

    def skips(self, run_id: int) -> list[sqlite3.Row]:
        return self.db.execute("SELECT * FROM skips WHERE run_id = ?", (run_id,)).fetchall()
