"""The verdict core (commscope.stats.verdict) on estimates of known truth: the threshold in its
one unit, the tests at the threshold, the words, moderation with an estimated prior, no
spread as unknown spread, the false-coverage-rate interval of what is named, the one
JUnit writer, the exit status a gate reads, and the screen's two-stage tests (Pocock's
looks, the combination, the empirical null). The rates over many simulated commands are
bench/verdicts.py's."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

from commscope.system.errors import UserError
from commscope.stats.verdict import (INCONCLUSIVE, UNDETERMINED, Estimate, Threshold, Words,
                                     claims, decide, exit_status, gate, junit, moderate, paired,
                                     parse_threshold, unpaired)
from commscope.stats.stats import benjamini_hochberg
from commscope.stats.verdict.inference import Stage, empirical_null, sequential_level, staged_tests

WORDS = Words("violated", "holds")
FIVE = Threshold(0.05)


def estimate(ratio: float, sd: float, k: int = 5) -> Estimate:
    """A paired estimate of K launches whose ratios are exactly `ratio` times a spread of
    sd (the sample's own sd is sd: the launches are +-sd around the mean)."""
    spread = np.array([-1, 1] * (k // 2) + [0] * (k % 2)) * sd * math.sqrt((k - 1) / (k - k % 2))
    return paired(dict(enumerate(ratio * np.exp(spread))), dict.fromkeys(range(k), 1.0))


@pytest.mark.parametrize("text, fraction", [("5%", 0.05), ("0.05", 0.05), ("20 %", 0.2),
                                            (".1", 0.1)])
def test_a_threshold_is_a_bandwidth_shortfall(text, fraction):
    t = parse_threshold(text)
    assert t.fraction == pytest.approx(fraction)
    assert t.bandwidth_ratio == pytest.approx(1 - fraction)
    assert t.time_ratio == pytest.approx(1 / (1 - fraction))
    assert math.exp(t.log) == pytest.approx(t.time_ratio)


@pytest.mark.parametrize("text", ["0", "0%", "100%", "1", "1.5", "-5%", "lots", ""])
def test_a_threshold_out_of_range_names_its_option(text):
    with pytest.raises(UserError, match=f"--min-gain {text}: give a percentage"):
        parse_threshold(text, "--min-gain")


def test_each_word_is_its_test_at_the_threshold():
    """Far beyond 1.053x: violated; at 1.00 with a narrow interval: holds; 1.03 with its
    interval inside the bound but clear of 1: slower; at the bound itself, clear of 1 but
    not of the bound: undetermined."""
    found = claims([estimate(1.5, 0.02), estimate(1.0, 0.005), estimate(1.03, 0.002),
                    estimate(FIVE.time_ratio, 0.02)], ["g"] * 4, list("abcd"), FIVE, WORDS)
    assert [c.word for c in found] == ["violated", "holds", "slower", UNDETERMINED]
    assert [c.failing for c in found] == [True, False, False, False]


def test_no_spread_is_unknown_spread_not_certainty():
    """Identical launches (imported figures): no interval, no word but inconclusive; with
    others to borrow a spread from, it takes theirs."""
    alone = claims([estimate(1.5, 0.0)], ["g"], ["a"], FIVE, WORDS)
    assert [(c.word, c.interval) for c in alone] == [(INCONCLUSIVE, None)]
    among = moderate([estimate(1.5, 0.0)] + [estimate(1.0, 0.02) for _ in range(4)])
    assert among[0].var == pytest.approx(among[1].var) and among[0].df == among[1].df


def test_moderation_estimates_the_prior_s_weight_and_never_lowers_a_noisy_one():
    rng = np.random.default_rng(1)
    same = [Estimate(0.0, float(v), 4, 0.2, 5, True) for v in
            0.02 ** 2 * rng.chisquare(4, 30) / 4]  # one true variance: an infinite weight
    pooled = moderate(same)
    prior = min(m.var for m in pooled)  # where own < prior, each takes the prior's alone
    assert sum(m.var == prior for m in pooled) >= 10
    assert all(m.var == max(prior, e.var) for m, e in zip(pooled, same))
    assert all(m.df > e.df for m, e in zip(pooled, same))
    noisy = moderate(same[:10] + [Estimate(0.0, 0.2 ** 2, 4, 0.2, 5, True)])
    assert noisy[-1].var == pytest.approx(0.2 ** 2)


def test_what_is_named_carries_a_wider_false_coverage_interval():
    found = [estimate(1.5, 0.02)] + [estimate(1.0, 0.02) for _ in range(19)]
    named, plain = decide(found, FIVE.log)[:2]
    width = [math.log(d.interval[1] / d.interval[0]) for d in (named, plain)]
    assert named.outcome == "over" and plain.outcome != "over"
    assert width[0] > width[1]  # the same se: the named one's level is 1 - alpha / 20


def test_two_commands_apart_carry_the_between_command_term():
    a, b = np.log([1.0, 1.01, 0.99]), np.log([1.1, 1.11, 1.09])
    assumed, known = unpaired(a, b), unpaired(a, b, command_var=0.0)
    assert assumed.se > known.se > 0
    assert assumed.log_ratio == pytest.approx(known.log_ratio) == pytest.approx(0.0953, abs=1e-3)


def test_words_that_collide_are_refused():
    with pytest.raises(ValueError, match="words must differ"):
        Words("slower", "holds")


def test_junit_skips_what_is_undecided_and_fails_only_the_failing_word():
    found = claims([estimate(1.5, 0.02), estimate(1.0, 0.005), estimate(FIVE.time_ratio, 0.02),
                    paired({1: 1.2}, {1: 1.0})], ["g"] * 4, list("abcd"), FIVE, WORDS)
    root = ElementTree.fromstring(junit("commscope check", found))
    kinds = {c.get("name"): [e.tag for e in c] for c in root}
    assert kinds == {"a": ["failure"], "b": ["system-out"], "c": ["skipped"],
                     "d": ["skipped"]}
    assert (root.get("failures"), root.get("skipped")) == ("1", "2")


@pytest.mark.parametrize("failed, undecided, fail_on, status", [
    (False, False, None, 0), (True, False, None, 1), (False, True, None, 3),
    (True, True, None, 1),  # a failure beside undecided verdicts is still a failure
    (False, True, "undetermined", 1), (False, False, "undetermined", 0)])
def test_the_gate_passes_only_what_it_could_tell(failed, undecided, fail_on, status):
    assert gate(failed, undecided, fail_on) == status


def test_one_undecided_verdict_beside_decided_ones_is_exit_3_and_with_fail_on_a_failure():
    found = claims([estimate(1.0, 0.005), estimate(FIVE.time_ratio, 0.02),
                    paired({1: 1.2}, {1: 1.0})], ["g"] * 3, list("bcd"), FIVE, WORDS)
    assert [c.word for c in found] == ["holds", UNDETERMINED, INCONCLUSIVE]
    assert exit_status(found) == 3 and exit_status(found[:1]) == 0
    assert exit_status(found, "undetermined") == 1
    root = ElementTree.fromstring(junit("commscope check", found, "undetermined"))
    failures = {c.get("name"): [e.get("type") for e in c if e.tag == "failure"] for c in root}
    assert failures == {"b": [], "c": [UNDETERMINED], "d": [INCONCLUSIVE]}
    assert (root.get("failures"), root.get("skipped")) == ("2", "0")


@pytest.mark.parametrize("looks, constant", [(2, 2.178), (5, 2.413)])
def test_the_sequential_level_is_pocock_s(looks, constant):
    """Equally spaced looks at a two-sided 5% (one-sided 2.5%): Pocock's constant boundary
    (Biometrika 64, 1977, table 1; Jennison and Turnbull 2000, table 2.1)."""
    from scipy.special import ndtr
    level = sequential_level(tuple(float(k) for k in range(1, looks + 1)), 0.025)
    assert level == pytest.approx(float(ndtr(-constant)), rel=0.02)
    assert 0.025 / looks < level < 0.025  # above Bonferroni's, below one look's


def test_a_second_stage_chosen_by_the_first_keeps_its_level():
    """20000 hypotheses at the bound: the first stage's estimate, a second stage drawn only
    where the first was neither clear nor damning (as the screen chooses), each tested
    alone by the combination: passes in at most alpha of them; and where every one goes
    on, in alpha of them (the combination is exact); as one family, BH over them."""
    from scipy.special import ndtr
    rng = np.random.default_rng(7)
    bound, n = math.log(1.25), 20000
    first = Stage(bound + rng.normal(0, 0.1, n), np.full(n, 0.1), np.full(n, 1e6))
    chosen = np.abs(first.d - bound) < 0.15
    second = Stage(bound + rng.normal(0, 0.05, n), np.full(n, 0.05), np.full(n, 1e6))
    at = np.full(n, bound)
    raw = ndtr(-(math.sqrt(0.3) * first.z(at) + math.sqrt(0.7) * second.z(at)))
    assert 0.045 < np.mean(raw < 0.05) < 0.055  # exact where every one goes on
    assert np.mean((raw < 0.05) & chosen) <= 0.05
    both = staged_tests(first, second, 0.3, bound)  # the family at once: BH, intervals
    assert np.allclose(both.over, benjamini_hochberg(np.minimum(2 * raw, 1)))  # two-sided
    assert np.all(both.low <= both.centre) and np.all(both.centre <= both.high)


def test_estimates_that_share_errors_are_widened_to_their_spread():
    """Means that vary 1.5 times what their standard errors say (one of 40 far off) are
    widened to their spread; means that vary as said are left alone."""
    rng = np.random.default_rng(3)
    se, df = np.full(40, 0.02), np.full(40, 100.0)
    wide = rng.normal(0, 0.03, 40)
    wide[0] = -0.5
    widened, fewer = empirical_null(wide, se, df)
    assert np.all(widened > 1.2 * se) and np.all(fewer < df)
    kept, same = empirical_null(rng.normal(0, 0.015, 40), se, df)
    assert np.array_equal(kept, se) and np.array_equal(same, df)


def test_what_is_named_never_has_the_threshold_inside_its_interval():
    """200 families of 20 near the bound (5%): each named one's interval lies wholly beyond
    it, on the side its test named (its end there is the bound the test passed)."""
    rng = np.random.default_rng(11)
    named = 0
    for _ in range(200):
        found = [estimate(math.exp(FIVE.log + rng.normal(0.04, 0.02)), 0.03)
                 for _ in range(20)]
        for d in decide(found, FIVE.log):
            if d.outcome == "over":
                named += 1
                assert d.interval[0] > math.exp(FIVE.log), d
    assert named > 50  # the check saw named ones
