"""Bad input: one line naming what to fix, exit 2, no traceback, the store untouched."""

import hashlib
import os
import sqlite3

import pytest

from conftest import commscope, one_line_error


@pytest.mark.parametrize("args, says", [
    (["run", "pong"], "unknown kernel 'pong'; choose one of: pingpong"),
    (["run", "pingpong", "--modes", "eager"], "unknown send mode 'eager'"),
    (["run", "bw", "--modes", "ready"], "kernel bw has no send modes"),
    (["run", "pingpong", "--sizes", "4QB"], "--sizes: '4QB' is not a size"),
    (["run", "pingpong", "--sizes", "64K:1K"], "--sizes"),
    (["run", "pingpong", "--sizes", "1TiB"], "need 2048.0 GiB per rank for pingpong"),
    (["run", "pingpong", "--np", "1"], "--np 1: pingpong needs at least 2 ranks"),
    (["run", "multi_lat", "--np", "3"],
     "--np 3: multi_lat needs a multiple of 2 ranks (it pairs them); give --np 4"),
    (["run", "pingpong", "--np", "two"], "--np: 'two' is not a process count"),
    (["run", "bw", "--window", "0"], "--window 0"),
    (["run", "pingpong", "--mpi", "/nonexistent/mpi"], "--mpi /nonexistent/mpi: no bin/mpicc"),
    (["results", "show", "1", "--db", "/nonexistent/dir/r.db"], "no such results file"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["run", "allreduce", "--np", str(len(os.sched_getaffinity(0)) + 1), "--sync", "window"],
     f"--sync window: {len(os.sched_getaffinity(0)) + 1} ranks on a host of "
     f"{len(os.sched_getaffinity(0))} cores would start every sample late"),
])
def test_bad_input_is_one_clear_line(args, says, tmp_path):
    line = one_line_error(commscope(*args, cwd=tmp_path))
    assert says in line
    assert not (tmp_path / "commscope.db").exists()


def test_bad_mpi_prefix_names_the_flag(tmp_path):
    (tmp_path / "bin").mkdir()
    line = one_line_error(commscope("info", "--mpi", tmp_path))
    assert f"--mpi {tmp_path}: no bin/mpicc there" in line


def test_foreign_db_is_refused_and_kept(tmp_path):
    path = tmp_path / "mine.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE mine (x)")
    con.execute("INSERT INTO mine VALUES (42)")
    con.commit()
    con.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    line = one_line_error(commscope("run", "pingpong", "--sizes", "8", "--db", path))
    assert "--db" in line and "choose another --db path" in line
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_db_in_missing_directory(tmp_path):
    line = one_line_error(commscope("run", "pingpong", "--db", tmp_path / "no" / "r.db"))
    assert "does not exist" in line


def test_unknown_run_in_existing_store(tmp_path):
    from commscope.store import Store
    Store(tmp_path / "r.db").close()
    line = one_line_error(commscope("results", "show", "9", "--db", tmp_path / "r.db"))
    assert "no run 9" in line
