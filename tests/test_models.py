"""Models: Hockney and segmented fits recover known parameters; predictions follow the formulas."""

import json

import numpy as np
import pytest

from conftest import commscope, one_line_error
from commscope.models import collectives as coll
from commscope.models.groups import fit_group, group_cases
from commscope.models.hockney import Line
from commscope.models.resample import bootstrap_medians
from commscope.store.store import Store

KiB = 1024
SIZES = [0] + [2 ** k for k in range(23)]  # 0:4MiB
SAMPLES = 201
SETTINGS = {"params": {}, "sync": "barrier", "map_by": None, "bind_to": None, "transport": "auto"}


def line(alpha_s, bandwidth_Bps):
    return lambda n: alpha_s + n / bandwidth_Bps


def store_run(db, kernel, latency_of, sizes=SIZES, ranks=2, seed=0, params=None,
              command=None):
    """A run of synthetic cases: latency_of(bytes) with 2% normal noise, stored as the native
    records would be (pingpong's raw sample is the round trip, twice the latency)."""
    rng = np.random.default_rng(seed)
    store = Store(db)
    settings = dict(SETTINGS, params=params or {})
    run = store.begin_run(command or ["commscope", "run", kernel], kernel, ranks, False, settings)
    launch = store.begin_launch(run, 1, False)
    per_latency = 2 if kernel == "pingpong" else 1
    for size in sizes:
        noise = 1 + 0.02 * rng.standard_normal(SAMPLES)
        samples = (per_latency * latency_of(size) * noise).tolist()
        store.add_case(launch, {"kernel": kernel, "send_mode": "standard" if kernel == "pingpong"
                             else None, "bytes": size, "ranks": ranks, "window": None, "batch": 1,
                             "warmup_iterations": 0, "validated": False, "timed_by": "origin",
                             "samples_s": samples, "rank_samples_s": [samples] * ranks})
    store.finish_run(run, "complete")
    store.close()
    return run


def fit_run(db, run):
    store = Store(db)
    (group,) = group_cases(store.cases(run))
    return fit_group(group)


def within(value, ci):
    return ci[0] <= value <= ci[1]


def test_bootstrap_medians_have_the_distribution_of_resampled_medians():
    rng = np.random.default_rng(3)
    for n in (7, 10):  # odd: one order statistic; even: the mean of two
        x = np.sort(rng.standard_normal(n))
        exact = bootstrap_medians(x, 100_000, rng)
        brute = np.median(x[rng.integers(0, n, (100_000, n))], axis=1)
        assert np.percentile(exact, [5, 25, 50, 75, 95]) == pytest.approx(
            np.percentile(brute, [5, 25, 50, 75, 95]), abs=0.02)
        assert exact.std() == pytest.approx(brute.std(), rel=0.02)


def test_hockney_recovers_alpha_and_bandwidth_within_their_cis(db):
    alpha, bandwidth = 2e-6, 5e9
    run = store_run(db, "pingpong", line(alpha, bandwidth))
    f = fit_run(db, run).fit
    single = f.single
    assert within(alpha, single.alpha_ci_s) and within(bandwidth, single.bandwidth_ci_Bps)
    assert single.line.alpha_s == pytest.approx(alpha, rel=0.01)
    assert single.line.n_half_bytes == pytest.approx(alpha * bandwidth, rel=0.02)
    assert len(f.segments) == 1 and f.breakpoints == []  # a straight line is not split


def test_breakpoint_segments_and_their_cis(db):
    eager, rendezvous = (1e-6, 1e9), (20e-6, 4e9)
    run = store_run(db, "pingping", lambda n: line(*(eager if n < 64 * KiB else rendezvous))(n))
    g = fit_run(db, run)
    f = g.fit
    assert len(f.segments) == 2, f.bic
    (bp,) = f.breakpoints
    assert bp.bytes == 64 * KiB and within(64 * KiB, bp.ci_bytes)
    assert (f.segments[0].to_bytes, f.segments[1].from_bytes) == (32 * KiB, 64 * KiB)
    for segment, (alpha, bandwidth) in zip(f.segments, (eager, rendezvous)):
        assert within(alpha, segment.fit.alpha_ci_s), segment
        assert within(bandwidth, segment.fit.bandwidth_ci_Bps), segment
    assert f.time_s(32 * KiB) == pytest.approx(line(*eager)(32 * KiB), rel=0.01)
    assert f.time_s(1 << 20) == pytest.approx(line(*rendezvous)(1 << 20), rel=0.01)
    assert g.rel_rms_residual_segmented < 0.01 < g.rel_rms_residual


