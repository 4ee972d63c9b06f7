"""`commscope compare`: launch-level tests of synthetic runs with known shifts through a
real store, the verdicts and their wording, bad input, and two real ping-pong runs."""

import json
import math
import sqlite3

import numpy as np
import pytest

from commscope.stats.verdict import Threshold
from commscope.judge.compare import Side, compare
from commscope.store.store import Store
from conftest import commscope, one_line_error

FLOOR_S = 2e-6  # synthetic round trips: a floor plus exponential noise, as timings look
NOISE_S = 2e-7
MEDIAN_S = FLOOR_S + NOISE_S * math.log(2)
SIZES = (8, 1024, 65536)
LAUNCH_CV = 0.02  # synthetic launches differ by a log-normal factor of this spread


def _samples(rng, n, shift_s=0.0):
    return FLOOR_S + shift_s + rng.exponential(NOISE_S, n)


def _record(samples, nbytes, kernel="pingpong"):
    samples = [float(s) for s in samples]
    return {"kernel": kernel, "send_mode": "standard" if kernel == "pingpong" else None,
            "bytes": nbytes, "ranks": 2, "window": None, "batch": 1, "warmup_iterations": 10,
            "validated": False, "timed_by": "origin", "samples_s": samples,
            "rank_samples_s": [samples, samples]}


def _add_run(db, cases, kernel="pingpong", settings=None, sweep_id=None, launches=1,
             rng=None, factor=1.0):
    """One stored run of `launches` launches; `cases` maps bytes to a function of a launch's
    random factor giving its raw samples (each launch scaled by its own log-normal factor)."""
    store = Store(db)
    run = store.begin_run(["commscope", "run", kernel], kernel, 2, False,
                          settings or {"params": {}, "sync": "barrier", "transport": "auto"},
                          sweep_id)
    rng = rng or np.random.default_rng(0)
    for number in range(1, launches + 1):
        launch = store.begin_launch(run, number, False)
        scale = factor * math.exp(rng.normal(0, LAUNCH_CV))
        for nbytes, draw in cases.items():
            store.add_case(launch, _record(np.asarray(draw()) * scale, nbytes, kernel))
        store.finish_launch(launch, "complete")
    store.finish_run(run, "complete")
    store.close()
    return run


def _compare_json(db, *args):
    done = commscope("compare", *args, "--json", "--db", db)
    return done, json.loads(done.stdout)


# --- the tests, on launch medians ---

def _side(medians):
    return Side.of({"case": "x"}, np.asarray(medians, dtype=float), [])


def test_student_t_on_log_launch_medians_by_hand():
    a, b = [1.0, 1.1, 0.9], [1.2, 1.3, 1.25, 1.22]
    result = compare({"k": _side(a)}, {"k": _side(b)}, Threshold(0.05))
    (c,) = result.changes
    la, lb = np.log(a), np.log(b)
    from scipy import stats
    # Student's pooled variance, over the launches and, assumed as large, between the
    # two commands (verdict.inference.COMMAND_TO_LAUNCH = 1)
    pooled = (2 * la.var(ddof=1) + 3 * lb.var(ddof=1)) / 5
    se = math.sqrt(pooled * (1 / 3 + 1 / 4 + 2))
    assert (c.method, c.df) == ("student", 5)
    # the test at the threshold, two-sided read in its direction: H0 B 1/0.95 times A's
    d = lb.mean() - la.mean()
    assert c.claim.p == pytest.approx(2 * stats.t.sf((d - math.log(1 / 0.95)) / se, 5))
    half = stats.t.ppf(0.975, 5) * se
    assert c.claim.interval[0] == pytest.approx(math.exp(lb.mean() - la.mean() - half))
    assert c.median_a_s == pytest.approx(math.exp(la.mean()))


def test_one_launch_against_several_takes_their_variance():
    a, b = [1.0], [1.2, 1.3, 1.25]
    (c,) = compare({"k": _side(a)}, {"k": _side(b)}, Threshold(0.05)).changes
    lb = np.log(b)
    assert (c.method, c.df) == ("student", 2)
    se = math.sqrt(lb.var(ddof=1) * (1 + 1 / 3 + 2))
    from scipy import stats
    half = stats.t.ppf(0.975, 2) * se
    assert c.claim.interval[1] == pytest.approx(math.exp(lb.mean() + half))


