"""A watch's cases read together (watch/probe_states.py): a probe's state, what moved
every case at once, is read apart from each case's own part. Seeded series;
bench/watch.py measures the rates."""

import numpy as np

from commscope.watch import probe_states

NOISE = 0.03


def watch(seed: int, probes: int = 200, cases: int = 4):
    rng = np.random.default_rng(seed)
    return 1e-6 * np.exp(NOISE * rng.standard_normal((probes, cases)))


def test_a_probe_state_that_moves_every_case_is_read_apart_from_each_case():
    """Probes at which all four cases ran 2.5x slower (a quarter of them, at random) name
    no step; a 25% step of every case is named at each, as the watch's; one case's own
    step is named at it alone."""
    figures = watch(2)
    figures[np.random.default_rng(3).random(200) < 0.25] *= 2.5
    keys = [[0] * 200] * 4
    assert [s for case in probe_states.watch_steps(figures, keys) for s in case
            if s.claim.failing] == []
    every = figures.copy()
    every[120:] *= 1.25
    named = [[s for s in case if s.claim.failing]
             for case in probe_states.watch_steps(every, keys)]
    assert all(len(c) == 1 and c[0].claim.evidence["every_case"] and 120 <= c[0].found <= 124
               for c in named), named
    one = figures.copy()
    one[120:, 2] *= 1.25
    named = [[s.began for s in case if s.claim.failing]
             for case in probe_states.watch_steps(one, keys)]
    assert named[0] == named[1] == named[3] == [] and named[2][:1] == [120]


def test_cases_that_moved_apart_are_each_their_own():
    """Two of three cases 2.5x and 4x slower from probe 30 on, the third not (this
    machine's watch moved 8 B ping-pong and allreduce so, 1 MiB not): no probe state
    there, so each of the two has its own step and the third has none."""
    figures = watch(4, 60, 3)
    figures[30:, 0] *= 2.5
    figures[30:, 1] *= 4
    named = [[(s.began, round(s.claim.ratio, 1)) for s in case if s.claim.failing]
             for case in probe_states.watch_steps(figures, [[0] * 60] * 3)]
    assert named == [[(30, 2.5)], [(30, 4.0)], []], named
