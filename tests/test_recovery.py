"""A run whose command died: reading verbs show it and change nothing; a writing verb or
`results recover` ends it with the cases its ranks wrote after the command died."""

import json
import os
import signal
import sqlite3

import pytest

from commscope.system import stopping
from conftest import commscope
from fakempi.inprocess import FakeLauncher

DEAD = {"host": None, "pid": 1, "start": -1, "boot": None}  # no process starts at tick -1


def dump(db) -> dict:
    """Every row of every table."""
    con = sqlite3.connect(db)
    tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    rows = {t: con.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in tables}
    con.close()
    return rows


def dead_run(fake_mpi, db, tmp_path):
    """Two finished runs, then a third whose command "died" after two cases, with a third
    case its ranks wrote to the records file afterwards."""
    from commscope.system import owner

    tmp_path.mkdir()
    for _ in range(2):
        done = commscope("run", "pingpong", "--sizes", "8,1K,64K", "--iters", "5", "--launches",
                         "1", "--mpi", fake_mpi, "--db", db, launcher=FakeLauncher())
        assert done.returncode == 0, done.stderr
    done = commscope("run", "pingpong", "--sizes", "8,1K,64K", "--iters", "5", "--launches", "1",
                     "--mpi", fake_mpi, "--db", db, launcher=FakeLauncher(),
                     env={**os.environ, "COMMSCOPE_KEEP_TMP": "1",
                          "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    (records,) = tmp_path.glob("commscope-*/records.jsonl")
    con = sqlite3.connect(db)
    last = con.execute("SELECT max(id) FROM cases").fetchone()[0]
    con.execute("DELETE FROM cases WHERE id = ?", (last,))  # written after the death
    con.execute("UPDATE runs SET status = 'running', finished_utc = NULL, owner = ? "
                "WHERE id = 3", (json.dumps({**DEAD, "host": owner.me()["host"],
                                             "boot": owner.me()["boot"]}),))
    con.execute("UPDATE launches SET status = 'running', finished_utc = NULL WHERE run_id = 3")
    con.commit()
    con.close()
    return records


def test_reading_verbs_show_a_dead_run_and_change_no_row(fake_mpi, db, tmp_path):
    dead_run(fake_mpi, db, tmp_path / "tmp")
    before = dump(db)
    listed = commscope("results", "list", "--json", "--db", db)
    assert [r["status"] for r in json.loads(listed.stdout)["runs"]] == [
        "complete", "complete", "interrupted (process gone)"]
    for args in (["results", "show", "1-3"], ["results", "export", "3", "--json"],
                 ["report", "-o", tmp_path / "r.html"], ["compare", "1", "2"],
                 ["fit", "1-3"]):
        done = commscope(*args, "--db", db)
        assert done.returncode in (0, 1, 3), (args, done.stderr)
        assert dump(db) == before, args


def test_results_recover_adopts_the_orphan_and_ends_the_run(fake_mpi, db, tmp_path):
    dead_run(fake_mpi, db, tmp_path / "tmp")
    done = commscope("results", "recover", "--db", db)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("run 3: interrupted (process gone); process gone: its "
                                  "command (pid 1 on ")
    assert "3 finished cases kept" in done.stdout  # the two stored, and the orphan
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM cases WHERE run_id = 3").fetchone() == (3,)
    assert con.execute("SELECT status FROM launches WHERE run_id = 3").fetchone() == (
        "interrupted",)
    again = commscope("results", "recover", "--db", db)
    assert "nothing to recover" in again.stdout


def test_a_writing_verb_recovers_before_it_measures(fake_mpi, db, tmp_path):
    dead_run(fake_mpi, db, tmp_path / "tmp")
    done = commscope("run", "pingpong", "--sizes", "8", "--iters", "5", "--launches", "1",
                     "--mpi", fake_mpi, "--db", db, launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT status FROM runs WHERE id = 3").fetchone() == ("interrupted",)
    assert con.execute("SELECT count(*) FROM cases WHERE run_id = 3").fetchone() == (3,)


def signal_after(cases: int, signum=signal.SIGINT, again: int = 0):
    """The fake's on_case: this process gets `signum` once `cases` cases are written, and
    `again` more times at once (the handler runs in the main thread, where the command
    runs in-process)."""
    def on_case(count):
        if count == cases:
            for _ in range(1 + again):
                os.kill(os.getpid(), signum)
    return on_case


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_ends_the_launch_at_a_safe_point(fake_mpi, db, signum):
    """The handler only records the signal; the follow loop ends the launch, keeps the
    finished cases and names the one in flight."""
    fake = FakeLauncher(case_s=0.2, on_case=signal_after(3, signum))
    done = commscope("run", "pingpong", "--sizes", "0:1MiB", "--iters", "5", "--mpi",
                     fake_mpi, "--db", db, launcher=fake)
    name = signal.Signals(signum).name
    assert done.returncode == 128 + signum, done.stderr
    assert f"interrupted by {name}: 3 finished cases kept; pingpong standard 4 B was in " \
           "flight" in done.stderr
    status, message = sqlite3.connect(db).execute("SELECT status, message FROM runs").fetchone()
    assert status == "interrupted" and f"by {name}" in message
    assert signal.getsignal(signum) is not stopping._handler  # restored after the command


def test_a_signal_between_launches_ends_the_run_before_the_next(fake_mpi, db):
    """A signal after the first launch's last case: that launch ends whole or interrupted,
    and no launch starts after it."""
    fake = FakeLauncher(on_case=signal_after(1))
    done = commscope("run", "pingpong", "--sizes", "8", "--iters", "5", "--launches", "5",
                     "--mpi", fake_mpi, "--db", db, launcher=fake)
    assert done.returncode == 130, done.stderr
    assert len(fake.launched) == 1
    assert sqlite3.connect(db).execute("SELECT status FROM runs").fetchone() == ("interrupted",)
