"""Writes a small mpisee profile with known rows: the tables and columns mpisee 4.1 makes
(variemai/mpisee src/create_db.cpp, createTables; operation ids are the positions of
mpisee's `primitives` enum in include/utils.h; ranks are mpisee's 0-based world ranks,
in exectimes and mappings as ids), filled by hand. The expected reading of every row is
in tests/test_profile_import.py.

    python tests/data/profiles/make_mpisee.py OUT.db
"""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing
from pathlib import Path

TABLES = """
CREATE TABLE mappings (id INTEGER PRIMARY KEY AUTOINCREMENT, machine TEXT);
CREATE TABLE exectimes (id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL);
CREATE TABLE metadata (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE operations (id INTEGER PRIMARY KEY AUTOINCREMENT, operation TEXT);
CREATE TABLE comms (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, size INTEGER);
CREATE TABLE data (id INTEGER PRIMARY KEY AUTOINCREMENT, rank INTEGER, comm_id INTEGER,
    operation_id INTEGER, buffer_size_min INTEGER, buffer_size_max INTEGER, calls INTEGER,
    time REAL, volume INTEGER);
"""
RANKS = 4
METADATA = {"MPI Library": "Open MPI v4.1.6", "Processes": str(RANKS),
            "Run command": "./halo -n 64", "mpisee version": "4.1",
            "mpisee build date": "Mar  4 2024, 09:12:44",
            "Profile date": "Tue Mar  5 14:02:23 2024"}
OPERATIONS = {0: "Send", 2: "Isend", 3: "Irecv", 12: "Waitall", 30: "Bcast", 32: "Allreduce",
              36: "Alltoallv", 74: "Init"}
# id: (name, size): the world, a split into two halves, and a duplicate of rank 0's half
COMMS = {1: ("W0.0", 4), 2: ("S1.0", 2), 3: ("S1.1", 2), 4: ("D2.0", 2)}
EXECTIMES = [10.5, 10.25, 10.75, 11.0]
TOP = 2147483647  # mpisee's INT_MAX: the upper end of its last range


def rows() -> list[tuple]:
    """(rank, comm_id, operation_id, buffer_size_min, buffer_size_max, calls, time, volume)"""
    out = []
    for rank in range(RANKS):
        half = 2 if rank < 2 else 3
        out += [
            (rank, 1, 74, 0, 128, 1, 0.2, 0),                                  # Init
            (rank, 1, 32, 0, 128, 100, 0.0125 + rank / 1000, 800),             # 8 B each
            (rank, 1, 32, 65536, 262144, 10, 0.5, 10 * 131072),                # 128 KiB
            (rank, 1, 2, 1024, 8192, 200, 0.002, 200 * 4096),                  # Isend 4 KiB
            (rank, 1, 3, 1024, 8192, 200, 0.001, 200 * 4096),
            (rank, 1, 12, 0, 128, 100, 0.3 + rank / 10, 0),                    # Waitall
            (rank, 1, 36, 0, 128, 5, 0.05, 5 * 300000),                        # unbucketed
            (rank, half, 30, 8192, 65536, 4, 0.004, 4 * 16384),                # Bcast, half
        ]
    out += [(0, 4, 30, 8192, 65536, 6, 0.006, 6 * 16384),                      # its dup
            (3, 1, 0, 33554432, TOP, 2, 0.8, 2 * 40000000)]                    # Send 40 MB
    return out


def write(path: Path) -> Path:
    with closing(sqlite3.connect(path)) as db:
        db.executescript(TABLES)
        db.executemany("INSERT INTO metadata VALUES (?, ?)", METADATA.items())
        db.executemany("INSERT INTO operations VALUES (?, ?)", OPERATIONS.items())
        db.executemany("INSERT INTO comms VALUES (?, ?, ?)",
                       [(i, name, size) for i, (name, size) in COMMS.items()])
        db.executemany("INSERT INTO exectimes VALUES (?, ?)", enumerate(EXECTIMES))
        db.executemany("INSERT INTO mappings VALUES (?, ?)",
                       [(r, f"node0{1 + r // 2}") for r in range(RANKS)])
        db.executemany("INSERT INTO data (rank, comm_id, operation_id, buffer_size_min, "
                       "buffer_size_max, calls, time, volume) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       rows())
        db.commit()
    return path


if __name__ == "__main__":
    write(Path(sys.argv[1]))