def test_one_launch_a_side_is_inconclusive_without_history():
    result = compare({"k": _side([1.0])}, {"k": _side([1.3])}, Threshold(0.05))
    (c,) = result.changes
    assert (c.claim.word, c.claim.failing, c.claim.p) == ("inconclusive", False, None)
    assert c.claim.ratio == pytest.approx(1.3)


def test_history_gives_one_launch_a_side_its_between_launch_variance():
    from commscope.stats.replication import history
    past = history([[1.0, 1.02, 0.98], [1.01, 0.99]])
    result = compare({"k": _side([1.0])}, {"k": _side([1.3])}, Threshold(0.05), lambda cases: past)
    (c,) = result.changes
    assert c.method == "history" and c.df == past.df == 3 and c.claim.word == "regression"


@pytest.mark.parametrize("b, verdict", [
    ([1.30, 1.31, 1.29], "regression"),  # slower, beyond the threshold
    ([1.03, 1.032, 1.028], "slower"),  # slower, but within the threshold
    ([0.80, 0.81, 0.79], "faster"),
    ([1.00, 1.002, 0.998], "no change"),  # the interval within +-5%
    ([0.9, 1.2, 1.0], "undetermined"),  # the interval spans the threshold
])
def test_verdicts_tell_apart_change_no_change_and_noise(b, verdict):
    result = compare({"k": _side([1.0, 1.002, 0.998])}, {"k": _side(b)}, Threshold(0.05))
    assert result.changes[0].claim.word == verdict


# --- synthetic runs through the store and the CLI ---

def test_a_slowdown_beyond_what_the_launches_can_detect_is_found(db):
    # 4 launches a side, commands assumed to differ as launches do: the footer gives the
    # smallest change this detects, about 1.17x here; 20% is beyond it (the power at each
    # noise and K: bench/verdicts.py).
    rng = np.random.default_rng(1)
    shift = 0.20 * MEDIAN_S
    _add_run(db, {s: (lambda: _samples(rng, 200)) for s in SIZES}, launches=4, rng=rng)
    _add_run(db, {8: lambda: _samples(rng, 200), 1024: lambda: _samples(rng, 200, shift),
                  65536: lambda: _samples(rng, 200)}, launches=4, rng=rng)
    done, out = _compare_json(db, "1", "2", "--threshold", "5%")
    assert done.returncode == 1, done.stderr
    by_size = {c["bytes"]: c for c in out["cases"]}
    slow = by_size[1024]
    assert slow["verdict"] == "regression" and slow["regression"]
    assert slow["relative_ci_low"] < 0.20 < slow["relative_ci_high"]
    assert (slow["launches_a"], slow["launches_b"], slow["method"]) == (4, 4, "student")
    # pingpong's latency is half the round trip, as `commscope run` shows it
    assert slow["median_a_s"] == pytest.approx(MEDIAN_S / 2, rel=0.05)
    assert all(by_size[s]["verdict"] in ("no change", "undetermined") for s in (8, 65536))
    table = commscope("compare", "1", "2", "--db", db).stdout
    assert "pingpong standard 1 KiB np2" in table and "regression" in table
    assert "pingpong standard 8 B" not in table  # only changes that matter by default
    assert "3 matched cases: 1 regression" in table


def test_junit_has_a_testcase_per_matched_case_and_fails_only_the_regression(db, tmp_path):
    import junitparser
    rng = np.random.default_rng(1)
    shift = 0.20 * MEDIAN_S
    _add_run(db, {s: (lambda: _samples(rng, 200)) for s in SIZES}, launches=4, rng=rng)
    _add_run(db, {8: lambda: _samples(rng, 200), 1024: lambda: _samples(rng, 200, shift),
                  65536: lambda: _samples(rng, 200)}, launches=4, rng=rng)
    xml = tmp_path / "compare.xml"
    done, out = _compare_json(db, "1", "2", "--threshold", "5%", "--junit", xml)
    assert done.returncode == 1, done.stderr
    read = junitparser.JUnitXml.fromfile(str(xml))
    (suite,) = [read] if isinstance(read, junitparser.TestSuite) else list(read)
    cases = {c.name: c for c in suite}
    assert len(cases) == len(out["cases"]) == 3
    (failed,) = [c for c in cases.values() if not c.is_passed]
    assert failed.name == "pingpong standard 1 KiB np2"
    (failure,) = failed.result
    assert failure.message.startswith("regression: +") and "interval" in failure.message \
        and "p (BH)" in failure.message
    verdicts = {c["bytes"]: c["verdict"] for c in out["cases"]}
    for nbytes in (8, 65536):
        (case,) = [c for name, c in cases.items() if name.startswith(
            f"pingpong standard {'8 B' if nbytes == 8 else '64 KiB'} ")]
        if verdicts[nbytes] == "undetermined":  # skipped, never passed
            assert not case.is_passed and case.is_skipped
        else:
            assert case.is_passed and case.system_out.startswith(verdicts[nbytes] + ":")


