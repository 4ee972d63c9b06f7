"""tests/noisesim.py's noise models make what their docstring says (shares, magnitudes,
shapes), the recorded corpus (bench/data/noise.json) is well formed, and the benches'
rows under that noise print (at their smoke size). No MPI."""

from __future__ import annotations

import math

import numpy as np
import pytest
from noisesim import (CORPUS, MIXTURE_SHARE, STALL_SHARE, corpus_effects, deviations,
                      launch_effects, load)
from test_bench import NUMBER, bench, lines_like

COMMANDS, LAUNCHES, CASES = 400, 10, 6


def effects(kind: str, **kw) -> np.ndarray:
    return launch_effects(np.random.default_rng(3), kind, COMMANDS, LAUNCHES, CASES, **kw)


@pytest.mark.parametrize("kind", ["lognormal", "commands", "mixture", "stalls",
                                  "corpus:quiet", "corpus:busy:pingpong"])
def test_every_kind_has_the_shape_asked_for(kind):
    e = launch_effects(np.random.default_rng(0), kind, 3, 7, 11)
    assert e.shape == (3, 7, 11) and np.isfinite(e).all()


def test_lognormal_has_its_three_levels():
    """tau 5%, common 2%, commands as launches: the launch spread within a command is
    sqrt(tau^2 + common^2); commands' means spread as much again."""
    e = effects("lognormal", tau=0.05, common=0.02)
    within = math.sqrt(e.var(axis=1, ddof=1).mean())
    assert within == pytest.approx(math.hypot(0.05, 0.02), rel=0.05)
    between = e.mean(axis=1).std()  # command effect plus the mean of 10 launches
    assert between == pytest.approx(math.sqrt(0.05 ** 2 + 0.02 ** 2) * math.sqrt(1 + 0.1),
                                     rel=0.08)
    # the common launch effect: two cases' launch deviations correlate by common^2/launch^2
    d = e - e.mean(axis=1, keepdims=True)
    r = np.corrcoef(d[..., 0].ravel(), d[..., 1].ravel())[0, 1]
    assert r == pytest.approx(0.02 ** 2 / (0.05 ** 2 + 0.02 ** 2), abs=0.05)


def test_commands_differ_twice_their_launches():
    e = effects("commands", tau=0.05, common=0.0)
    assert math.sqrt(e.var(axis=1, ddof=1).mean()) == pytest.approx(0.05, rel=0.05)
    assert e.mean(axis=1).std() == pytest.approx(0.05 * math.sqrt(4 + 0.1), rel=0.08)


def test_mixture_puts_a_fifth_of_launches_2_to_4x_slower_at_every_case():
    # the same draws as lognormal's, then the state's: the difference is the state alone
    extra = effects("mixture", tau=0.01) - effects("lognormal", tau=0.01)
    other = extra[..., 0] > 0
    assert other.mean() == pytest.approx(MIXTURE_SHARE, abs=0.02)
    # the same factor at every case of the launch, between 2 and 4
    assert np.allclose(extra, extra[..., :1])
    factors = np.exp(extra[..., 0][other])
    assert factors.min() >= 2.0 and factors.max() <= 4.0
    assert np.median(factors) == pytest.approx(math.sqrt(8), rel=0.05)  # log-uniform


def test_stalls_are_rare_and_huge_half_at_every_case_half_at_one():
    extra = effects("stalls", tau=0.01) - effects("lognormal", tau=0.01)
    stalled = (extra > 0).any(axis=2)
    assert stalled.mean() == pytest.approx(STALL_SHARE, abs=0.01)
    factors = np.exp(extra.max(axis=2)[stalled])
    assert factors.min() >= 1e2 and factors.max() <= 1e5
    assert factors.max() > 1e4 and factors.min() < 1e3  # spread over the three decades
    hit = (extra > 0).sum(axis=2)[stalled]
    assert set(hit) == {1, CASES}
    assert (hit == CASES).mean() == pytest.approx(0.5, abs=0.12)


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="noise kind 'gamma'"):
        launch_effects(np.random.default_rng(0), "gamma", 1, 1, 1)
    for missing in ("moon", "quiet:ring"):
        with pytest.raises(ValueError, match=f"no condition '{missing}'"):
            launch_effects(np.random.default_rng(0), f"corpus:{missing}", 1, 1, 1)


@pytest.mark.parametrize("path, commands", [(CORPUS, 5), (CORPUS.with_name(
    "noise-2026-12-02.json"), 20)], ids=["2026-11-28", "2026-12-02"])
def test_the_corpus_is_well_formed(path, commands):
    corpus = load(path)
    assert path.stat().st_size < 300_000
    assert {"date", "machine", "how", "descriptions", "conditions"} <= set(corpus)
    assert corpus["machine"]["cores"] >= 1
    assert {"quiet", "busy", "second_job"} <= set(corpus["conditions"])
    for condition, kernels in corpus["conditions"].items():
        assert condition in corpus["descriptions"]
        assert set(kernels) == {"allreduce", "pingpong"}, condition
        for kernel, recorded in kernels.items():
            sizes = recorded["sizes"]
            assert sizes == sorted(sizes) and len(sizes) == 4, (condition, kernel)
            assert len(recorded["commands"]) >= commands
            assert len(recorded["wall_s"]) == len(recorded["commands"])
            for command in recorded["commands"]:
                assert len(command) == corpus["how"]["launches"]
                for launch in command:
                    assert len(launch) == len(sizes)
                    assert all(m is None or 1e-8 < m < 10 for m in launch)


