"""Drift (stats/drift.py): a step in a case's level over its probes, named at the probe it
began with its size in its interval; nothing named where the level holds, a provenance
change or one probe beside another job. Seeded series; bench/watch.py measures the rates."""

import math

import numpy as np
import pytest

from commscope.watch import drift

NOISE = 0.03  # a probe median's log spread


def series(seed: int, probes: int, step_at: int | None = None, step: float = 1.0):
    rng = np.random.default_rng(seed)
    medians = 1e-6 * np.exp(NOISE * rng.standard_normal(probes))
    if step_at is not None:
        medians[step_at:] *= step
    return medians


def test_a_clear_step_is_named_where_it_began_with_its_size_in_the_interval():
    # A series the test names nothing in before its step (at ARL 200 some 60-probe
    # series hold a false alarm: bench/watch.py measures that rate, this test the step)
    assert drift.steps(series(6, 60), [0] * 60) == []
    medians = series(6, 60, step_at=30, step=1.5)
    found = drift.steps(medians, ["a"] * 60, subject="pingpong 8 B", runs=range(100, 160),
                        hosts=["n1", "n2"])
    assert len(found) == 1
    step = found[0]
    # Page's change point takes in the probe before where that one fell beyond k
    assert abs(step.began - 30) <= 1 and 30 <= step.found <= 32
    low, high = step.claim.interval
    assert low < 1.5 < high and low > 1.3
    assert (step.claim.word, step.claim.failing, step.claim.family) == ("step", True, "drift")
    assert step.claim.evidence["began_probe"] == 30
    assert "commscope health --screen --hosts n1,n2" in step.claim.remedy
    assert "commscope compare 129 130" in step.claim.remedy


def test_a_step_down_is_named_too():
    found = drift.steps(series(2, 60, step_at=25, step=0.7), [0] * 60)
    assert len(found) == 1 and abs(found[0].began - 25) <= 1
    assert found[0].claim.ratio == pytest.approx(0.7, rel=0.05)


def test_a_stable_case_with_launches_in_another_state_names_nothing():
    """5% of launches 3x slower: a probe's figure (the mean of the launches
    states.odd_launches keeps, as a run's) stays at the level, and no step is named."""
    rng = np.random.default_rng(3)
    launches = 1e-6 * np.exp(NOISE * rng.standard_normal((300, 3)))
    launches[rng.random((300, 3)) < 0.05] *= 3
    figures = [float(np.exp(np.mean(np.log(np.sort(row)[:2])))) if row.max() / np.median(row)
               > 1.5 else float(np.exp(np.mean(np.log(row)))) for row in launches]
    assert drift.steps(figures, [0] * 300, launches=list(launches)) == []


def test_probes_slower_by_chance_are_a_step_only_where_they_last():
    """3% of probes 2-4x slower, one at a time, named nothing; the same probes in a run of
    six (a level that lasted) are a step."""
    medians = series(3, 300)
    alone = medians.copy()
    alone[[40, 90, 150, 210, 260]] *= 3
    assert drift.steps(alone, [0] * 300) == []
    lasting = medians.copy()
    lasting[150:156] *= 3
    assert [s.began for s in drift.steps(lasting, [0] * 300)][:1] == [150]


def test_a_provenance_change_starts_a_segment_and_is_never_a_step():
    medians = series(4, 60, step_at=30, step=2.0)
    keys = ["mpich 4.2"] * 30 + ["openmpi 5.0"] * 30
    assert drift.steps(medians, keys) == []
    assert [s.began for s in drift.steps(medians, [0] * 60)] == [30]  # the same, one segment


def test_one_probe_beside_another_job_is_no_step_and_does_not_move_the_level():
    medians = series(6, 60)
    level = drift.expected(medians, [0] * 60).level_s
    assert drift.steps(medians, [0] * 60) == []
    medians[20] *= 1e5
    assert drift.steps(medians, [0] * 60) == []
    assert drift.expected(medians, [0] * 60).level_s == pytest.approx(level, rel=0.01)


def test_expected_is_the_level_since_the_last_step_with_a_band_for_the_next_probe():
    medians = series(6, 60, step_at=30, step=1.5)
    found = drift.expected(medians, [0] * 60)
    level, (low, high) = found.level_s, found.band_s
    assert level == pytest.approx(1.5e-6, rel=0.03)
    assert low < 1.5e-6 < high
    assert high / low == pytest.approx(math.exp(2 * 1.96 * NOISE), rel=0.4)
    assert drift.expected(medians[:2], [0, 0]).band_s is None  # too few probes for a band


def test_launches_floor_the_scale_of_identical_medians():
    medians = [1e-6] * 40 + [1.004e-6] * 20  # a timer's quantised medians, then 0.4%
    assert drift.steps(medians, [0] * 60) == []  # MIN_SCALE: no infinite residual
    eight = [1e-6] * 40 + [1.08e-6] * 20
    assert [s.began for s in drift.steps(eight, [0] * 60)] == [40]
    wide = [np.array([0.8e-6, 1e-6, 1.25e-6])] * 60  # launches 25% apart: 8% is within
    assert drift.steps(eight, [0] * 60, launches=wide) == []