def test_fit_cli_json_is_reproducible_and_names_its_fields(db):
    store_run(db, "pingpong", line(2e-6, 5e9))
    first = commscope("fit", "--json", "--db", db)
    assert first.returncode == 0, first.stderr
    (g,) = json.loads(first.stdout)["fits"]
    assert g["kernel"] == "pingpong" and g["runs"] == [1] and g["sizes"] == 24
    assert within(2e-6, g["alpha_ci_s"]) and within(5e3, g["bandwidth_ci_MBps"])
    assert g["segments"][0]["from_bytes"] == 0 and g["segments"][0]["to_bytes"] == 4 << 20
    assert g["breakpoints"] == [] and g["resamples"] == 1000
    assert commscope("fit", "--json", "--db", db).stdout == first.stdout  # fixed seed
    table = commscope("fit", "--db", db).stdout
    assert f"{g['alpha_s'] * 1e6:.3f} ({g['alpha_ci_s'][0] * 1e6:.3f}-" in table
    assert "MB = 10^6 bytes" in table


def test_default_is_the_latest_commands_runs(db):
    store_run(db, "pingping", line(1e-6, 1e9))
    for ranks in (2, 4):  # one `commscope run --np 2,4`: two runs, one command line
        store_run(db, "pingping", line(3e-6, 2e9), ranks=ranks, command=["run", "--np", "2,4"])
    out = json.loads(commscope("fit", "--json", "--db", db).stdout)["fits"]
    assert [(g["runs"], g["ranks"]) for g in out] == [([2], 2), ([3], 4)]


def test_too_few_sizes(db):
    store_run(db, "pingpong", line(1e-6, 1e9), sizes=[8, 1024])
    assert "at least 3" in one_line_error(commscope("fit", "--db", db))
    store_run(db, "pingpong", line(1e-6, 1e9), command=["other"])
    done = commscope("fit", "1", "2", "--db", db)  # one configuration: its sizes are pooled
    assert done.returncode == 0 and "(run 1, 2): 24 sizes" in done.stdout
    assert "--kernel bw" in one_line_error(commscope("fit", "1", "--kernel", "bw", "--db", db))


def test_too_few_sizes_in_one_group_is_a_note(db):
    store_run(db, "pingpong", line(1e-6, 1e9), sizes=[8, 1024])
    store_run(db, "pingping", line(1e-6, 1e9))
    done = commscope("fit", "1", "2", "--db", db)
    assert done.returncode == 0, done.stderr
    assert "no fit: 2 distinct sizes, a fit needs at least 3" in done.stdout
    assert "24 sizes" in done.stdout


# Hand-computed from the closed forms of Thakur, Rabenseifner & Gropp 2005 with
# alpha = 1 us, beta = 1 ns/B (B = 1 GB/s).
T = Line(1e-6, 1e-9).time_s


