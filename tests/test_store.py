"""The results store: round trip, schema marks, and refusing files that are not ours."""

import multiprocessing
import hashlib
import os
import sqlite3

import numpy as np
import pytest

from commscope.system.errors import UserError
from commscope.store.schema import APPLICATION_ID, SCHEMA_VERSION
from commscope.store.store import Store


def _record(samples, ranks=2):
    return {"kernel": "pingpong", "send_mode": "ready", "bytes": 1 << 31, "ranks": ranks,
            "window": None, "batch": 3, "warmup_iterations": 17, "validated": True,
            "timed_by": "origin", "samples_s": samples,
            "rank_samples_s": [samples, [s * 0.5 for s in samples]]}


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_round_trip_keeps_raw_samples_exactly(db):
    samples = [1.25e-6, 3.0e-7, 9.87654321e-5, 1e-9]
    store = Store(db)
    run = store.begin_run(["commscope", "run", "pingpong"], "pingpong", 2, False)
    launch = store.begin_launch(run, 1, False)
    store.set_context(launch, {"mpi_library": "MPICH", "mpi_library_version": "MPICH Version: 5"})
    case_id = store.add_case(launch, _record(samples))
    store.finish_run(run, "complete")
    store.close()

    again = Store(db)
    (case,) = again.cases(run)
    assert case.id == case_id
    assert (case.kernel, case.send_mode, case.bytes, case.window) == (
        "pingpong", "ready", 1 << 31, None)
    assert (case.batch, case.warmup_iterations, case.validated) == (3, 17, True)
    assert case.samples.tolist() == samples  # bit-exact float64
    assert again.rank_samples(case_id).tolist() == [samples, [s * 0.5 for s in samples]]
    row = again.run(run)
    assert row.status == "complete" and row.mpi_library == "MPICH"
    assert row.finished_utc is not None


def test_new_store_is_marked_with_schema_and_application(db):
    Store(db).close()
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert con.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def test_runs_and_launches_come_back_typed_with_their_json_decoded(db):
    store = Store(db)
    run = store.begin_run(["commscope", "run", "bw"], "bw", 2, True, settings={"window": 64})
    launch = store.begin_launch(run, 1, True, settings={"records": "r.jsonl"})
    store.set_context(launch, {"hosts": ["a"], "mpi_library": "MPICH"})
    store.set_in_flight(launch, {"kernel": "bw", "bytes": 8})
    store.note_run(run, screen_nodes=["a", "b"])
    row, (launched,) = store.run(run), store.launches(run)
    assert (row.command, row.kernel, row.ranks, row.oversubscribed) == (
        ["commscope", "run", "bw"], "bw", 2, True)
    assert row.settings == {"window": 64, "screen_nodes": ["a", "b"]}
    assert row.context == {"hosts": ["a"], "mpi_library": "MPICH"}
    assert row.in_flight == {"kernel": "bw", "bytes": 8} and row.owner["pid"] == os.getpid()
    assert (row.family, row.host_facts, row.source) == (None, {}, None)
    assert (row.n_cases, row.n_launches) == (0, 1) and store.runs() == [row]
    assert (launched.number, launched.status, launched.oversubscribed) == (1, "running", True)
    assert launched.settings == {"records": "r.jsonl"} and launched.context["hosts"] == ["a"]
    # the export keeps the run's JSON columns as the text stored (export:3)
    stored = store.as_stored(run)
    assert stored["run"]["settings"] == '{"window":64,"screen_nodes":["a","b"]}'
    assert stored["command"] == row.command and stored["launches"][0]["in_flight"]["bytes"] == 8


def test_each_case_is_committed_before_the_run_ends(db):
    store = Store(db)
    run = store.begin_run(["x"], "bw", 2, False)
    launch = store.begin_launch(run, 1, False)
    store.set_in_flight(launch, {"kernel": "bw", "send_mode": None, "bytes": 8})
    store.add_case(launch, _record([1e-6] * 3))
    # A second connection sees the case although the run is still 'running'.
    other = sqlite3.connect(db)
    assert other.execute("SELECT count(*) FROM cases").fetchone()[0] == 1
    assert other.execute("SELECT status FROM runs").fetchone()[0] == "running"


