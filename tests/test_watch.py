"""`commscope watch`: probes stored as labelled runs and numbered on, one probe per call
with --once, a probe that cannot run stored with what stopped it, a budget kept, and bad
input refused before anything is stored. Through the fake launcher (fast tier)."""

import json
import os
import signal
import sqlite3

import pytest

from commscope.measure.sweep import load
from commscope.store.store import Store
from commscope.watch.points import watch_runs
from commscope.system.mpi import find_mpi
from conftest import commscope, one_line_error
from fakempi.inprocess import FakeLauncher

QUICK = ("--every", "0.1s")


@pytest.fixture
def plan(tmp_path):
    """The default probe set, as `watch --default` writes it."""
    path = tmp_path / "probe.toml"
    done = commscope("watch", "--default", path)
    assert done.returncode == 0, done.stderr
    return path


def watch(plan, fake_mpi, db, *args, fake=None):
    return commscope("watch", plan, *args, "--mpi", fake_mpi, "--db", db,
                     launcher=fake or FakeLauncher())


def probes(db, name="probe"):
    return watch_runs(Store(db), name)


def stored_runs(db) -> int:
    if not db.exists():
        return 0
    return sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0]


def test_a_watch_stores_labelled_probes_and_numbers_on(plan, fake_mpi, db):
    done = watch(plan, fake_mpi, db, "--count", "3", *QUICK)
    assert done.returncode == 0, done.stderr
    found = probes(db)
    assert [n for n, _ in found] == [1, 2, 3]
    for number, runs in found:
        # the default set's two experiments: pingpong 8 B and 1 MiB, allreduce 8 B
        assert [r.kernel for r in runs] == ["pingpong", "allreduce"]
        assert all(r.settings["info"] == {"watch": "probe", "probe": str(number)}
                   for r in runs)
        assert all(r.status == "complete" and r.n_launches == 3 for r in runs)
    lines = done.stdout.splitlines()
    assert len(lines) == 3 * 3  # a line per case and probe
    assert lines[0].startswith("probe 1: pingpong") and "time" in lines[0]
    assert lines[-1].startswith("probe 3: allreduce 8 B np2 dtype=int op=sum: time ")
    again = watch(plan, fake_mpi, db, "--once")
    assert again.returncode == 0, again.stderr
    assert [n for n, _ in probes(db)] == [1, 2, 3, 4]
    assert again.stdout.splitlines()[0].startswith("probe 4: ")


def test_once_is_one_probe(plan, fake_mpi, db):
    done = watch(plan, fake_mpi, db, "--once")
    assert done.returncode == 0, done.stderr
    assert [n for n, _ in probes(db)] == [1]
    assert "once" in done.stderr


def test_a_watch_is_named_by_its_plan(tmp_path, fake_mpi, db):
    path = tmp_path / "other.toml"
    path.write_text('name = "fleet"\nlaunches = 2\niters = 5\n[[experiment]]\n'
                    'kernel = "pingpong"\nsizes = "8"\n')
    assert watch(path, fake_mpi, db, "--once").returncode == 0
    assert [n for n, _ in probes(db, "fleet")] == [1]
    assert probes(db, "other") == []


def test_a_probe_whose_launch_fails_is_stored_as_unreachable(plan, fake_mpi, db):
    done = watch(plan, fake_mpi, db, "--once", fake=FakeLauncher(fail_after=1))
    assert done.returncode == 1, done.stderr
    assert "probe 1: unreachable after " in done.stderr
    [(number, runs)] = probes(db)
    assert [r.status for r in runs] == ["failed"]  # a run stops at its first failed launch
    [warning] = [w for w in Store(db).warnings(runs[0].id) if w.kind == "unreachable"]
    assert warning.message.startswith("probe 1: launch 1 ended in an error (failed: 1 ")
    shown = commscope("results", "show", runs[0].id, "--db", db)
    assert "remedy: check the hosts and the route between them" in shown.stderr + shown.stdout


def test_a_hung_probe_is_stopped_within_its_budget(plan, fake_mpi, db):
    done = watch(plan, fake_mpi, db, "--once", "--budget", "1s",
                 fake=FakeLauncher(hang_after=1))
    assert done.returncode == 1, done.stderr
    [(_, runs)] = probes(db)
    [failed] = [r for r in runs if r.status == "failed"]
    [warning] = [w for w in Store(db).warnings(failed.id) if w.kind == "hung"]
    assert "made no progress for 0.5 s" in warning.message