@pytest.mark.parametrize("model, ranks, nbytes, gamma, expected_s", [
    (coll.ring_serial, 4, 1000, 0, 2 * 4 * (1e-6 + 1e-6)),
    (coll.ring_concurrent, 4, 1000, 0, 4 * (1e-6 + 2e-6)),
    (coll.bcast_binomial, 8, 1000, 0, 3 * 2e-6),
    (coll.bcast_binomial, 5, 1000, 0, 3 * 2e-6),  # ceil(lg 5) rounds
    (coll.scatter_binomial, 8, 100, 0, 3e-6 + 7 * 100e-9),
    (coll.gather_binomial, 8, 100, 0, 3e-6 + 7 * 100e-9),
    (coll.reduce_binomial, 4, 1000, 1e-10, 2 * (2e-6 + 1e-7)),
    (coll.allreduce_recursive_doubling, 8, 1000, 0, 3 * 2e-6),
    (coll.allreduce_recursive_doubling, 6, 1000, 0, 2 * 2e-6 + 2 * 2e-6),  # 2 extra steps
    (coll.allreduce_rabenseifner, 8, 8000, 1e-10, 6e-6 + 2 * 7 / 8 * 8e-6 + 7 / 8 * 8e-7),
    (coll.allreduce_ring, 4, 4000, 0, 6e-6 + 2 * 3 / 4 * 4e-6),
    (coll.bcast_linear, 5, 1000, 0, 4 * 2e-6),
    (coll.reduce_linear, 5, 1000, 1e-10, 4 * (2e-6 + 1e-7)),
    (coll.allreduce_reduce_bcast, 8, 1000, 1e-10, 3 * (2e-6 + 1e-7) + 3 * 2e-6),
    # scatter: 3 alpha + 7/8 n beta; allgather: 7 (alpha + n/8 beta)
    (coll.bcast_scatter_allgather, 8, 8000, 0, 3e-6 + 7e-6 + 7e-6 + 7e-6),
    (coll.reduce_rabenseifner, 8, 8000, 1e-10, 6e-6 + 2 * 7 / 8 * 8e-6 + 7 / 8 * 8e-7),
    # P = 6: 2 extra ranks hand in once (alpha + n beta + n gamma), then P = 4
    (coll.reduce_rabenseifner, 6, 8000, 1e-10,
     (9e-6 + 8e-7) + 4e-6 + 2 * 3 / 4 * 8e-6 + 3 / 4 * 8e-7),
])
def test_predictions_equal_the_closed_forms(model, ranks, nbytes, gamma, expected_s):
    assert model(T, ranks, nbytes, gamma) == pytest.approx(expected_s, rel=1e-12)


def test_predict_against_a_stored_ring(db):
    alpha, bandwidth = 1e-6, 2e9
    store_run(db, "pingping", line(alpha, bandwidth))
    for ranks in (2, 4):  # measured: exactly the serial model plus 10%
        store_run(db, "ring", lambda n: 1.1 * 2 * ranks * (alpha + n / bandwidth), sizes=[8, 4096],
                  ranks=ranks, params={"pattern": "ring"}, seed=ranks)
    done = commscope("predict", "ring", "--from", 1, "--compare", 2, 3, "--json", "--db", db)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["predictions"]
    assert {(r["ranks"], r["bytes"]) for r in rows} == {(2, 8), (2, 4096), (4, 8), (4, 4096)}
    for r in rows:
        if r["algorithm"] == "serial":
            assert r["rel_error"] == pytest.approx(1 / 1.1 - 1, abs=0.01)
            assert r["predicted_s"] == pytest.approx(
                2 * r["ranks"] * (alpha + r["bytes"] / bandwidth), rel=0.01)
        assert r["rel_error"] == pytest.approx((r["predicted_s"] - r["measured_s"])
                                               / r["measured_s"])
    grid = commscope("predict", "allreduce", "--from", 1, "--np", "2,3", "--sizes", "8,1K",
                     "--db", db)
    assert grid.returncode == 0, grid.stderr
    assert grid.stdout.count("rabenseifner") == 4


def test_predict_user_errors(db):
    store_run(db, "pingpong", line(1e-6, 1e9))
    assert "--np and --sizes" in one_line_error(
        commscope("predict", "bcast", "--from", 1, "--db", db))
    assert "--compare 1: no bcast cases" in one_line_error(
        commscope("predict", "bcast", "--from", 1, "--compare", 1, "--db", db))
    assert "no run 9" in one_line_error(
        commscope("predict", "ring", "--from", 9, "--np", 2, "--sizes", 8, "--db", db))


