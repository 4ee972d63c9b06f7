"""The whole path, run on the fake MPI (tests/fakempi): plans, launch, ingest, store and views,
their error paths, and the defects the consolidation fixed, without launching MPI."""

import json
import sqlite3

import numpy as np
import pytest

from commscope.system.errors import UserError
from commscope.system.mpi import find_mpi
from commscope.measure.plan import parse_ranks
from commscope.views.studies import studies
from commscope.views.studies.common import plan
from conftest import EMBEDDED, commscope, one_line_error
from fakempi.inprocess import FakeLauncher


def fake(fake_mpi, *args, **faults):
    """A command on the fake MPI, launched in-process (fakempi.inprocess) with `faults`."""
    return commscope(*args, "--mpi", fake_mpi, launcher=FakeLauncher(**faults))


def test_a_run_lands_whole_in_the_store_and_the_table(fake_mpi, db):
    done = fake(fake_mpi, "run", "pingpong", "--modes", "standard,ready", "--sizes", "8,1K",
                "--iters", "7", "--db", db, "--wide")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("run 1: pingpong on 2 ranks, 3 launches, Open MPI v5.0.0 (fake)")
    assert [line.split()[1:4] for line in lines[3:7]] == [
        ["standard", "8", "B"], ["standard", "1", "KiB"], ["ready", "8", "B"],
        ["ready", "1", "KiB"]]
    con = sqlite3.connect(db)
    assert con.execute("SELECT status, kernel_facts IS NOT NULL FROM runs").fetchone() == (
        "complete", 1)
    # Three launches by default (auto; --iters: no more once three are in), one run.
    assert [line.split()[4] for line in lines[3:7]] == ["3"] * 4
    assert con.execute("SELECT count(*), sum(n) FROM cases").fetchone() == (12, 84)
    assert con.execute("SELECT count(*) FROM launches").fetchone() == (3,)


def test_runs_of_different_launched_counts_are_never_compared(fake_mpi, db):
    # pingpong measures ranks 0 and 1 whatever was launched: each case stores ranks = 2.
    for np_ in (8, 16):
        done = fake(fake_mpi, "run", "pingpong", "--np", np_, "--sizes", "8", "--iters", "9",
                    "--db", db)
        assert done.returncode == 0, done.stderr
    line = one_line_error(commscope("compare", "1", "2", "--db", db))
    assert "no case of A (1) matches one of B (2)" in line
    listing = commscope("compare", "1", "1", "--db", db)
    assert listing.returncode == 2  # a run on both sides
    done = fake(fake_mpi, "run", "pingpong", "--np", 8, "--sizes", "8", "--iters", "9",
                "--db", db)
    assert done.returncode == 0, done.stderr
    both = commscope("compare", "1", "3", "--all", "--db", db)
    assert both.returncode == 0, both.stderr
    assert "pingpong standard 8 B np8 oversubscribed" in both.stdout


def test_fit_and_predict_take_the_same_run_selections_as_compare(fake_mpi, db, tmp_path):
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text('iters = 6\nlaunches = 2\n[[experiment]]\nkernel = "pingping"\n'
                         'sizes = "1:64KiB"\n')
    assert fake(fake_mpi, "sweep", plan_file, "--db", db).returncode == 0
    assert fake(fake_mpi, "run", "pingping", "--sizes", "8", "--iters", "6", "--db",
                db).returncode == 0
    by_sweep = commscope("fit", "sweep:1", "--json", "--db", db)
    by_range = commscope("fit", "1-1", "--json", "--db", db)
    assert by_sweep.returncode == 0, by_sweep.stderr
    assert json.loads(by_sweep.stdout) == json.loads(by_range.stdout)
    assert json.loads(by_sweep.stdout)["fits"][0]["runs"] == [1]
    done = commscope("predict", "ring", "--from", "sweep:1", "--np", "4", "--sizes", "1K",
                     "--db", db)
    assert done.returncode == 0, done.stderr
    assert "t(m) from run 1: pingping" in done.stdout
    assert "'x' is not a run" in one_line_error(commscope("fit", "1,x", "--db", db))


def test_results_show_and_export_take_selections(fake_mpi, db):
    for _ in range(2):
        done = fake(fake_mpi, "run", "bw", "--sizes", "1K", "--iters", "5", "--db", db)
        assert done.returncode == 0
    shown = commscope("results", "show", "1-2", "--db", db).stdout
    assert shown.count("run 1: bw") == 1 and shown.count("run 2: bw") == 1
    rows = commscope("results", "export", "1,2", "--csv", "--db", db).stdout.splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == ["1", "2"]


def test_a_stream_of_another_schema_is_refused_in_one_line(fake_mpi, db):
    done = fake(fake_mpi, "run", "pingpong", "--sizes", "8", "--iters", "5", "--db", db,
                schema=7)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "records of schema 7, this commscope reads schema 1" in done.stderr
    status, message = sqlite3.connect(db).execute("SELECT status, message FROM runs").fetchone()
    assert status == "failed" and "schema 7" in message


def test_a_failing_rank_keeps_the_finished_cases(fake_mpi, db):
    done = fake(fake_mpi, "run", "pingpong", "--sizes", "8,16,32", "--iters", "5", "--db", db,
                fail_after=2)
    assert done.returncode == 1
    assert "failed: 2 finished cases kept" in done.stderr
    assert "rank 1 reported: fake failure" in done.stderr


def test_a_hung_case_is_named_when_it_times_out(fake_mpi, db):
    done = fake(fake_mpi, "run", "allreduce", "--np", "3", "--sizes", "8,16", "--iters", "5",
                "--timeout", "1", "--db", db, hang_after=1)
    assert done.returncode == 1
    assert "timed out: allreduce 16 B on ranks 0-2 made no progress for 1 s" in done.stderr


