"""Bad input: one line naming what to fix, exit 2, no traceback, the store untouched."""

import hashlib
import json
import os
import sqlite3

import pytest

from conftest import commscope, one_line_error
from fakempi.inprocess import FakeLauncher


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
    (["run", "allreduce", "--each", "op"], "--each op: write KEY=V1,V2,..."),
    (["run", "allreduce", "--each", "nope=1,2"], "kernel allreduce has no parameter nope"),
    (["run", "allreduce", "--each", "op=sum,bogus"], "op bogus: choose one of sum, max"),
    (["run", "allreduce", "--np", str(len(os.sched_getaffinity(0)) + 1), "--sync", "window"],
     f"--sync window: {len(os.sched_getaffinity(0)) + 1} ranks on a host of "
     f"{len(os.sched_getaffinity(0))} cores would start every sample late"),
])
def test_bad_input_is_one_clear_line(args, says, tmp_path):
    line = one_line_error(commscope(*args, cwd=tmp_path))
    assert says in line
    assert not (tmp_path / "commscope.db").exists()


def test_more_ranks_than_cores_is_refused_with_the_line_that_runs_it(tmp_path):
    """Open MPI's own rule: without --oversubscribe, not more ranks than cores; the fake
    launcher stands ready, and nothing is launched or stored."""
    from fakempi.inprocess import FakeLauncher

    over = len(os.sched_getaffinity(0)) + 1
    env = {k: v for k, v in os.environ.items() if k != "COMMSCOPE_OVERSUBSCRIBE"}
    fake = FakeLauncher()
    line = one_line_error(commscope("run", "allreduce", "--np", over, "--sizes", "8",
                                    env=env, cwd=tmp_path, launcher=fake))
    assert f"--np {over}: more ranks than this host's {over - 1} cores" in line
    assert line.endswith(f"`commscope run allreduce --np {over} --sizes 8 --oversubscribe`")
    assert fake.launched == [] and not (tmp_path / "commscope.db").exists()


def test_profile_s_line_that_runs_it_anyway_keeps_the_flag_before_the_program(fake_mpi,
                                                                              tmp_path):
    """profile's remedy puts --oversubscribe before `--`, so that it is commscope's, not
    the program's (test_remedies.py runs every refusal's remedy)."""
    import shlex
    over = len(os.sched_getaffinity(0)) + 1
    env = {k: v for k, v in os.environ.items() if k != "COMMSCOPE_OVERSUBSCRIBE"}
    app = tmp_path / "my app" / "app"  # paths with spaces, quoted in the line
    app.parent.mkdir()
    app.write_text("#!/bin/sh\n")
    app.chmod(0o755)
    line = one_line_error(commscope("profile", "--np", over, "--mpi", fake_mpi, "--db",
                                    app.parent / "p.db", "--", app, "--x", env=env,
                                    cwd=tmp_path, launcher=FakeLauncher()))
    again = shlex.split(line.split("`")[1])
    assert again[-4:] == ["--oversubscribe", "--", str(app), "--x"], line
    assert str(app.parent / "p.db") in again, line
    done = commscope(*again[1:], env=env, cwd=tmp_path, launcher=FakeLauncher())
    assert "made no MPI call" in one_line_error(done)  # past the refusal, to the program


def test_a_rank_count_advised_fits_the_host(tmp_path):
    """multi_lat pairs ranks: an odd count is refused with the even count next to it that
    this host's cores hold (below, where the one above would oversubscribe)."""
    cores = len(os.sched_getaffinity(0))
    odd = cores if cores % 2 else cores + 1
    env = {k: v for k, v in os.environ.items() if k != "COMMSCOPE_OVERSUBSCRIBE"}
    line = one_line_error(commscope("run", "multi_lat", "--np", odd, env=env, cwd=tmp_path))
    assert line.endswith(f"needs a multiple of 2 ranks (it pairs them); give --np {odd - 1}")


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
    from commscope.store.store import Store
    Store(tmp_path / "r.db").close()
    line = one_line_error(commscope("results", "show", "9", "--db", tmp_path / "r.db"))
    assert "no run 9" in line


@pytest.mark.parametrize("verb", [
    ["check", "--runs", "1", "1", "--junit"],
    ["compare", "1", "1", "--junit"],
    ["health", "--hosts", "a,b", "--junit"],
    ["health", "--hosts", "a,b", "--prom"],
    ["tune", "--verify", "rules.txt", "--junit"],
    ["tune", "allreduce", "-o"],
    ["results", "export", "1", "--csv", "-o"],
    ["report", "1", "-o"],
])
@pytest.mark.parametrize("where", ["a directory", "a missing directory"])
def test_an_output_that_cannot_be_written_is_refused_before_anything_runs(verb, where,
                                                                           tmp_path):
    """Found before measuring, not as a traceback after it: one line, exit 2, the results
    file as it was."""
    data = os.path.join(os.path.dirname(__file__), "data", "imports", "osu-7.2_latency.txt")
    assert commscope("import", data, "--db", tmp_path / "r.db").returncode == 0
    before = hashlib.sha256((tmp_path / "r.db").read_bytes()).hexdigest()
    out = tmp_path / "out" if where == "a directory" else tmp_path / "none" / "out"
    if where == "a directory":
        out.mkdir()
    (tmp_path / "rules.txt").write_text("")  # tune --verify's rules: refused later, if ever
    line = one_line_error(commscope(*verb, out, "--db", tmp_path / "r.db", cwd=tmp_path))
    assert f"{out}: " + ("is a directory" if where == "a directory" else "no such directory") \
        in line
    assert hashlib.sha256((tmp_path / "r.db").read_bytes()).hexdigest() == before


def test_each_measures_every_value_in_the_same_launches(fake_mpi, tmp_path):
    """--each: every case once per value, each value its own case, in each launch."""
    db = tmp_path / "results.db"
    done = commscope("run", "allreduce", "--each", "op=sum,max", "--sizes", "8,1K",
                     "--launches", "2", "--mpi", fake_mpi, "--db", db, "--json",
                     launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr
    cases = json.loads(done.stdout)["cases"]
    assert sorted((c["params"]["op"], c["bytes"]) for c in cases) == [
        ("max", 8), ("max", 1024), ("sum", 8), ("sum", 1024)]
    # both values in each of the 2 launches
    (launches,) = sqlite3.connect(db).execute("SELECT count(DISTINCT launch_id) FROM cases")
    assert launches == (2,)