@pytest.mark.mpi
def test_real_pingpong_fit_and_ring_prediction(db):
    done = commscope("run", "pingpong", "--sizes", "0:1MiB", "--min-time", "0.02", "--db", db)
    assert done.returncode == 0, done.stderr
    fit = commscope("fit", "--json", "--db", db)
    assert fit.returncode == 0, fit.stderr
    (g,) = json.loads(fit.stdout)["fits"]
    assert 1e-8 < g["alpha_s"] < 1e-4  # 10 ns .. 100 us of start-up
    assert g["bandwidth_MBps"] and 100 < g["bandwidth_MBps"] < 1e6, g  # 100 MB/s .. 1 TB/s
    assert g["alpha_ci_s"][0] <= g["alpha_s"] <= g["alpha_ci_s"][1]
    ring = commscope("run", "ring", "--np", "2,3", "--sizes", "8,1KiB", "--min-time", "0.05",
                     "--db", db)
    assert ring.returncode == 0, ring.stderr
    predict = commscope("predict", "ring", "--from", 1, "--compare", 2, 3, "--db", db)
    assert predict.returncode == 0, predict.stderr
    rows = [line.split() for line in predict.stdout.splitlines() if line.startswith("ring ")]
    assert {(r[2], r[3] + r[4]) for r in rows} == {("2", "8B"), ("2", "1KiB"), ("3", "8B"),
                                                    ("3", "1KiB")}
    assert all(r[-1].endswith("%") for r in rows)


def test_the_constrained_line_is_the_bounded_least_squares_optimum():
    """nonnegative_line against scipy's bounded least squares, on data whose free line has
    a negative intercept, a negative slope, or neither, with the slope's floor at 0, below
    the data's slope and above it (times faster than that floor allows)."""
    from scipy.optimize import lsq_linear

    from commscope.models.hockney import nonnegative_line
    rng = np.random.default_rng(16)
    x = np.array([1.0, 2, 4, 8, 16, 32])
    for y in ([0.1, 1.9, 4.2, 7.8, 16.3, 31.5], [5.0, 4.8, 4.9, 4.6, 4.7, 4.5],
              [1.0, 1.2, 1.4, 1.8, 2.6, 4.2], *rng.uniform(0.5, 2.0, (20, 6))):
        y, w = np.asarray(y), rng.uniform(0.5, 2.0, 6)
        sums = [np.sum(w * v) for v in (np.ones(6), x, x * x, y, x * y, y * y)]
        for floor in (0.0, 0.05, 2.0):
            alpha, slope, rss = nonnegative_line(*sums, min_slope=floor)
            root = np.sqrt(w)
            best = lsq_linear(np.column_stack([root, root * x]), root * y,
                              bounds=([0, floor], [np.inf, np.inf]))
            assert (alpha, slope) == pytest.approx(tuple(best.x), abs=1e-9)
            assert rss == pytest.approx(2 * best.cost, abs=1e-9)
            assert alpha >= 0 and slope >= floor


def synthetic_fit(latency_of, rng, sizes=SIZES, noise=0.02, samples=SAMPLES, resamples=200):
    """A segmented fit of medians with `noise` relative error per sample, as fit_group
    weights them (1/se^2), with bootstrap columns drawn the same way."""
    from commscope.models import segmented
    t = np.array([latency_of(n) for n in sizes])
    se = noise * t / np.sqrt(samples)
    y = t[:, None] * (1 + noise / np.sqrt(samples) * rng.standard_normal((t.size, resamples + 1)))
    return segmented.fit(np.array(sizes, float), 1 / se ** 2, y, max_segments=6)


def test_every_segment_is_physical_or_says_its_bandwidth_is_unknown():
    """Three protocols, the last starting at alpha = 0 (its free line often reads a negative
    alpha) and a flat one (slope 0: no bandwidth to tell): over 100 noise draws, no
    segment has alpha < 0, and every bandwidth is finite and positive or not identifiable."""
    def protocols(n):
        if n < 4 * KiB:
            return 0.3e-6 + n / 2e9
        if n < 64 * KiB:
            return 4e-6  # a flat stretch: a pipeline that hides the bytes
        return n / 12e9
    rng = np.random.default_rng(17)
    unknown = 0
    for _ in range(100):
        f = synthetic_fit(protocols, rng)
        for s in [f.single, *(seg.fit for seg in f.segments)]:
            assert s.line.alpha_s >= 0 and s.alpha_ci_s[0] >= 0
            if s.identifiable:
                assert 0 < s.line.bandwidth_Bps < np.inf
            else:
                unknown += 1
        assert len(f.segments) >= 3
    assert unknown >= 100  # the flat stretch, every time


