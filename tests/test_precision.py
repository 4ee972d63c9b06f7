"""Precision-driven sampling (--precision, --max-time) and the warnings stored with a run."""

import io
import json
import sqlite3
from contextlib import redirect_stderr

import numpy as np
import pytest

from commscope.stats.advice import case_advice, remedy
from commscope.cli.common import no_figure
from commscope.store.store import Store
from commscope.stats.summary import case_summary, combined_summary
from conftest import commscope, one_line_error


def _stored(db, **record):
    """One pingpong case with these samples (seconds per round trip), as the store returns it."""
    store = Store(db)
    run = store.begin_run(["test"], "pingpong", 2, False)
    samples = record.pop("samples_s")
    rec = {"kernel": "pingpong", "send_mode": "standard", "bytes": 8, "ranks": 2,
           "window": None, "batch": record.pop("batch", 100), "warmup_iterations": 1,
           "validated": False, "timed_by": "origin", "samples_s": samples,
           "rank_samples_s": [samples, samples], **record}
    store.add_case(store.begin_launch(run, 1, False), rec)
    (case,) = store.cases(run)
    return case


def _kinds(case, resolution_s=1e-9):
    """The warnings about a one-launch case, less the one that says so."""
    found = case_advice([case], combined_summary([case]), resolution_s)
    return {a.kind for a in found} - {"one_launch"}