def test_a_probe_past_its_budget_is_stopped_and_stored_as_over_budget(plan, fake_mpi, db):
    # 3 launches of 3 cases at 0.2 s a case: 1.8 s against a budget of 1 s
    done = watch(plan, fake_mpi, db, "--once", "--budget", "1s",
                 fake=FakeLauncher(case_s=0.2))
    assert done.returncode == 1, done.stderr
    [(_, runs)] = probes(db)
    [failed] = [r for r in runs if r.status == "failed"]  # the others end where it did
    [warning] = [w for w in Store(db).warnings(failed.id) if w.kind == "over budget"]
    assert "passed its --budget of 1 s" in warning.message
    assert "probe 1: over budget after 1" in done.stderr


def test_missed_slots_are_skipped_and_said(plan, fake_mpi, db):
    done = watch(plan, fake_mpi, db, "--count", "2", *QUICK,
                 fake=FakeLauncher(case_s=0.03))
    assert done.returncode == 0, done.stderr
    assert "probe 2: " in done.stderr and "of --every 0.1s skipped" in done.stderr


def _signal_at(case: int):
    """The fake's on_case: SIGINT to this process at the command's `case`-th case."""
    seen = []

    def on_case(_):
        seen.append(1)
        if len(seen) == case:
            os.kill(os.getpid(), signal.SIGINT)
    return on_case


def test_ctrl_c_in_a_probe_stores_it_interrupted_and_ends(plan, fake_mpi, db):
    # a probe is 9 cases (3 launches of pingpong's 2 and allreduce's 1): case 11 is probe 2's
    done = watch(plan, fake_mpi, db, "--count", "3", *QUICK,
                 fake=FakeLauncher(on_case=_signal_at(11)))
    assert done.returncode == 130, done.stderr
    found = probes(db)
    assert [n for n, _ in found] == [1, 2]
    assert "interrupted" in [r.status for r in found[1][1]]


def test_ctrl_c_between_probes_ends_at_once(plan, fake_mpi, db, monkeypatch):
    from commscope.watch import probe as probing

    def interrupted(when):  # the signal comes as the watch waits for the next slot
        os.kill(os.getpid(), signal.SIGINT)
        sleep(when)
    sleep = probing._sleep_until
    monkeypatch.setattr(probing, "_sleep_until", interrupted)
    done = watch(plan, fake_mpi, db, "--count", "2", "--every", "5s")
    assert done.returncode == 130, done.stderr
    assert "stopped by SIGINT; everything measured is kept in " in done.stderr
    [(number, runs)] = probes(db)
    assert number == 1 and all(r.status == "complete" for r in runs)


@pytest.mark.parametrize("args, says", [
    (("--every", "0"), "--every 0: give a duration above 0"),
    (("--every=-5m",), "--every -5m: give a duration above 0"),
    (("--every", "soon"), "--every soon: give a duration above 0"),
    (("--budget", "0.05s"), "--budget 0.05s: a probe of "),
    (("--count", "0"), "--count 0: give a whole number of probes"),
    (("--once", "--count", "2"), "--once is one probe"),
    (("--keep", "0"), "--keep 0: give a whole number of probes, 1 or more, or all"),
])
def test_bad_flags_are_one_line_and_store_nothing(plan, fake_mpi, db, args, says):
    done = watch(plan, fake_mpi, db, *args)
    assert says in one_line_error(done)
    assert stored_runs(db) == 0


def test_a_budget_below_a_launch_names_the_floor(plan, fake_mpi, db):
    line = one_line_error(watch(plan, fake_mpi, db, "--budget", "0.05s"))
    # 2 experiments x 3 launches, 3 cases: 6 x 0.02 s start-up + 9 x 1 ms
    assert "takes at least 0.13 s (6 launches of 3 cases" in line
    assert "give --budget 1s or more" in line


def test_a_plan_with_no_cases_is_refused(tmp_path, fake_mpi, db):
    path = tmp_path / "empty.toml"
    path.write_text('name = "empty"\n')
    assert "no [[experiment]] tables" in one_line_error(watch(path, fake_mpi, db, "--once"))
    assert stored_runs(db) == 0


