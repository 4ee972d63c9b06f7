"""An mpisee profile (github variemai/mpisee; Vardas, Träff, Laso and Hunold, CCPE 2025)
read into a Profile. mpisee writes one SQLite file at MPI_Finalize; its tables, as its
src/create_db.cpp (createTables) makes them:

    data(id, rank, comm_id, operation_id, buffer_size_min, buffer_size_max, calls, time,
         volume)          one row per rank, communicator, call and size range; volume:
                          the bytes of its calls added up (a Row's bytes_sum)
    comms(id, name, size), operations(id, operation)     (operation: Allreduce, Isend...)
    exectimes(id, time)   each rank's time from MPI_Init's end to MPI_Finalize, in rank order
    metadata(key, value)  "Processes", "Run command", "mpisee version", "MPI Library"...

Times are seconds (sums of MPI_Wtime differences). The file is opened read-only: an
import never writes to it.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from .figures import checked
from ..profiles import Profile, Row, bucket
from .reading import merged, mpi_call, refused

SQLITE_HEADER = b"SQLite format 3\x00"
EXPECTED = "an mpisee profile (SQLite with mpisee's tables data, comms and operations)"
# A figure outside what it can be (figures.py) is a damaged file, not one to edit by hand.
AGAIN = "record the profile again"
NEEDED = {"data": ("rank", "comm_id", "operation_id", "buffer_size_min", "buffer_size_max",
                   "calls", "time"),
          "comms": ("id", "size"), "operations": ("id", "operation")}


def is_sqlite(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(len(SQLITE_HEADER)) == SQLITE_HEADER


def read(path: Path) -> Profile:
    """The profile in mpisee's file `path`; a damaged, truncated or foreign SQLite file is
    one UserError naming it."""
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise refused(path, "the SQLite file is damaged (PRAGMA quick_check fails)",
                              EXPECTED)
            return _profile(path, db)
    except sqlite3.DatabaseError as exc:
        raise refused(path, f"cannot read it as SQLite ({exc}; truncated?)", EXPECTED) from None


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def _profile(path: Path, db: sqlite3.Connection) -> Profile:
    columns = {t: _columns(db, t) for t in (*NEEDED, "metadata", "exectimes")}
    if not columns["data"]:
        raise refused(path, "an SQLite file without mpisee's table 'data'", EXPECTED)
    missing = [f"{t}.{c}" for t, need in NEEDED.items() for c in need if c not in columns[t]]
    if missing:
        raise refused(path, f"mpisee's tables lack {', '.join(missing)}", EXPECTED)
    meta = dict(db.execute("SELECT key, value FROM metadata")) if columns["metadata"] else {}
    wall = tuple(checked(f"{path}: exectimes row {i}", "time", t, "time", AGAIN)
                 for i, t in db.execute("SELECT id, time FROM exectimes ORDER BY id")) \
        if columns["exectimes"] else ()
    volume = "d.volume" if "volume" in columns["data"] else "NULL"
    found = db.execute(
        "SELECT d.id, d.rank, d.comm_id, c.size, d.operation_id, o.operation, "
        f"d.buffer_size_min, d.buffer_size_max, d.calls, d.time, {volume} FROM data d "
        "LEFT JOIN comms c ON c.id = d.comm_id LEFT JOIN operations o ON o.id = d.operation_id "
        "ORDER BY d.id").fetchall()
    if not found:
        raise refused(path, "mpisee's table data has no rows (no MPI call was recorded)",
                      EXPECTED)
    try:
        ranks = int(meta.get("Processes") or len(wall) or 1 + max(int(r[1]) for r in found))
        rows = [_row(path, ranks, *r) for r in found]
    except (TypeError, ValueError) as exc:
        raise refused(path, f"a value that is not a number in mpisee's tables ({exc})",
                      EXPECTED) from None
    if wall and len(wall) != ranks:
        raise refused(path, f"exectimes holds {len(wall)} times for {ranks} processes",
                      EXPECTED)
    return Profile(tuple(meta.get("Run command", "").split()) or (str(path),), ranks, wall,
                   merged(rows), {"tool": "mpisee", "version": meta.get("mpisee version", ""),
                                  "file": str(path), "mpi_library": meta.get("MPI Library", "")})


def _row(path: Path, ranks: int, row_id, rank, comm_id, comm_size, op_id, operation, low,
         high, calls, time, volume) -> Row:
    if comm_size is None:
        raise refused(path, f"data row {row_id} names communicator {comm_id}, which comms "
                            "lacks", EXPECTED)
    if operation is None:
        raise refused(path, f"data row {row_id} names operation {op_id}, which operations "
                            "lacks", EXPECTED)
    where = f"{path}: data row {row_id}"
    rank, comm_size, low, high, calls = (
        int(checked(where, name, value, "whole", AGAIN)) for name, value in
        (("rank", rank), ("comms.size", comm_size), ("buffer_size_min", low),
         ("buffer_size_max", high), ("calls", calls)))
    if not rank < ranks:
        raise refused(path, f"data row {row_id} is of rank {rank}, outside the {ranks} "
                            "processes", EXPECTED)
    time = checked(where, "time", time, "time spent", AGAIN)
    if volume is not None:
        volume = int(checked(where, "volume", volume, "whole", AGAIN))
    return Row(mpi_call(str(operation)), comm_size, _bytes(low, high, calls, volume), None,
               calls, time, rank, volume)


def _bytes(low: int, high: int, calls: int, volume) -> int:
    """mpisee files each call in a size range whose bounds are its build's BUCKETS
    (default 128, 1024, 8192, 65536, 262144, 1048576, 33554432: Readme.org, "Advanced
    Build"), written as buffer_size_min to buffer_size_max; the row's size is the bucket
    of the range's lower bound. The vector collectives (Alltoallv, Allgatherv...) and
    Reduce_scatter it files in the first range whatever their size (commprof.cpp,
    profile_this with v=1), while counting their bytes in `volume`: where the mean bytes
    of a call lie above its range, the bucket of that mean is the size."""
    if volume is not None and calls > 0 and int(volume) // calls >= high:
        return bucket(int(volume) // calls)
    return bucket(low)
