"""`commscope import` of the field's profiles: an mpisee SQLite file (built by
tests/data/profiles/make_mpisee.py in mpisee's tables) and an mpiP 3.5 report
(tests/data/profiles/mpip-*.txt, in mpiP's layout) read row for row into commscope's
profile shape, refused in one line when cut or foreign, and stored whole."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import sys
from pathlib import Path

import pytest

from commscope.system.errors import UserError
from commscope.importers import parse
from commscope.profiles import stored
from commscope.store.store import Store
from conftest import commscope, one_line_error

DATA = Path(__file__).parent / "data" / "profiles"
MPIP = DATA / "mpip-3.5-halo-np8.txt"
sys.path.insert(0, str(DATA))
import make_mpisee  # noqa: E402

# (rank, call, comm_size, bytes, count, time_s, bytes_sum) as written into the mpisee file:
# bytes is the bucket of mpisee's range's lower end (1024 for its 1024-8192 range, where
# the Isends were 4 KiB), but for Alltoallv, which mpisee files in 0-128 whatever its size:
# there the bucket of its mean (300000 B -> 262144)
MPISEE_ROWS = sorted(
    [row for r in range(4) for row in [
        (r, "MPI_Init", 4, 0, 1, 0.2, 0),
        (r, "MPI_Allreduce", 4, 0, 100, 0.0125 + r / 1000, 800),
        (r, "MPI_Allreduce", 4, 65536, 10, 0.5, 1310720),
        (r, "MPI_Isend", 4, 1024, 200, 0.002, 819200),
        (r, "MPI_Irecv", 4, 1024, 200, 0.001, 819200),
        (r, "MPI_Waitall", 4, 0, 100, 0.3 + r / 10, 0),
        (r, "MPI_Alltoallv", 4, 262144, 5, 0.05, 1500000)]]
    + [(0, "MPI_Bcast", 2, 8192, 10, 0.010, 163840)]  # two communicators of 2: one row
    + [(r, "MPI_Bcast", 2, 8192, 4, 0.004, 65536) for r in (1, 2, 3)]
    + [(3, "MPI_Send", 4, 33554432, 2, 0.8, 80000000)])

# The mpiP report's ranks: time is Count x Mean (ms); bytes the bucket of the mean sent,
# read as the largest value its 4 printed digits allow (1.638e+04 -> 16384), and bytes_sum
# the Sum as printed; Irecv and Waitall send nothing, so their bytes are unknown (None).
# Bcast's comm size is the collective histogram's bin 0-7 (not the 8 tasks), as 4.
MPIP_ROWS = sorted(
    [row for r in range(8) for row in [
        (r, "MPI_Allreduce", 8, 8, 100, 0.00125, 800),
        (r, "MPI_Allreduce", 8, 65536, 10, 0.05, 655400),
        (r, "MPI_Bcast", 4, 16384, 4, 0.004, 65540),
        (r, "MPI_Irecv", 8, 0, 200, 0.001, None),
        (r, "MPI_Waitall", 8, 0, 100, (3 + 0.5 * r) * 100 / 1e3, None)]]
    + [(0, "MPI_Isend", 8, 4096, 250, 0.003, 1069200)]  # sites 3 and 7 in one bucket
    + [(r, "MPI_Isend", 8, 4096, 200, 0.002, 819200) for r in range(1, 8)])


@pytest.fixture
def mpisee_db(tmp_path) -> Path:
    return make_mpisee.write(tmp_path / "mpisee-4.1-halo-np4.db")


def _rows(profile) -> list[tuple]:
    return sorted((r.rank, r.call, r.comm_size, r.bytes, r.count, r.time_s, r.bytes_sum)
                  for r in profile.rows)


def _same(found: list[tuple], expected: list[tuple]) -> None:
    assert [row[:5] + row[6:] for row in found] == [row[:5] + row[6:] for row in expected]
    assert [row[5] for row in found] == pytest.approx([row[5] for row in expected], rel=1e-12)


def test_mpisee_rows_come_back_as_written(mpisee_db):
    before = hashlib.sha256(mpisee_db.read_bytes()).hexdigest()
    (profile,) = parse(mpisee_db)
    _same(_rows(profile), MPISEE_ROWS)
    assert all(r.peer is None for r in profile.rows)
    assert profile.program == ("./halo", "-n", "64") and profile.ranks == 4
    assert profile.wall_s == (10.5, 10.25, 10.75, 11.0)
    assert profile.source["tool"] == "mpisee" and profile.source["version"] == "4.1"
    assert hashlib.sha256(mpisee_db.read_bytes()).hexdigest() == before  # read-only


def test_mpip_rows_come_back_as_written():
    (profile,) = parse(MPIP)
    _same(_rows(profile), MPIP_ROWS)
    assert profile.program == ("./halo", "-n", "64") and profile.ranks == 8
    assert profile.wall_s == (12.1, 12.2, 12.3, 12.4, 12.5, 12.6, 12.7, 12.8)
    assert profile.source == {"tool": "mpip", "version": "3.5.0", "file": str(MPIP)}


def _cut(path: Path) -> Path:
    path.write_bytes(make_mpisee.write(path).read_bytes()[:3000])
    return path


def _mpisee_with(path: Path, sql: str) -> Path:
    make_mpisee.write(path)
    with sqlite3.connect(path) as db:
        db.execute(sql)
    return path


def _mpip_with(path: Path, change) -> Path:
    path.write_text(change(MPIP.read_text()))
    return path


@pytest.mark.parametrize("make, says", [
    (_cut, "cannot read it as SQLite"),
    (lambda p: _mpisee_with(p, "DROP TABLE data"), "without mpisee's table 'data'"),
    (lambda p: _mpisee_with(p, "DELETE FROM comms WHERE id = 2"),
     "names communicator 2, which comms lacks"),
    (lambda p: _mpisee_with(p, "UPDATE data SET rank = 9 WHERE id = 3"), "rank 9, outside"),
    (lambda p: _mpip_with(p, lambda t: t[:len(t) // 2]), "End of Report"),
    (lambda p: _mpip_with(p, lambda t: re.sub(r"@--- Callsite Time.*?\n\n---", "---", t,
                                              flags=re.S)), "no 'Callsite Time statistics"),
    (lambda p: _mpip_with(p, lambda t: t.replace("Isend                3    5    200",
                                                 "Isend                3    5")), "columns"),
    (lambda p: _mpip_with(p, lambda t: t.replace("   7       12.8", "   9       12.8")),
     "'MPI Time (seconds)' lists 8 tasks for 8 ranks, task 9 where 7 belongs"),
], ids=["mpisee-truncated", "sqlite-not-mpisee", "mpisee-no-comm", "mpisee-bad-rank",
        "mpip-truncated", "mpip-concise", "mpip-cut-line", "mpip-task-missing"])
def test_cut_or_foreign_profiles_are_one_line_naming_the_file(tmp_path, make, says):
    path = make(tmp_path / "given.prof")
    with pytest.raises(UserError) as refused:
        parse(path)
    message = str(refused.value)
    assert message.startswith(str(path)) and says in message and "\n" not in message


def test_round_trip_through_the_store(tmp_path, mpisee_db):
    store = Store(tmp_path / "r.db")
    for (profile,) in (parse(mpisee_db), parse(MPIP)):
        run_id = stored.save_imported(store, ["commscope", "import", "f"], profile)
        back = stored.load(store, run_id)
        assert _rows(back) == _rows(profile)
        assert (back.program, back.ranks, back.wall_s, back.source) == \
            (profile.program, profile.ranks, profile.wall_s, profile.source)


def test_import_prints_and_stores_profiles_in_file_order(tmp_path, mpisee_db):
    db = tmp_path / "i.db"
    osu = Path(__file__).parent / "data" / "imports" / "osu-7.2_latency.txt"
    done = commscope("import", mpisee_db, osu, MPIP, "--db", db)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"run 1: mpisee 4.1 profile of ./halo -n 64, 4 ranks, 9 rows (calls x sizes) "
        f"from {mpisee_db}",
        done.stdout.splitlines()[1],
        f"run 3: mpiP 3.5.0 profile of ./halo -n 64, 8 ranks, 6 rows (calls x sizes) "
        f"from {MPIP}"]
    assert done.stdout.splitlines()[1].startswith("run 2: osu 7.2 osu_latency")
    store = Store(db)
    assert [stored.load(store, i).source["tool"] for i in (1, 3)] == ["mpisee", "mpip"]
    assert store.run(1).command == ["commscope", "import", str(mpisee_db)]

    listed = json.loads(commscope("import", MPIP, osu, "--json", "--db", db).stdout)["runs"]
    assert [(r["run"], r["kind"], r["tool"]) for r in listed] == \
        [(4, "profile", "mpip"), (5, "benchmark", "osu")]
    assert listed[0]["rows"] == 6 and listed[0]["ranks"] == 8


def test_a_sqlite_file_that_is_not_mpisee_stores_nothing(tmp_path):
    db, foreign = tmp_path / "i.db", tmp_path / "mine.db"
    with sqlite3.connect(foreign) as con:
        con.execute("CREATE TABLE mine (x)")
    error = one_line_error(commscope("import", MPIP, foreign, "--db", db))
    assert f"{foreign}: an SQLite file without mpisee's table 'data'; expected an mpisee " \
           "profile" in error
    assert not db.exists() or Store(db).runs() == []


def test_mpip_percentages_printed_as_nan_are_read_as_they_are(tmp_path):
    """mpiP prints a percentage as -nan where it divides by a zero time (report.c); no
    percentage is kept in the profile, so such a report is read, not refused as a figure
    that cannot be a measurement would be (tests/test_import.py)."""
    path = _mpip_with(tmp_path / "given.txt", lambda t: t.replace(
        "0.0125     0.01   0.01   0.35", "0.0125     0.01   -nan   -nan").replace(
        "   0       12.1      0.359     2.97", "   0       12.1      0.359     -nan"))
    assert path.read_text().count("-nan") == 3
    (profile,) = parse(path)
    _same(_rows(profile), MPIP_ROWS)
    assert profile.wall_s[0] == 12.1