def test_same_distribution_finds_nothing(db):
    rng = np.random.default_rng(2)
    for _ in range(2):
        _add_run(db, {s: (lambda: _samples(rng, 300)) for s in SIZES}, launches=3, rng=rng)
    done, out = _compare_json(db, "1", "2")
    verdicts = {c["verdict"] for c in out["cases"]}
    assert done.returncode == (3 if "undetermined" in verdicts else 0), done.stderr
    assert not verdicts & {"regression", "slower", "faster"}


def _false_alarms(seeds, cases, launches, launch_cv):
    """How many seeds call any case a regression between two draws of one distribution."""
    hits = 0
    for seed in range(seeds):
        rng = np.random.default_rng(100 + seed)
        draw = lambda: {c: Side.of({"case": c}, np.exp(rng.normal(0, launch_cv, launches)), [])
                        for c in range(cases)}
        hits += bool(compare(draw(), draw(), Threshold(0.05)).regressions)
    return hits


def test_false_regressions_stay_rare_over_seeds():
    # A regression needs significance after BH and the whole interval beyond 5%: with a
    # 5% launch-to-launch spread and 3 launches a side it almost never happens by chance.
    assert _false_alarms(200, 10, 3, 0.05) <= 10


def test_one_launch_a_side_says_so_and_exits_3(db):
    # inconclusive is no pass: the gate could not tell (docs/usage.md, "Exit status")
    rng = np.random.default_rng(3)
    _add_run(db, {8: lambda: _samples(rng, 300)}, rng=rng)
    _add_run(db, {8: lambda: _samples(rng, 300, 0.3 * MEDIAN_S)}, rng=rng)
    done = commscope("compare", "1", "2", "--db", db)
    assert done.returncode == 3, done.stderr
    assert "inconclusive" in done.stdout.splitlines()[2]
    assert "1 inconclusive: one launch a side cannot separate a change from launch noise" \
        in done.stdout


def _levels(*levels):
    """A case's draw: each launch's samples all at the next of `levels` times the median."""
    left = iter(levels)
    return lambda: np.full(50, MEDIAN_S * next(left))


def _suite(xml):
    import junitparser
    read = junitparser.JUnitXml.fromfile(str(xml))
    (suite,) = [read] if isinstance(read, junitparser.TestSuite) else list(read)
    return suite


def test_every_case_undetermined_exits_3_and_fail_on_makes_them_failures(db, tmp_path):
    # B's launches spread 30% about A's level: every interval spans the 5% threshold, so
    # the gate cannot pass them (docs/usage.md, "Exit status")
    _add_run(db, {8: _levels(1.0, 1.002, 0.998), 1024: _levels(1.0, 0.998, 1.002)},
             launches=3)
    _add_run(db, {8: _levels(0.9, 1.2, 1.0), 1024: _levels(1.2, 0.9, 1.0)}, launches=3)
    xml = tmp_path / "compare.xml"
    done, out = _compare_json(db, "1", "2", "--junit", xml)
    assert {c["verdict"] for c in out["cases"]} == {"undetermined"}
    assert done.returncode == 3, done.stderr
    suite = _suite(xml)
    assert all(c.is_skipped for c in suite) and (suite.failures, suite.skipped) == (0, 2)
    done, _ = _compare_json(db, "1", "2", "--junit", xml, "--fail-on", "undetermined")
    assert done.returncode == 1, done.stderr
    suite = _suite(xml)
    assert (suite.failures, suite.skipped) == (2, 0)
    assert all(r.type == "undetermined" and r.message.startswith("undetermined: ")
               for c in suite for r in c.result)