def test_host_facts_are_reused_within_the_hour_and_the_report_reads_stored_ceilings(
        fake_mpi, db, tmp_path):
    assert fake(fake_mpi, "run", "bw", "--sizes", "1K,64K", "--iters", "5", "--db",
                db).returncode == 0
    con = sqlite3.connect(db)
    facts = json.loads(con.execute("SELECT host_facts FROM runs").fetchone()[0])
    assert facts["memcpy"]["bytes_per_s"] > 0 and facts["memcpy"]["repeats"] == 5
    # The next command within the hour takes the same host's ceiling from the store ...
    assert fake(fake_mpi, "run", "bw", "--sizes", "1K", "--iters", "5", "--db",
                db).returncode == 0
    (again,) = con.execute("SELECT host_facts FROM runs WHERE id = 2").fetchone()
    assert json.loads(again) == facts
    # ... but not one measured more than an hour before
    con.execute("UPDATE runs SET host_facts = ?", (json.dumps(
        dict(facts, measured_utc="2020-01-01T00:00:00+00:00")),))
    con.commit()
    assert fake(fake_mpi, "run", "bw", "--sizes", "1K", "--iters", "5", "--db",
                db).returncode == 0
    (fresh,) = con.execute("SELECT host_facts FROM runs WHERE id = 3").fetchone()
    assert json.loads(fresh)["measured_utc"] > "2026"
    con.execute("DELETE FROM cases WHERE run_id > 1")
    con.execute("DELETE FROM launches WHERE run_id > 1")
    con.execute("DELETE FROM warnings WHERE run_id > 1")
    con.execute("DELETE FROM runs WHERE id > 1")
    con.commit()
    # The report reads each case's stored copy ceiling: a changed one shows, nothing is
    # re-measured, and the host-wide copy rate is no ceiling for any size.
    facts.update(host="fakehost", memcpy=dict(facts["memcpy"], bytes_per_s=9.876e9))
    con.execute("UPDATE runs SET host_facts = ?", (json.dumps(facts),))
    con.execute("UPDATE cases SET extra = json_set(extra, '$.copy_s', bytes / 1.234e9)")
    con.commit()
    out = tmp_path / "r.html"
    assert commscope("report", "-o", out, "--db", db).returncode == 0
    text = out.read_text()
    assert "Bandwidth vs the copy ceiling" in text
    assert '<td class="num">1,234</td>' in text and "9,876" not in text


def test_study_plans_are_built_as_run_builds_them():
    mpi = find_mpi(str(EMBEDDED))
    for study in studies().values():
        for p in study.plans(parse_ranks(study.default_np), mpi):
            assert p.window == p.kernel.default_window, (study.name, p.kernel.name)
    with pytest.raises(UserError, match="Open MPI binds within the mapped object"):
        plan(mpi, "ring", 2, "8", map_by="core", bind_to="socket")


def test_the_convergence_study_leaves_late_samples_out(db):
    from commscope.views.studies.point_to_point import running_mean
    from commscope.store.store import Store

    store = Store(db)
    run = store.begin_run(["x"], "pingpong", 2, False, {"sync": "window"})
    samples = [2e-6, 2e-6, 1.0, 2e-6]  # the third started late
    store.add_case(store.begin_launch(run, 1, False),
                   {"kernel": "pingpong", "send_mode": "standard", "bytes": 8, "ranks": 2,
                    "window": None, "batch": 1, "warmup_iterations": 1,
                    "validated": False, "timed_by": "origin", "samples_s": samples,
                    "rank_samples_s": [samples, samples], "invalid": [2]})
    (case,) = store.cases(run)
    iterations, mean_s = running_mean(case)
    assert iterations.tolist() == [1, 2, 3] and np.allclose(mean_s, 1e-6)


def test_a_launcher_that_never_exits_after_the_end_is_stopped(fake_mpi, db, monkeypatch):
    from commscope.measure import measure

    monkeypatch.setattr(measure, "LAUNCHER_EXIT_S", 0.2)
    done = fake(fake_mpi, "run", "pingpong", "--sizes", "8,16", "--iters", "5", "--launches",
                "1", "--db", db, launcher_hangs=True)
    assert done.returncode == 0, done.stderr
    assert "launch 1: every rank finished, but the launcher had not exited 0.2 s later; it " \
           "was stopped, and the launch is complete" in done.stderr
    assert sqlite3.connect(db).execute("SELECT status FROM launches").fetchone() == ("complete",)


def test_a_launcher_that_fails_alone_is_quoted(fake_mpi, db):
    """No rank reported an error: the launcher's last words say why."""
    done = fake(fake_mpi, "run", "pingpong", "--sizes", "8,16", "--iters", "5", "--launches",
                "1", "--db", db, exit_code=134, stderr=["mpirun noticed that process rank 1\n",
                                                      "exited on signal 6 (Aborted).\n",
                                                      "----------\n"])
    assert done.returncode == 1
    assert "MPI job exited with code 134: mpirun noticed that process rank 1 | exited on " \
           "signal 6 (Aborted)." in done.stderr


def test_fit_without_runs_fits_each_kernel_s_latest_command(fake_mpi, db):
    """`make demo` measures bw, then pingpong: a bare `fit` fits both, each from its latest
    command, and not the older pingpong command before them."""
    for kernel in ("pingpong", "bw", "pingpong"):
        assert fake(fake_mpi, "run", kernel, "--sizes", "8,1KiB,64KiB", "--iters", "6",
                    "--db", db).returncode == 0
    done = commscope("fit", "--json", "--db", db)
    assert done.returncode == 0, done.stderr
    assert sorted(f["runs"] for f in json.loads(done.stdout)["fits"]) == [[2], [3]]
