"""Process counts, placement and transport: translated per MPI, refused when impossible,
recorded."""

import json
import os
import sqlite3

import pytest

from commscope.system.mpi import find_mpi
from conftest import commscope, one_line_error

pytestmark = pytest.mark.mpi


def contexts(db):
    con = sqlite3.connect(db)
    return [(json.loads(s), json.loads(c)) for s, c in
            con.execute("SELECT settings, context FROM runs ORDER BY id")]


def test_transport_tcp_is_used_and_recorded(mpi_prefix, db):
    medians = {}
    for transport in ("shm", "tcp"):
        done = commscope("run", "pingpong", "--sizes", "8", "--iters", "200", "--transport",
                         transport, "--mpi", mpi_prefix, "--db", db, "--json")
        assert done.returncode == 0, done.stderr
        medians[transport] = json.loads(done.stdout)["cases"][0]["median_s"]
    # Loopback TCP costs tens of microseconds a message, shared memory well under one or two.
    assert medians["tcp"] > 2 * medians["shm"], medians
    (shm_settings, shm_ctx), (tcp_settings, tcp_ctx) = contexts(db)
    assert (shm_settings["transport"], tcp_settings["transport"]) == ("shm", "tcp")
    library = tcp_ctx["library_transport"]
    if tcp_ctx["mpi_library"] == "Open MPI":
        assert library["btl"] == "self,tcp" and shm_ctx["library_transport"]["btl"] == "self,sm"
    else:
        assert library["MPIR_CVAR_NOLOCAL"] == 1
        assert shm_ctx["library_transport"]["MPIR_CVAR_NOLOCAL"] == 0


def test_bind_to_core_gives_each_rank_one_cpu(mpi_prefix, db):
    done = commscope("run", "pingpong", "--sizes", "8", "--iters", "10", "--map-by", "core",
                     "--bind-to", "core", "--mpi", mpi_prefix, "--db", db)
    assert done.returncode == 0, done.stderr
    ((settings, ctx),) = contexts(db)
    assert (settings["map_by"], settings["bind_to"]) == ("core", "core")
    bindings = [p["binding"] for p in ctx["placement"]]
    assert all(b.isdigit() for b in bindings) and len(set(bindings)) == 2
    assert [str(p["cpu"]) for p in ctx["placement"]] == bindings


def test_bind_to_none_leaves_every_cpu(db):
    done = commscope("run", "pingpong", "--sizes", "8", "--iters", "10", "--bind-to", "none",
                     "--db", db)
    assert done.returncode == 0, done.stderr
    ((_, ctx),) = contexts(db)
    cpus = sorted(os.sched_getaffinity(0))
    whole = f"{cpus[0]}-{cpus[-1]}" if len(cpus) > 1 else str(cpus[0])
    assert {p["binding"] for p in ctx["placement"]} == {whole}


def test_process_count_list_runs_each_count(db):
    done = commscope("run", "allreduce", "--np", "2,3", "--sizes", "8", "--iters", "10",
                     "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    assert [c["ranks"] for c in json.loads(done.stdout)["cases"]] == [2, 3]
    assert [ctx["ranks"] for _, ctx in contexts(db)] == [2, 3]


@pytest.mark.parametrize("args, says", [
    (["--map-by", "core", "--bind-to", "socket"], "Open MPI binds within the mapped object"),
    (["--np", str(len(os.sched_getaffinity(0)) + 1), "--bind-to", "core"],
     "cannot each have one of this host's"),
    (["--np", "1:4"], "--np 1: pingpong needs at least 2 ranks"),
    (["--np", "2,x"], "--np: 'x' is not a process count"),
    (["--root", "1"], "parameter root: kernel pingpong takes persistent, dtype, layout"),
])
def test_impossible_requests_fail_before_launching(db, args, says):
    line = one_line_error(commscope("run", "pingpong", "--sizes", "8", *args, "--db", db))
    assert says in line
    assert not db.exists()


def test_mpich_cannot_map_by_node(mpi_prefix, db):
    done = commscope("run", "pingpong", "--sizes", "8", "--iters", "10", "--map-by", "node",
                     "--mpi", mpi_prefix, "--db", db)
    if find_mpi(str(mpi_prefix)).family == "mpich":
        assert "hydra maps by hardware objects only" in one_line_error(done)
    else:
        assert done.returncode == 0, done.stderr


def test_oversubscribed_ranks_wait_politely_and_say_so(mpi_prefix, db):
    # Spinning ranks without a core of their own starve the rank they wait for; each
    # library is asked to yield (Open MPI does so itself) and its own setting is recorded.
    cores = len(os.sched_getaffinity(0))
    for np in (2, cores + 1):
        done = commscope("run", "pingpong", "--np", np, "--sizes", "8", "--iters", "10",
                         "--mpi", mpi_prefix, "--db", db)
        assert done.returncode == 0, done.stderr
    polite = []
    for _, ctx in contexts(db):
        lib = ctx["library_transport"]
        polite.append(lib.get("mpi_yield_when_idle", lib.get("MPIR_CVAR_CH4_PROGRESS_THROTTLE")))
    assert [bool(p) for p in polite] == [cores < 2, True]