def test_a_shift_the_interval_shows_below_5_percent_is_no_step():
    """An alarm on a level that moved 3% (scale 0.5%: the CUSUM crosses) is `no change`:
    the verdict core's 5% threshold, below which no one acts."""
    three = [1e-6] * 40 + [1.03e-6] * 20
    assert drift.steps(three, [0] * 60) == []
    six = [1e-6] * 40 + [1.06e-6] * 20
    [step] = drift.steps(six, [0] * 60)
    assert step.claim.word == "step" and step.claim.interval[0] > 1


def test_a_watch_holds_its_rate_by_a_longer_run_per_case():
    assert drift.per_case_arl(500, 100) == 50_000
    assert drift.threshold(50_000) > drift.threshold(500) > drift.threshold(100)


@pytest.mark.parametrize("medians, keys, message", [
    ([], [], "no probes"),
    ([1e-6, math.nan], [0, 0], "probe 1's median is nan"),
    ([1e-6, 0.0], [0, 0], "positive number of seconds"),
    ([1e-6, -1e-6], [0, 0], "probe 1"),
    ([1e-6, 1e-6], [0], "one key per probe"),
])
def test_bad_input_is_refused_with_what_to_give(medians, keys, message):
    with pytest.raises(ValueError, match=message):
        drift.steps(medians, keys)
    with pytest.raises(ValueError, match=message):
        drift.expected(medians, keys)


def alternating(seed: int, probes: int = 200, share: float = 0.25, ratio: float = 1.7):
    """Probes that fall in a slow state at random, one probe to the next (stays of 1-3)."""
    rng = np.random.default_rng(seed)
    medians = series(seed, probes)
    medians[rng.random(probes) < share] *= ratio
    return medians


def test_a_state_that_comes_and_goes_is_no_step_and_one_that_stays_is():
    """A 1.7x state in a quarter of the probes, one probe to the next at random, is the
    machine's, not a step; the same level held for 20 probes is a step, found once it
    has stayed longer than the state's share allows (_stays: share^L < 1/ARL)."""
    for seed in range(5):
        assert [s for s in drift.steps(alternating(seed), [0] * 200)
                if s.claim.failing] == [], seed
    medians = alternating(1)
    medians[150:] = 1.7e-6 * np.exp(NOISE * np.random.default_rng(9).standard_normal(50))
    [step] = [s for s in drift.steps(medians, [0] * 200) if s.claim.failing][:1]
    needed, share = step.claim.evidence["stay_needed"], step.claim.evidence["state_share"]
    assert needed == math.ceil(math.log(drift.ARL) / -math.log(share)) > drift.MIN_STAY
    assert 0.15 < share < 0.35
    assert step.claim.ratio == pytest.approx(1.7, rel=0.1) and 146 <= step.began <= 150


def test_a_move_still_open_at_the_latest_probe_is_undetermined_not_silent():
    medians = alternating(1)
    medians[-3:] = 1.7e-6  # three probes at the state's level: shorter than a step needs
    last = drift.steps(medians, [0] * 200)[-1]
    assert (last.claim.word, last.found) == ("undetermined", 199)
    assert "state of the machine unless it stays" in last.claim.remedy


def test_the_expected_band_covers_the_states_seen_with_their_shares():
    """The issue's watch: probes 8, 14 and 17-19 in a state 1.7x slower, the 20th back:
    the level is the fast state's, and the band reaches over the slow one."""
    medians = series(5, 19)
    medians[[7, 13, 16, 17, 18]] *= 1.7
    found = drift.expected(medians, [0] * 19)
    level, (low, high), states = found.level_s, found.band_s, found.states
    assert level == pytest.approx(1e-6, rel=0.05)
    assert low < 1e-6 and high > 1.7e-6
    assert [round(share, 2) for _, share in states] == [round(14 / 19, 2), round(5 / 19, 2)]
    assert states[1][0] == pytest.approx(1.7e-6, rel=0.05)


def test_the_least_step_said_is_found_within_three_probes_and_states_widen_it():
    """The least step the test finds within 3 probes at a level's spread: a step of it
    (a little more: the level's own error) is found within 3 probes; probes in states
    give a wider one, which the watch prints instead of missing smaller steps in silence."""
    medians = series(6, 60)
    least = drift.expected(medians[:30], [0] * 30).least_step
    assert 1.05 < least < 1 + 6 * NOISE
    medians[30:] *= least * 1.02
    [step] = drift.steps(medians, [0] * 60)
    assert step.found - 30 < 3
    assert drift.expected(alternating(2)[:60], [0] * 60).least_step > least
    assert drift.expected(medians[:2], [0, 0]).least_step == math.inf