@pytest.mark.mpi
def test_each_launch_samples_until_its_median_is_precise_enough(mpi_prefix, db):
    done = commscope("run", "pingpong", "--sizes", "8,64K", "--precision", "2%", "--max-time",
                     "3", "--mpi", mpi_prefix, "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    for case in json.loads(done.stdout)["cases"]:
        assert case["launches"] >= 3 and case["n"] >= 3 * 3
    # Each launch sampled until its median was within half the goal (launches.py), by the
    # rule Python applies to the stored samples, unless its share of the time ran out.
    for case in Store(db).cases(1):
        s = case_summary(case)
        assert s.n >= 3 and s.precision_target == 0.01
        assert s.capped or s.precision <= 0.01, s
    settings = json.loads(sqlite3.connect(db).execute("SELECT settings FROM runs").fetchone()[0])
    assert (settings["precision"], settings["max_time"], settings["iters"],
            settings["launches"]) == (0.02, 3.0, None, "auto")


@pytest.mark.mpi
def test_looser_precision_takes_fewer_samples(db):
    counts = {}
    for precision in ("20%", "0.5%"):
        done = commscope("run", "pingpong", "--sizes", "1K", "--precision", precision,
                         "--db", db, "--json")
        assert done.returncode == 0, done.stderr
        counts[precision] = json.loads(done.stdout)["cases"][0]["n"]
    assert 10 <= counts["20%"] < counts["0.5%"], counts


@pytest.mark.mpi
def test_time_cap_stops_a_case_short_and_says_so(db):
    done = commscope("run", "pingpong", "--sizes", "1MiB", "--precision", "0.01%",
                     "--max-time", "0.3", "--launches", "1", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    (case,) = json.loads(done.stdout)["cases"]
    assert case["capped"] and case["precision"] > 0.0001
    assert "capped: 1 run" in done.stderr
    assert "run: 1 of 1 cases stopped by --max-time" in done.stderr
    assert "  remedy: raise --max-time (it was 0.3 s)" in done.stderr
    kinds = [k for (k,) in sqlite3.connect(db).execute("SELECT kind FROM warnings")]
    assert {"capped", "one_launch"} <= set(kinds)


@pytest.mark.parametrize("args, says", [
    (["--precision", "150%"], "--precision 150%: give a relative precision"),
    (["--precision", "x"], "--precision x: give a relative precision"),
    (["--max-time", "0"], "--max-time 0.0: give a positive number of seconds"),
])
def test_bad_sampling_flags_are_one_line(db, args, says):
    assert says in one_line_error(commscope("run", "pingpong", "--sizes", "8", *args,
                                            "--db", db))


def test_steady_samples_raise_no_warning(db):
    rng = np.random.default_rng(1)
    case = _stored(db, samples_s=list(1e-6 * (1 + 0.02 * rng.uniform(-1, 1, 300))))
    assert _kinds(case) == set()


def test_spread_and_tails_are_data_not_flags(db):
    """A clean lognormal case of 1000 samples, and one whose 1% of samples are 3x spikes,
    are flagged with nothing: a z-score limit fires on most such cases and a CV limit on
    spikes that leave the median alone (issue 37); the summary keeps CV and p99."""
    from commscope.stats.summary import case_summary
    rng = np.random.default_rng(2)
    clean = 1e-6 * rng.lognormal(0, 0.05, 1000)
    spiked = clean.copy()
    spiked[50::100] *= 3
    for samples in (clean, spiked):
        case = _stored(db, samples_s=list(samples))
        assert _kinds(case) == set()
    s = case_summary(case)
    assert s.cv > 0.1 and s.outliers >= 10


def test_drifting_median_is_found(db):
    rng = np.random.default_rng(3)
    steady = 1e-6 * (1 + 0.01 * rng.standard_normal(100))
    case = _stored(db, samples_s=list(np.concatenate([steady, steady * 1.01, steady * 1.2])))
    assert "drift" in _kinds(case)


def test_slow_first_repetition_is_found(db):
    samples = [5e-6] + [1e-6 * (1 + 0.001 * i) for i in range(50)]
    assert "slow_first" in _kinds(_stored(db, samples_s=samples))


def test_samples_shorter_than_the_timer_allows_are_found(db):
    # One 1 us call per sample spans only 10 steps of a 0.1 us timer, but 1000 of a 1 ns one.
    case = _stored(db, samples_s=[1e-6] * 20, batch=1, sync="window")
    assert "short_samples" in _kinds(case, resolution_s=1e-7)
    assert "short_samples" not in _kinds(case, resolution_s=1e-9)


def test_a_single_call_is_short_only_under_ten_timer_steps(db):
    # A collective is timed one call per sample, as OSU times it: a 1 us call is told only
    # when a timer step is a tenth of it or more, and never as a batch to lengthen.
    case = _stored(db, samples_s=[1e-6] * 20, batch=1, sample="call")
    assert "short_calls" in _kinds(case, resolution_s=2e-7)
    assert not {"short_calls", "short_samples"} & _kinds(case, resolution_s=5e-8)
    assert "--sync" not in remedy("short_calls", {"sync": "barrier"})


def test_a_case_whose_every_window_started_late_has_no_figures(db):
    case = _stored(db, samples_s=[1e-6] * 4, sync="window", invalid=[0, 1, 2, 3])
    s = case_summary(case)
    assert s.n == 0 and s.median_s is None
    assert "all_late" in _kinds(case)
    # the command that measured it prints no number for it, says why and exits 1
    err = io.StringIO()
    with redirect_stderr(err):
        assert no_figure([s]) == 1
    assert err.getvalue() == ("commscope: no figure for pingpong 8 B on 2 ranks: every "
                              "sample started late under --sync window; use --sync barrier "
                              "(the default)\n")
    assert no_figure([case_summary(_stored(db, samples_s=[1e-6] * 4))]) == 0


def test_too_few_samples_are_told(db):
    assert "few_samples" in _kinds(_stored(db, samples_s=[1e-6, 1.1e-6, 1.2e-6]))


def test_a_drift_in_one_launch_of_three_is_the_machine_s_in_two_the_case_s(db):
    """drift and slow_first flag a case only where most of its launches show them: in one
    launch of several they are a machine state the launch-aware interval holds."""
    rng = np.random.default_rng(4)
    steady = 1e-6 * (1 + 0.01 * rng.standard_normal(100))
    drifting = np.concatenate([steady, steady * 1.01, steady * 1.2])
    flat = np.concatenate([steady, steady, steady])
    for drifts, flagged in ((1, False), (2, True)):
        store = Store(db)
        run = store.begin_run(["test"], "pingpong", 2, False)
        for launch in range(1, 4):
            samples = list(drifting if launch <= drifts else flat)
            store.add_case(store.begin_launch(run, launch, False), {
                "kernel": "pingpong", "send_mode": "standard", "bytes": 8, "ranks": 2,
                "window": None, "batch": 100, "warmup_iterations": 1, "validated": False,
                "timed_by": "origin", "samples_s": samples, "rank_samples_s": [samples] * 2})
        cases = store.cases(run)
        found = {a.kind for a in case_advice(cases, combined_summary(cases), 1e-9)}
        assert ("drift" in found) is flagged


@pytest.mark.parametrize("launches", ["auto", "3"])
def test_every_launch_of_the_first_round_gets_the_same_share(fake_mpi, db, launches):
    """A first launch that runs past its share (each case here takes 0.2 s of wall time,
    the budget 1 s) leaves the launches after it the same share, not the minimum: launches
    that sampled alike are what the launch-aware interval compares."""
    from fakempi.inprocess import FakeLauncher
    done = commscope("run", "pingpong", "--sizes", "8,64,512", "--max-time", "1",
                     "--launches", launches, "--mpi", fake_mpi, "--db", db,
                     launcher=FakeLauncher(case_s=0.2))
    assert done.returncode == 0, done.stderr
    shares = [json.loads(s)["case_time_s"] for (s,) in sqlite3.connect(db).execute(
        "SELECT settings FROM launches ORDER BY number")]
    assert len(shares) >= 3 and shares[0] > 0.01, shares
    assert shares[:3] == [shares[0]] * 3, shares


@pytest.mark.parametrize("start_s, pilot", [(0.02, 8), (0.4, 3)])
def test_auto_makes_as_many_pilot_launches_as_start_up_in_half_the_budget(
        fake_mpi, db, start_s, pilot):
    """The first command here has no launch cost to go by and makes the pilot of 3; the
    next makes as many as start up in half of --max-time, by the first's (launches.py)."""
    from fakempi.inprocess import FakeLauncher
    for _ in range(2):
        done = commscope("run", "pingpong", "--sizes", "8,64", "--max-time", "1",
                         "--mpi", fake_mpi, "--db", db, "--json",
                         launcher=FakeLauncher(start_s=start_s))
        assert done.returncode == 0, done.stderr
    pilots = [json.loads(s)["pilot"] for (s,) in sqlite3.connect(db).execute(
        "SELECT settings FROM runs ORDER BY id")]
    assert pilots == [3, pilot]
    assert all(c["launches"] >= pilot for c in json.loads(done.stdout)["cases"])
