"""Flapping (stats/flapping.py): samples that fall in two states over time, named with
the share of time in the slow state and its size; a slow warm-up, one burst, one
outlier or a steady launch are not flapping. Seeded series; bench/watch.py measures the
rates."""

import math

import numpy as np
import pytest

from commscope.watch import flapping

FAST = 1024 * 1024 * 8 / 400e6  # 1 MiB at 400 Mbit/s


def launch(seed: int, seconds: float = 20.0, toggle: float | None = 2.0,
           slow_from: float = math.inf, slow_to: float = math.inf):
    """Samples in order and the true share of time slow: 2x slower every other `toggle`
    seconds, or between slow_from and slow_to."""
    rng = np.random.default_rng(seed)
    t, slow_time, out = 0.0, 0.0, []
    while t < seconds:
        slow = (toggle is not None and int(t // toggle) % 2 == 1) or slow_from <= t < slow_to
        x = FAST * (2.0 if slow else 1.0) * math.exp(0.05 * rng.standard_normal())
        out.append(x)
        t += x
        slow_time += x if slow else 0.0
    return np.array(out), slow_time / t


def test_a_link_toggled_every_2_s_is_flapping_with_its_share_and_size():
    samples, truth = launch(1)
    found = flapping.within(samples, subject="pingpong 1 MiB")
    assert found.claim.word == "flapping" and found.claim.failing
    assert truth == pytest.approx(0.5, abs=0.05)
    assert found.share == pytest.approx(truth, abs=0.05)
    low, high = found.claim.interval
    assert low < 2.0 < high and low > 1.8
    assert len(found.slow) == 5 and found.claim.evidence["slow_stays"] == 5
    assert "commscope health --screen" in found.claim.remedy


@pytest.mark.parametrize("how", [{"toggle": None},
                                 {"toggle": None, "slow_from": 0.0, "slow_to": 2.0},
                                 {"toggle": None, "slow_from": 9.0, "slow_to": 11.0}],
                         ids=["steady", "slow warm-up", "one slow burst"])
def test_a_launch_in_one_state_or_one_stay_is_not_flapping(how):
    samples, _ = launch(2, **how)
    found = flapping.within(samples)
    assert found.claim.word == "not flapping" and not found.claim.failing
    assert (found.share, found.slow) == (0.0, ())


def test_single_outliers_make_no_state():
    samples, _ = launch(3, toggle=None)
    samples[[100, 300, 500]] *= [1e5, 10, 3]
    assert flapping.within(samples).claim.word == "not flapping"


def test_probes_that_alternate_between_two_levels_flap_and_one_step_does_not():
    rng = np.random.default_rng(4)
    medians = np.exp(0.05 * rng.standard_normal(40))
    alternating = medians * np.where((np.arange(40) // 4) % 2 == 1, 1.3, 1.0)
    found = flapping.between(alternating, [0] * 40)
    assert found.claim.word == "flapping"
    assert found.share == pytest.approx(0.5)
    assert found.slow[0] == (4, 7)
    assert found.claim.interval[0] < 1.3 < found.claim.interval[1]
    # both levels, each its state's median
    e = found.claim.evidence
    assert e["slow_s"] / e["fast_s"] == pytest.approx(1.3, rel=0.05)
    assert e["fast_s"] == pytest.approx(1.0, rel=0.05)
    step = medians * np.where(np.arange(40) >= 20, 1.3, 1.0)
    assert flapping.between(step, [0] * 40).claim.word == "not flapping"
    keys = ["before"] * 34 + ["after"] * 6  # only the last provenance is read: one stay
    assert flapping.between(alternating, keys).claim.word == "not flapping"


@pytest.mark.parametrize("samples, message", [
    ([], "no samples"),
    ([1e-6, math.nan], "sample 1 is nan"),
    ([1e-6, 0.0], "positive number of seconds"),
    ([1e-6, -2e-6], "sample 1"),
])
def test_bad_samples_are_refused_with_what_to_give(samples, message):
    with pytest.raises(ValueError, match=message):
        flapping.within(samples)


def test_bad_probes_are_refused_with_what_to_give():
    with pytest.raises(ValueError, match="no probes"):
        flapping.between([], [])
    with pytest.raises(ValueError, match="one key per probe"):
        flapping.between([1e-6, 1e-6], [0])
    with pytest.raises(ValueError, match="a dwell of 0"):
        flapping.within([1e-6] * 40, dwell=0)