def test_noise_alone_is_not_split():
    """A straight line under 2% noise per sample: the fit finds no switch in at least 95%
    of 200 draws (the BIC's breakpoint count, models/segmented.py)."""
    rng = np.random.default_rng(18)
    split = sum(len(synthetic_fit(line(2e-6, 5e9), rng, resamples=0).segments) > 1
                for _ in range(200))
    print(f"{split} of 200 straight lines split")
    assert split <= 10


def test_an_interval_that_reaches_the_copy_bound_ends_there():
    """A line at 9.5 GB/s beside copies of 10 GB/s, timed noisily enough that the slope's
    resamples reach the copy's slope: B stays 9.5 GB/s, identifiable, its interval ends at the
    copy's rate. With no copy timed, an interval that reaches a slope of 0 leaves B
    unbounded: not identifiable."""
    from commscope.models import segmented
    rng = np.random.default_rng(23)
    x = np.array(SIZES[1:], float)
    copy = 0.1e-6 + x / 10e9
    t = 0.5e-6 + x / 9.5e9
    y = t[:, None] * (1 + 0.3 * rng.standard_normal((t.size, 201)))
    y[:, 0] = t
    w = 1 / (0.3 * t) ** 2
    held = segmented.fit(x, w, y, max_segments=1, copy=copy).single
    assert held.identifiable and not held.at_bound
    assert held.line.bandwidth_Bps == pytest.approx(9.5e9, rel=1e-6)
    assert held.bandwidth_ci_Bps[1] == pytest.approx(10e9, rel=1e-6)
    flat = 5e-6 + x / 1e13  # 0.4 us of 4 MiB's 5.4 us moves bytes: 30% noise hides it
    y = flat[:, None] * (1 + 0.3 * rng.standard_normal((t.size, 201)))
    y[:, 0] = flat
    assert not segmented.fit(x, 1 / (0.3 * flat) ** 2, y, max_segments=1).single.identifiable


def test_no_line_moves_bytes_faster_than_one_copy():
    """Copy times of 10 GB/s with a 0.1 us call: a protocol at 6 GB/s keeps its B, unchanged
    by the bound; one at 20 GB/s (faster than one copy could move its bytes) has its line
    held at the copy's slope and its B reported not identifiable, at the bound."""
    from commscope.models import segmented
    rng = np.random.default_rng(19)
    x = np.array(SIZES[1:], float)
    copy = 0.1e-6 + x / 10e9
    for bandwidth, bounded in ((6e9, False), (20e9, True)):
        t = 0.5e-6 + x / bandwidth
        y = t[:, None] * (1 + 0.002 * rng.standard_normal((t.size, 201)))
        w = 1 / (0.002 * t) ** 2
        free = segmented.fit(x, w, y, max_segments=1).single
        held = segmented.fit(x, w, y, max_segments=1, copy=copy).single
        assert held.bound_Bps == pytest.approx(10e9, rel=1e-6)
        assert held.at_bound is bounded and held.identifiable is not bounded
        assert free.identifiable and free.line.bandwidth_Bps == pytest.approx(bandwidth, rel=0.02)
        if bounded:
            assert held.line.bandwidth_Bps == pytest.approx(10e9, rel=1e-6)
        else:
            assert (held.line.alpha_s, held.line.inverse_bandwidth_s_per_byte) == \
                pytest.approx((free.line.alpha_s, free.line.inverse_bandwidth_s_per_byte),
                              rel=1e-9)


