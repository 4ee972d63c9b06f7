"""`commscope profile` on the patterns of real applications (tests/data/profile/patterns.c),
on both MPIs: an Irecv/Send/Wait exchange, Waitall, Waitany and Testsome loops,
persistent requests, a derived datatype, a Cartesian communicator from a split, and
Sendrecv_replace, each counted exactly and priced as what it is; a rank that aborts in
its first second, and a program that exits non-zero after MPI_Finalize, stored as failed
with the program's status and what the ranks recorded."""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import commscope
from test_profile import compiled

K = 10  # each pattern's repetitions a rank


@pytest.fixture
def patterns(mpi_prefix, tmp_path) -> str:
    return compiled(mpi_prefix, tmp_path, "patterns")


def profiled(mpi_prefix, db, *program) -> tuple[int, dict]:
    done = commscope("profile", "--np", 2, "--mpi", mpi_prefix, "--db", db, "--json", "--",
                     *program)
    return done.returncode, json.loads(done.stdout)


def test_each_pattern_is_counted_exactly_and_priced_as_what_it_is(mpi_prefix, patterns,
                                                                   tmp_path):
    """Every message in the row of the call that sent or received it, with its size (the
    vector type's 512 bytes, not its extent), peer and communicator; no wait keeps a row
    of its own but an unfinished poll; polling is not the program's work; the exchange is
    one ping-ping with its sends priced with it, and so is the persistent one."""
    db = tmp_path / "p.db"
    status, out = profiled(mpi_prefix, db, patterns, "calls", K)
    assert status == 0 and out["status"] == "complete"
    rows = {(r["call"], r["bytes"]): r for r in out["rows"]}
    want = {("MPI_Irecv", 8192): K, ("MPI_Send", 8192): K,
            ("MPI_Irecv", 1024): 2 * K, ("MPI_Isend", 1024): 2 * K,
            ("MPI_Irecv", 2048): 2 * K, ("MPI_Isend", 2048): 2 * K,
            ("MPI_Irecv", 65536): K, ("MPI_Isend", 65536): K,
            ("MPI_Recv_init", 512): K, ("MPI_Send_init", 512): K,
            ("MPI_Sendrecv", 512): K, ("MPI_Sendrecv_replace", 2048): K}
    for key, count in want.items():
        r = rows.pop(key)
        assert r["per_rank"]["count"] == [count, count], key
        assert (r["comm_size"], r["peer"], r["mean_bytes"]) == (2, "local", key[1]), key
    # what is left: the polls that completed nothing
    assert [key for key in rows] in ([], [("MPI_Testsome", 0)])
    polled = [rows.get(("MPI_Testsome", 0), {"time_s": 0})["time_s"]] + [
        r["time_s"] for r in out["rows"] if r["bytes"] == 65536]
    (irecv,) = [r for r in out["rows"] if r["call"] == "MPI_Irecv" and r["bytes"] == 65536]
    assert irecv["overlap_s"] < 0.5 * sum(polled)

    # nothing is measured in this results file: the rows say what would price them, each
    # exchange (its sends too) and Sendrecv one ping-ping
    done = commscope("predict", "--profile", out["run"], "--db", db)
    assert done.returncode == 2
    assert (f"`commscope run pingping --np 2 --sizes 512,1024,2048,8192,65536 --db {db}`"
            in done.stderr)  # into the results file it prices from
    assert "pingpong" not in done.stderr


def test_a_known_exchange_is_priced_as_one_ping_ping(mpi_prefix, patterns, tmp_path):
    """Measured: the exchange's receive at ping-ping's figure, its blocking sends with it,
    and the receive's efficiency over both rows' time."""
    db = tmp_path / "p.db"
    done = commscope("profile", "--np", 2, "--mpi", mpi_prefix, "--db", db, "--json",
                     "--measure", "--", patterns, "exchange", 200, 8192)
    assert done.returncode == 0, done.stderr
    priced = json.loads(commscope("predict", "--profile", 1, "--db", db, "--json").stdout)
    rows = {r["call"]: r for r in priced["rows"]}
    assert rows["MPI_Send"]["source"] == "with MPI_Irecv" and rows["MPI_Send"]["predicted_s"] == 0
    irecv = rows["MPI_Irecv"]
    assert irecv["source"] == "measured" and irecv["evidence"].startswith("run ")
    (kernel,) = sqlite3.connect(db).execute("SELECT kernel FROM runs WHERE id = ?", (
        int(irecv["evidence"].split()[1]),)).fetchone()
    assert kernel == "pingping"
    spent = irecv["profiled_s"] + rows["MPI_Send"]["profiled_s"]
    assert irecv["efficiency"] == pytest.approx(irecv["predicted_s"] / spent)


@pytest.mark.parametrize("calls", [K, 0])
def test_a_rank_that_aborts_in_its_first_second_keeps_its_table(mpi_prefix, patterns,
                                                                tmp_path, calls):
    """The last rank calls MPI_Abort(7) before the first flush, after some calls or none
    (a mini-app refusing its rank count): commscope exits 7, the run is stored as failed,
    and the aborting rank's calls are kept (written at MPI_Abort). Open MPI's launcher
    stops the others with SIGTERM, which writes theirs too; MPICH's with SIGKILL, which
    no program can catch, and the message says they recorded nothing."""
    db = tmp_path / "p.db"
    status, out = profiled(mpi_prefix, db, patterns, "abort", calls)
    assert status == 7 and out["status"] == "failed"
    assert "exited with status 7" in out["message"]
    wrote = "ranks 0 recorded nothing" not in out["message"]
    assert wrote or mpi_prefix.name == ".mpich", "Open MPI's SIGTERM: the handler writes"
    want = [calls if wrote else 0, calls] if calls else None
    allreduce = [r["per_rank"]["count"] for r in out["rows"] if r["call"] == "MPI_Allreduce"]
    assert allreduce == ([want] if want else [])
    shown = commscope("profile", "--np", 2, "--mpi", mpi_prefix, "--db", db, "--", patterns,
                      "abort", calls)
    assert shown.returncode == 7 and "Traceback" not in shown.stderr
    assert ("no MPI call recorded" in shown.stdout) == (calls == 0)


def test_an_exit_after_finalize_is_failed_with_every_call(mpi_prefix, patterns, tmp_path):
    status, out = profiled(mpi_prefix, tmp_path / "p.db", patterns, "exit", K)
    assert status == 5 and out["status"] == "failed"
    assert out["message"] == "the program exited with status 5"
    (allreduce,) = [r for r in out["rows"] if r["call"] == "MPI_Allreduce"]
    assert allreduce["per_rank"]["count"] == [K, K]