def test_another_plan_under_the_same_name_is_refused(plan, tmp_path, fake_mpi, db):
    assert watch(plan, fake_mpi, db, "--once").returncode == 0
    (tmp_path / "sub").mkdir()
    other = tmp_path / "sub" / "probe.toml"  # the same name: the file's stem
    other.write_text(plan.read_text().replace('"8,1MiB"', '"8,4KiB"'))
    line = one_line_error(watch(other, fake_mpi, db, "--once"))
    assert "watch probe in " in line and "holds probes of another plan" in line
    assert "probe 1 holds pingpong standard 1 MiB np2" in line
    assert stored_runs(db) == 2  # probe 1's runs alone


def test_default_writes_a_plan_it_never_overwrites(plan, tmp_path):
    text = plan.read_text()
    line = one_line_error(commscope("watch", "--default", plan))
    assert "exists; give a new file name" in line
    assert plan.read_text() == text


def test_default_over_hosts_pairs_them_in_tournament_rounds(tmp_path, fake_mpi):
    path = tmp_path / "fleet.toml"
    assert commscope("watch", "--default", path, "--hosts", "a,b,c").returncode == 0
    points = load(path, find_mpi(str(fake_mpi))).points
    # 3 hosts: 3 rounds (one sits out each), then the allreduce over all
    assert [(p.kernel.name, p.params.get("round")) for p in points] == [
        ("pairs", "1"), ("pairs", "2"), ("pairs", "3"), ("allreduce", None)]
    assert all(p.ranks == 3 for p in points)


def test_old_probes_are_folded_their_faults_kept_in_words(plan, fake_mpi, db):
    assert watch(plan, fake_mpi, db, "--once").returncode == 0
    assert watch(plan, fake_mpi, db, "--once", fake=FakeLauncher(fail_after=1)).returncode == 1
    done = watch(plan, fake_mpi, db, "--count", "3", "--keep", "2", *QUICK)
    assert done.returncode == 0, done.stderr
    assert [n for n, _ in probes(db)] == [4, 5]  # the latest two whole; 1 to 3 folded
    con = sqlite3.connect(db)
    assert con.execute("SELECT DISTINCT probe FROM watch_points ORDER BY probe").fetchall() \
        == [(1,), (2,), (3,)]
    shown = commscope("results", "history", "allreduce", "--db", db)
    assert shown.returncode == 0, shown.stderr
    rows = {x.split()[0]: x for x in shown.stdout.splitlines()
            if x.split()[:1] in (["1"], ["2"], ["3"], ["4"])}
    # probe 2 stopped at pingpong's first launch, before the allreduce
    assert rows["2"].rstrip().endswith("not measured: unreachable")
    assert rows["1"].split()[3] == rows["3"].split()[3] == "3"  # folded with 3 launches
    kept_all = watch(plan, fake_mpi, db, "--once", "--keep", "all")
    assert kept_all.returncode == 0 and [n for n, _ in probes(db)] == [4, 5, 6]


def test_json_is_one_document_of_the_probes_at_their_end_and_at_ctrl_c(plan, fake_mpi, db):
    done = watch(plan, fake_mpi, db, "--count", "2", "--json", *QUICK)
    assert done.returncode == 0, done.stderr  # commscope() validated it against watch:1
    out = json.loads(done.stdout)
    assert out["watch"] == "probe" and [p["probe"] for p in out["probes"]] == [1, 2]
    first, second = out["probes"]
    assert [c["bytes"] for c in second["cases"]] == [8, 1048576, 8]
    # a first probe has no level to be read against; the second is read against the first
    assert first["cases"][0]["of_expected"] is None
    assert second["cases"][0]["of_expected"]["ci"] is None
    assert second["cases"][0]["of_expected"]["ratio"] == pytest.approx(
        second["cases"][0]["median_s"] / first["cases"][0]["median_s"])
    assert second["fault"] is None and second["runs"] == [r.id for r in probes(db)[1][1]]
    stopped = watch(plan, fake_mpi, db, "--count", "3", "--json", *QUICK,
                    fake=FakeLauncher(on_case=_signal_at(11)))
    assert stopped.returncode == 130, stopped.stderr
    assert [p["probe"] for p in json.loads(stopped.stdout)["probes"]] == [3, 4]