def store_command(db, latency_of, launch_factors, seed):
    """One command of several launches, launch k slower by launch_factors[k] at every
    size, each sample with 2% noise."""
    rng = np.random.default_rng(seed)
    store = Store(db)
    settings = dict(SETTINGS, launches=len(launch_factors))
    run = store.begin_run(["commscope", "run", "pingpong"], "pingpong", 2, False, settings)
    for number, factor in enumerate(launch_factors, 1):
        launch = store.begin_launch(run, number, False)
        for size in SIZES:
            samples = (2 * latency_of(size) * factor
                       * (1 + 0.02 * rng.standard_normal(SAMPLES))).tolist()
            store.add_case(launch, {"kernel": "pingpong", "send_mode": "standard",
                                    "bytes": size, "ranks": 2, "window": None, "batch": 1,
                                    "warmup_iterations": 0, "validated": False,
                                    "timed_by": "origin", "samples_s": samples,
                                    "rank_samples_s": [samples] * 2})
    store.finish_run(run, "complete")
    store.close()
    return run


def test_fit_intervals_carry_the_variation_between_launches_and_commands(tmp_path):
    """Commands and their 3 launches each slower or faster by 5% (log sd) at every size,
    as the statistics' model has them: the launch-aware intervals of alpha and B hold the
    true values for most commands; the samples' bootstrap alone, far fewer."""
    truth = line(2e-6, 5e9)
    rng = np.random.default_rng(20)
    held = {True: [0, 0], False: [0, 0]}
    for c in range(20):
        db = tmp_path / f"{c}.db"
        command = np.exp(0.05 * rng.standard_normal())
        run = store_command(db, truth, command * np.exp(0.05 * rng.standard_normal(3)), c)
        store = Store(db)
        (group,) = group_cases(store.cases(run))
        for aware in (True, False):
            if aware:
                f = fit_group(group, resamples=400)
            else:
                import commscope.models.groups as groups_module
                with pytest.MonkeyPatch.context() as mp:
                    mp.setattr(groups_module, "launch_shocks", lambda *a: None)
                    f = fit_group(group, resamples=400)
            assert f.ci_basis == ("launches" if aware else "one launch")
            single = f.fit.single
            held[aware][0] += within(2e-6, single.alpha_ci_s)
            held[aware][1] += within(5e9, single.bandwidth_ci_Bps)
    print("launch-aware", held[True], "within the launches", held[False], "of 20")
    assert min(held[True]) >= 16 and max(held[False]) <= 6


def test_a_history_of_commands_sets_the_command_shift(tmp_path):
    """Where the results file's history says commands agree (between-command variance 0),
    the replicates shift only by launches: a narrower spread than the assumption that
    commands differ as much as launches; a history of commands 8x as far apart widens it."""
    from commscope.models.resample import launch_shocks
    from commscope.stats.replication import History
    rng = np.random.default_rng(21)
    run = store_command(tmp_path / "h.db", line(2e-6, 5e9),
                        np.exp(0.05 * rng.standard_normal(3)), 0)
    cases = Store(tmp_path / "h.db").cases(run)

    def spread(history):
        shocks = launch_shocks(cases, 4000, np.random.default_rng(22), history)
        shift = shocks.mean(axis=0)  # the run's common shift per replicate
        return float(np.subtract(*np.percentile(shift, [97.5, 2.5])))
    assumed = spread(None)
    agree = spread(lambda found: History(0.0025, 20, 30, 0.0, 20, 10))
    apart = spread(lambda found: History(0.0025, 20, 30, 64 * 0.0025, 20, 10))
    print(f"common shift 95% width: assumed {assumed:.3f}, agree {agree:.3f}, apart {apart:.3f}")
    assert agree < 0.8 * assumed and apart > 1.5 * assumed


def test_a_breakpoint_is_a_switch_or_a_continuous_change():
    """A protocol switch (the time jumps 2.7 us at 16 KiB) is typed a switch; a bend with
    no jump (B falls from 10 to 4 GB/s past 256 KiB, as out of a cache) is typed
    continuous, its lines meeting at the bend: in every one of 40 noise draws each."""
    rng = np.random.default_rng(23)

    def switch(n):
        return 0.3e-6 + n / 5e9 if n < 16 * KiB else 3e-6 + n / 8e9

    def bend(n):
        return 1e-6 + n / 10e9 + max(n - 256 * KiB, 0) * (1 / 4e9 - 1 / 10e9)
    for _ in range(40):
        at = {b.bytes: b for b in synthetic_fit(switch, rng, resamples=0).breakpoints}
        assert at[16 * KiB].kind == "switch" and at[16 * KiB].meets_bytes is None
        (b,) = synthetic_fit(bend, rng, resamples=0).breakpoints
        assert b.kind == "continuous" and b.meets_bytes == pytest.approx(256 * KiB, rel=0.02)