def test_foreign_sqlite_file_is_refused_untouched(db):
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE orders (id INTEGER)")
    con.commit()
    con.close()
    before = _digest(db)
    with pytest.raises(UserError, match="did not write"):
        Store(db)
    assert _digest(db) == before


def test_non_sqlite_file_is_refused_untouched(db):
    db.write_text("name,latency\nfoo,1\n" * 100)
    before = _digest(db)
    with pytest.raises(UserError, match="not a commscope results file"):
        Store(db)
    assert _digest(db) == before


def test_newer_schema_is_refused(db):
    Store(db).close()
    con = sqlite3.connect(db)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.commit()
    con.close()
    with pytest.raises(UserError, match=f"schema {SCHEMA_VERSION + 1}"):
        Store(db)


def test_unusable_paths_name_the_flag(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        Store(tmp_path / "missing" / "r.db")
    with pytest.raises(UserError, match="is a directory"):
        Store(tmp_path)


def test_unknown_run_is_a_user_error(db):
    with pytest.raises(UserError, match="no run 7"):
        Store(db).run(7)


def test_rank_samples_shape(db):
    store = Store(db)
    run = store.begin_run(["x"], "pingpong", 2, False)
    cid = store.add_case(store.begin_launch(run, 1, False), _record(list(np.linspace(1, 2, 5))))
    assert store.rank_samples(cid).shape == (2, 5)


def test_schema_1_store_is_migrated_in_place_keeping_its_cases(db):
    from commscope.store.schema import SCHEMA_1
    con = sqlite3.connect(db)
    con.executescript(SCHEMA_1 + f"PRAGMA application_id = {APPLICATION_ID}; "
                      "PRAGMA user_version = 1;")
    con.execute("INSERT INTO runs (started_utc, status, command, kernel, ranks) "
                "VALUES ('t', 'complete', '[]', 'bw', 2)")
    con.execute("INSERT INTO cases (run_id, kernel, bytes, ranks, batch, warmup_iterations, "
                "validated, timed_by, n, samples, rank_samples) "
                "VALUES (1, 'bw', 8, 2, 1, 1, 0, 'origin', 1, ?, ?)",
                (np.array([2.5e-6]).tobytes(), np.array([2.5e-6, 2.0e-6]).tobytes()))
    con.commit()
    con.close()
    store = Store(db)
    (case,) = store.cases(1)
    assert case.samples.tolist() == [2.5e-6] and case.params == {} and case.extra == {}
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.last_sweep("nope") is None


def test_extra_fields_and_invalid_repetitions(db):
    store = Store(db)
    run = store.begin_run(["x"], "allreduce", 4, False, settings={"params": {"op": "sum"}})
    rec = dict(_record([1.0, 9.0, 2.0, 3.0]), kernel="allreduce", sync="window", invalid=[1])
    store.add_case(store.begin_launch(run, 1, False), rec, case_key="abc")
    (case,) = store.cases(run)
    assert case.params == {"op": "sum"} and case.case_key == "abc"
    assert case.extra == {"sync": "window", "invalid": [1]}
    assert case.valid_samples.tolist() == [1.0, 2.0, 3.0]
    assert case.samples.tolist() == [1.0, 9.0, 2.0, 3.0]  # kept, not dropped


def _open_and_add_run(path, barrier, out) -> None:
    barrier.wait()  # both processes open the new file at the same instant
    try:
        store = Store(path)
        store.finish_run(store.begin_run(["test"], "pingpong", 2, False), "complete")
        out.put("ok")
    except Exception as exc:  # every kind of failure counts
        out.put(f"{type(exc).__name__}: {exc}")


def test_commands_that_create_one_file_at_once_all_succeed(tmp_path):
    """bench/concurrent_create.py runs 100 pairs; 25 here. Before creation took a write
    lock, and before WAL was switched on with retries, some of each failed."""
    ctx = multiprocessing.get_context("fork")
    out, failures = ctx.Queue(), []
    for i in range(25):
        path, barrier = tmp_path / f"new{i}.db", ctx.Barrier(2)
        procs = [ctx.Process(target=_open_and_add_run, args=(path, barrier, out))
                 for _ in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        failures += [r for r in (out.get(), out.get()) if r != "ok"]
        assert len(Store(path).runs()) == 2
    assert failures == []