def test_launches_pool_and_unmatched_cases_are_listed(db):
    rng = np.random.default_rng(4)
    store = Store(db)
    sweep = store.add_sweep("s", "s.toml", "", "h")
    store.close()
    for _ in (1, 2):
        _add_run(db, {8: lambda: _samples(rng, 100), 1024: lambda: _samples(rng, 100)},
                 sweep_id=sweep, rng=rng)
    _add_run(db, {8: lambda: _samples(rng, 150), 4096: lambda: _samples(rng, 150)},
             launches=2, rng=rng)
    _add_run(db, {8: lambda: _samples(rng, 150)}, settings={"params": {}, "transport": "tcp"},
             rng=rng)
    done, out = _compare_json(db, f"sweep:{sweep}", "3-4")
    assert done.returncode == (3 if out["cases"][0]["verdict"] == "undetermined" else 0), \
        done.stderr
    assert (out["a_runs"], out["b_runs"]) == ([1, 2], [3, 4])
    (case,) = out["cases"]
    assert (case["bytes"], case["transport"], case["launches_a"], case["launches_b"]) == (
        8, "auto", 2, 2)
    assert [c["bytes"] for c in out["only_a"]] == [1024]
    assert [(c["bytes"], c["transport"]) for c in out["only_b"]] == [(4096, "auto"), (8, "tcp")]
    listing = commscope("compare", "1,2", "3,4", "--all", "--db", db).stdout
    assert "only in B: pingpong standard 8 B np2 transport=tcp" in listing
    assert "3 unmatched (1 only in A, 2 only in B)" in listing


def test_a_collective_timed_in_batches_never_matches_one_timed_per_call(db):
    """A collective stored before per-call timing (no `sample` in its record) measured a
    batch's rate: compare leaves it unmatched and says why, never silently."""
    rng = np.random.default_rng(5)
    cases = {8: lambda: _samples(rng, 100), 1024: lambda: _samples(rng, 100)}
    old = _add_run(db, cases, kernel="allreduce", rng=rng)
    new = _add_run(db, cases, kernel="allreduce", rng=rng)
    _add_run(db, cases, kernel="allreduce", rng=rng)
    con = sqlite3.connect(db)
    con.execute("UPDATE cases SET extra = json_set(COALESCE(extra, '{}'), '$.sample', 'call') "
                "WHERE launch_id IN (SELECT id FROM launches WHERE run_id != ?)", (old,))
    con.commit()
    con.close()
    done = commscope("compare", old, new, "--db", db)
    line = one_line_error(done)
    assert "timed as batches of back-to-back calls on one side" in line
    assert "measure the older side again" in line
    listing = commscope("compare", f"{old},{new + 1}", new, "--all", "--db", db).stdout
    assert "2 unmatched: the same case timed as batches" in listing, listing
    assert "only in A: allreduce 8 B np2\n" in listing and "8 B np2 per-call" in listing


@pytest.mark.parametrize("a, b, extra, says", [
    ("1", "9", [], "no run 9"),
    ("1", "two", [], "B two: 'two' is not a run"),
    ("3-1", "2", [], "A 3-1: range 3-1 ends below its start"),
    ("sweep:5", "2", [], "A sweep:5: no runs of sweep 5"),
    ("1", "1", [], "run 1 is in both A and B"),
    ("1", "3", [], "no case of A (1) matches one of B (3)"),
    ("1", "2", ["--threshold", "5x"],
     "--threshold 5x: give a percentage above 0 and below 100 (5%) or a fraction"),
    ("1", "2", ["--threshold", "5"], "--threshold 5: give a percentage"),
    ("1", "2", ["--junit", "/no/such/dir/c.xml"], "--junit /no/such/dir/c.xml: no such directory"),
])
def test_bad_input_is_one_line(db, a, b, extra, says):
    rng = np.random.default_rng(6)
    _add_run(db, {8: lambda: _samples(rng, 20)}, rng=rng)
    _add_run(db, {8: lambda: _samples(rng, 20)}, rng=rng)
    _add_run(db, {8: lambda: _samples(rng, 20)}, kernel="pingping", rng=rng)
    assert says in one_line_error(commscope("compare", a, b, *extra, "--db", db))


def test_missing_db_is_one_line(tmp_path):
    assert "no such results file" in one_line_error(
        commscope("compare", "1", "2", "--db", tmp_path / "none.db"))


@pytest.mark.mpi
def test_two_real_pingpong_runs(db):
    for _ in range(2):
        done = commscope("run", "pingpong", "--sizes", "8,1K", "--db", db)
        assert done.returncode == 0, done.stderr
    done = commscope("compare", "1", "2", "--db", db)
    assert done.returncode in (0, 1, 3), done.stderr
    assert "Traceback" not in done.stderr