def synthetic_rates(alpha_s, process_Bps, node_Bps, rng):
    from commscope.models.maxrate import Point
    return [Point(k, n, (alpha_s + k * n / min(node_Bps, k * process_Bps))
                  * (1 + 0.01 * rng.standard_normal()))
            for k in (1, 2, 3, 4) for n in (64 * KiB, 256 * KiB, 1 << 20, 4 << 20)]


def test_the_max_rate_model_recovers_both_limits():
    """alpha 2 us, 5 GB/s a process, 12 GB/s the node: k = 1, 2 are process-limited, 3 and
    4 node-limited, 1% noise; both rates come back within 3%. With a node limit below one
    process's rate, the process rate is only bounded below."""
    from commscope.models.maxrate import fit_points
    rng = np.random.default_rng(24)
    for _ in range(20):
        m = fit_points(synthetic_rates(2e-6, 5e9, 12e9, rng))
        assert m.rate_process_Bps == pytest.approx(5e9, rel=0.03)
        assert m.rate_node_Bps == pytest.approx(12e9, rel=0.03)
        assert m.alpha_s >= 0
        slow = fit_points(synthetic_rates(2e-6, 5e9, 3e9, rng))
        assert slow.rate_process_Bps is None and slow.node_at_least_Bps is None
        assert slow.rate_node_Bps == pytest.approx(3e9, rel=0.03)
        assert slow.process_at_least_Bps == pytest.approx(slow.rate_node_Bps)


def test_a_gap_longer_than_its_round_trip_is_withheld_from_loggp():
    """g(m) above RTT(m) (a stalled gap phase: 2178 us beside a 21.7 us round trip) is no
    message's gap: withheld at its size, left out of G's line, never a constant."""
    from types import SimpleNamespace

    from commscope.models.loggp import fit_loggp
    from commscope.views.message_models import loggp_parts

    def case(nbytes, gap_s):  # phases: one rank's samples, W = 8 messages a gap
        phases = {"o_s": [[1e-6] * 5], "ack": [[2e-6] * 5], "o_r": [[1e-6] * 5],
                  "gap": [[gap_s] * 5]}
        return SimpleNamespace(bytes=nbytes, window=8, extra={"phase_samples_s": phases})
    kept = [case(0, 3e-6 + 8 * 0.5e-6), case(4096, 3e-6 + 8 * 1e-6),
            case(262144, 3e-6 + 8 * 20e-6)]
    model = fit_loggp(kept + [case(65536, 3e-6 + 8 * 2178e-6)])
    g = {p.bytes: p.g for p in model.parts}
    assert g[65536] is None and g[4096] == pytest.approx(1e-6)
    assert model.G_s_per_byte == pytest.approx(fit_loggp(kept).G_s_per_byte)  # not in G
    assert "withheld" in loggp_parts(model).text()


def test_a_bandwidth_above_the_copy_ceiling_is_withheld_from_the_probe():
    """probe protocols' line B: 3,542,744 MB/s on a loaded machine is above any copy
    ceiling measured beside it, so it is withheld and the line says why."""
    from commscope.measure.probe import Probe, Regime, bounded
    from commscope.views.probe import withheld

    fast = Regime(8192, 65536, 1e-6, 1 / 3.5e12)
    result = bounded(Probe([fast, Regime(65536, 1 << 20, 2e-6, 1 / 8e9)], []), 20e9)
    assert result.regimes[0].bandwidth_Bps is None
    assert result.regimes[0].line_Bps == pytest.approx(3.5e12)
    assert result.regimes[1].bandwidth_Bps == pytest.approx(8e9)
    (line,) = withheld(result)
    assert "3,500,000 MB/s is above the copy ceiling of 20,000 MB/s" in line
