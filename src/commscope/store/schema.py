"""The results file's layout: schema 1, then one migration per later version, and how a
file is brought to the current version."""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 10
APPLICATION_ID = 0x436F6D53  # "ComS": marks the file as commscope's

# Schema 1, then one migration per later version: a new store runs them all,
# an older store the ones it lacks, in one transaction.
SCHEMA_1 = """
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

MIGRATIONS = {
    2: """
ALTER TABLE runs ADD COLUMN settings TEXT;   -- JSON: kernel params, placement, transport, sync
ALTER TABLE runs ADD COLUMN sweep_id INTEGER REFERENCES sweeps(id);
ALTER TABLE runs ADD COLUMN launch INTEGER;  -- 1..K within a sweep's repeated launches
ALTER TABLE cases ADD COLUMN extra TEXT;     -- JSON: the record's kernel-specific fields
ALTER TABLE cases ADD COLUMN case_key TEXT;  -- a sweep case's stable id
CREATE TABLE sweeps (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    plan_path TEXT NOT NULL,
    plan_text TEXT NOT NULL,
    plan_hash TEXT NOT NULL,
    created_utc TEXT NOT NULL
);
CREATE INDEX cases_by_key ON cases(case_key);
""",
    3: """
CREATE TABLE warnings (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    case_id INTEGER REFERENCES cases(id),  -- NULL: about the whole run
    kind TEXT NOT NULL,                    -- cv, short_samples, drift, ... (stats/advice.py)
    message TEXT NOT NULL                  -- what was seen and the remedy
);
CREATE INDEX warnings_by_run ON warnings(run_id);
""",
    4: """
ALTER TABLE runs ADD COLUMN kernel_facts TEXT;  -- JSON: the kernel, described by the native binary
ALTER TABLE runs ADD COLUMN host_facts TEXT;    -- JSON: the launching host, measured with the run
-- Runs stored before schema 4 carry no description; their kernels' families, as they were then.
UPDATE runs SET kernel_facts = '{"family": "' || CASE
    WHEN kernel IN ('pingpong', 'pingping', 'bw', 'bibw') THEN 'point-to-point'
    WHEN kernel = 'rma' THEN 'one-sided'
    WHEN kernel IN ('fanin', 'ring', 'vector_sum') THEN 'many-rank'
    WHEN kernel = 'halo' THEN 'halo'
    WHEN kernel = 'advection2d' THEN 'application'
    ELSE 'collective' END || '"}';
""",
    5: """
CREATE TABLE launches (          -- one mpirun of a run; a run has one or more
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    number INTEGER NOT NULL,     -- 1..K within the run: also the seed of its case order
    started_utc TEXT NOT NULL,
    finished_utc TEXT,
    status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    oversubscribed INTEGER NOT NULL DEFAULT 0,
    settings TEXT,               -- JSON: what this launch was asked for (time per case, ...)
    context TEXT,                -- JSON: its native context record (placement, timer, ...)
    in_flight TEXT,
    message TEXT
);
CREATE INDEX launches_by_run ON launches(run_id);
ALTER TABLE cases ADD COLUMN launch_id INTEGER REFERENCES launches(id);
-- Every run stored before schema 5 was one launch (a sweep's launches were runs).
INSERT INTO launches (id, run_id, number, started_utc, finished_utc, status, oversubscribed,
                      context, in_flight, message)
    SELECT id, id, COALESCE(launch, 1), started_utc, finished_utc, status, oversubscribed,
           context, in_flight, message FROM runs;
UPDATE cases SET launch_id = run_id;
ALTER TABLE warnings ADD COLUMN severity REAL;  -- the kind's own measure: the worst cases first
""",
    6: """
-- JSON: an imported run's tool, version, benchmark, file and the tool's definitions
-- (commscope import); NULL for runs commscope measured.
ALTER TABLE runs ADD COLUMN source TEXT;
""",
    7: """
-- JSON: the process measuring the run, or running or resuming the sweep (owner.py): a
-- running run whose owner is gone was interrupted; a sweep whose owner lives is locked.
ALTER TABLE runs ADD COLUMN owner TEXT;
ALTER TABLE sweeps ADD COLUMN owner TEXT;
""",
    8: """
-- little-endian float64 [phase][rank][sample] of a kernel with phases, the phases in the
-- order extra's phase_names gives; before schema 8 they were JSON in extra (phase_samples_s)
ALTER TABLE cases ADD COLUMN phase_samples BLOB;
""",
    9: """
-- an MPI program's communication per rank (commscope profile, or an mpisee or mpiP file
-- imported; src/commscope/profiles): its run's kernel is 'profile'
CREATE TABLE profile_rows (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    rank INTEGER NOT NULL,
    call TEXT NOT NULL,          -- MPI_Allreduce, MPI_Isend, ...
    comm_size INTEGER NOT NULL,
    bytes INTEGER NOT NULL,      -- the power-of-two bucket
    peer TEXT,                   -- point-to-point: 'local' or 'remote'
    count INTEGER NOT NULL,
    time_s REAL NOT NULL,
    bytes_sum INTEGER,           -- the calls' sizes added up, where the profiler says
    overlap_s REAL               -- nonblocking: the program's time between start and completion
);
CREATE INDEX profile_rows_by_run ON profile_rows(run_id);
""",
    10: """
-- a watch's probe folded (store/watch.py): each case's figure and kept launch medians, in
-- place of its runs, which are deleted; `commscope watch` folds all but its latest probes
-- and those a claim names, so a year of probes costs kilobytes a day, not megabytes
CREATE TABLE watch_points (
    watch TEXT NOT NULL,
    probe INTEGER NOT NULL,
    started_utc TEXT NOT NULL,
    case_text INTEGER NOT NULL REFERENCES watch_texts(id),  -- the case, JSON
    provenance INTEGER REFERENCES watch_texts(id),  -- JSON [mpi, library, hosts]; NULL: none
    median_s REAL,                -- the probe's figure of the case; NULL: not measured
    launches BLOB,                -- its kept launch medians, little-endian float64
    fault TEXT                    -- why the probe measured nothing of it
);
CREATE INDEX watch_points_by_probe ON watch_points(watch, probe);
CREATE TABLE watch_texts (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
""",
}


def migrate(db: sqlite3.Connection, version: int) -> None:
    """Bring a store of schema `version` (0: an empty file) to SCHEMA_VERSION and mark it
    commscope's, inside the caller's transaction: statement by statement, as executescript
    would commit it first."""
    steps = "".join(MIGRATIONS[v] for v in range(max(version, 1) + 1, SCHEMA_VERSION + 1))
    text = (f"{SCHEMA_1 if version == 0 else ''}\n{steps}\n"
            f"PRAGMA application_id = {APPLICATION_ID};\n"
            f"PRAGMA user_version = {SCHEMA_VERSION};\n")
    statement = ""
    for line in text.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""
    if statement.strip():
        db.execute(statement)