def test_corpus_resampling_keeps_whole_launches_of_one_command():
    """Every output launch is a recorded launch of one recorded command, whole; within
    the recorded count, a command's launches are not repeated."""
    pool = deviations("quiet")["allreduce"]
    recorded = {tuple(np.round(row, 12)) for run in pool for row in run}
    e = corpus_effects(np.random.default_rng(1), "quiet", 50, 5, 4)  # allreduce's block
    for command in e:
        rows = [tuple(np.round(row, 12)) for row in command]
        assert set(rows) <= recorded
        assert len(set(rows)) == 5
        home = [i for i, run in enumerate(pool)
                if set(rows) <= {tuple(np.round(r, 12)) for r in run}]
        assert home, "launches of one command came from different commands"
    # each case's typical deviation is 0: the median over the condition
    assert np.median(np.concatenate(pool), axis=0) == pytest.approx(0, abs=0.02)


def test_stitched_commands_run_end_to_end_in_their_recorded_order():
    """stitched: an output command's 20 launches are 4 recorded commands of 5, each whole
    and in its recorded order, no command twice before every one was drawn."""
    pool = deviations("quiet")["allreduce"]
    e = launch_effects(np.random.default_rng(3), "stitched:quiet", 6, 20, 4)
    for command in e:
        homes = []
        for start in range(0, 20, 5):
            (home,) = [i for i, run in enumerate(pool)
                       if np.allclose(command[start:start + 5], run)]
            homes.append(home)
        assert len(set(homes)) == 4, homes


def test_corpus_blocks_take_the_kernels_in_turn():
    """Cases 0-3 are allreduce's sizes, 4-7 pingpong's, 8-9 allreduce's first two; a
    kernel named alone fills every block."""
    kernels = deviations("quiet")
    e = corpus_effects(np.random.default_rng(2), "quiet", 20, 12, 10)
    assert e.shape == (20, 12, 10) and np.isfinite(e).all()
    for block, kernel in ((slice(0, 4), "allreduce"), (slice(4, 8), "pingpong"),
                          (slice(8, 10), "allreduce")):
        width = block.stop - block.start
        rows = {tuple(np.round(r[:width], 12)) for run in kernels[kernel] for r in run}
        assert {tuple(np.round(r, 12)) for r in e[:, :, block].reshape(-1, width)} <= rows
    alone = corpus_effects(np.random.default_rng(2), "quiet:pingpong", 5, 5, 8)
    rows = {tuple(np.round(r, 12)) for run in kernels["pingpong"] for r in run}
    assert {tuple(np.round(r, 12)) for r in alone[:, :, 4:].reshape(-1, 4)} <= rows


def test_coverage_rows_under_noise():
    out = bench("coverage.py", "--smoke", "--noise", "mixture,stalls,corpus:quiet:pingpong")
    percent = rf" +{NUMBER}%"
    rows = lines_like(out, rf"(mixture|stalls|corpus:quiet:pingpong) +\S.*? +\d+ +\d+"
                           rf"(?:{percent}){{3}} +{NUMBER}{percent}")
    assert len(rows) == 3 * 3, out


def test_verdicts_rows_under_noise():
    out = bench("verdicts.py", "--smoke", "--noise", "stalls,corpus:busy")
    rate = r"(?:0|1)\.\d{3}"
    # per command pair and per bundle, at 1.00 and at the threshold; power, coverage
    assert len(lines_like(out, r"(stalls|corpus:busy) +check" + rf" +{rate}" * 7)) == 2, out
    assert len(lines_like(out, rf"(stalls|corpus:busy) +{rate} +{rate} +{rate} +{rate}")) == 2


def test_launchsim_screens_launches_as_results_does():
    """Design.screen: a launch 3x slower at every case is left out of every case, a 100x
    stall at one case of that case alone, whose spread is then its own (None)."""
    from launchsim import screened

    from commscope.stats.replication import launch
    rng = np.random.default_rng(4)
    factors = np.ones((6, 5))  # cases x launches
    factors[:, 1] = 3.0
    factors[2, 3] = 100.0
    medians = [[launch(f * np.exp(0.01 * rng.standard_normal(20) + 0.02 * rng.standard_normal()))
                for f in case] for case in factors]
    kept, spreads = screened(medians, 2 ** np.arange(6), None)
    assert [len(k) for k in kept] == [4, 4, 3, 4, 4, 4]
    assert max(lc.median_s for k in kept for lc in k) < 1.5
    assert spreads[2] is None and all(s is not None for i, s in enumerate(spreads) if i != 2)
