"""Simulated screens (src/commscope/health/screen.py) and full-matrix checks (health.judge) of
known truth: node x's bandwidth is exp(a_x) times the typical node's, each launch gives
every node a factor of its own (node-by-launch noise) and each directed pair measurement
one more (pair noise); a pair's log bandwidth is mu + a_x + a_y plus both its nodes'
launch factors and its own noise, and, where asked, a factor the whole launch shares
(`launch`: a launch-wide effect, as a launch placed on a busier part of the fabric, or
the second stage's small launches running faster than the first stage's full ones).
Used by tests/test_screen.py, tests/test_health.py, bench/screen.py and bench/health.py."""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from commscope.health.health import Health, Matrices, judge
from commscope.health.screen import FIRST_LAUNCHES, Launch, Observations, run_screen

NODE_LAUNCH = 0.03
PAIR = 0.05

# A launch's shared log factor from its number and the simulation's generator
LaunchEffect = Callable[[int, np.random.Generator], float]


def second_stage(factor: float) -> LaunchEffect:
    """Every launch after the first stage at `factor` of the bandwidth (0.95: 5% slower)."""
    return lambda number, rng: math.log(factor) if number > FIRST_LAUNCHES else 0.0


def random_launches(sd: float, first_stage: bool = False) -> LaunchEffect:
    """Each second-stage launch (with `first_stage`, every launch) a lognormal factor of
    its own, `sd` on the log."""
    return lambda number, rng: (float(rng.normal(0, sd))
                                if first_stage or number > FIRST_LAUNCHES else 0.0)


def matching(nodes: int, rng: np.random.Generator) -> np.ndarray:
    """A random perfect matching (N odd: one node sits out), P x 2."""
    order = rng.permutation(nodes)
    return order[: nodes - nodes % 2].reshape(-1, 2)


def simulated(effects: np.ndarray, rng: np.random.Generator, node_launch: float = NODE_LAUNCH,
              pair: float = PAIR, groups: np.ndarray | None = None,
              uplink: dict[int, float] | None = None, launch: LaunchEffect | None = None):
    """A `measure` for run_screen over nodes of these log effects; `uplink`: a switch
    group's log factor on every pair between it and another group (`groups`: each
    node's); `launch`: the factor each launch shares."""
    nodes = effects.size

    def measure(it: Launch) -> Observations:
        shock = rng.normal(0, node_launch, nodes)
        pairs = it.pairs()
        source = np.concatenate([pairs[:, 0], pairs[:, 1]])
        dest = np.concatenate([pairs[:, 1], pairs[:, 0]])
        log_bw = 20 + effects[source] + effects[dest] + shock[source] + shock[dest] \
            + rng.normal(0, pair, source.size)
        if launch is not None:
            log_bw += launch(it.number, rng)
        if uplink:
            g, h = groups[source], groups[dest]
            for group, factor in uplink.items():
                log_bw += factor * ((g != h) & ((g == group) | (h == group)))
        return Observations(np.full(source.size, it.number), source, dest, log_bw)
    return measure


def screen_of(effects: np.ndarray, threshold: float, seed: int, groups=None, **noise):
    rng = np.random.default_rng(seed)
    return run_screen(effects.size, simulated(effects, rng, groups=groups, **noise), threshold,
                      rng, groups=groups)


def check_of(effects: np.ndarray, threshold: float, launches: int, seed: int,
             node_launch: float = NODE_LAUNCH, pair: float = PAIR,
             launch_sd: float = 0.0) -> Health:
    """A simulated full-matrix check (`health --pattern pairs`): every directed pair in
    each of `launches` launches, each launch with a lognormal factor of its own
    (`launch_sd` on the log) besides the nodes' and pairs', judged as `health` judges
    them."""
    return judge(matrices_of(effects, launches, seed, node_launch, pair, launch_sd), threshold)


def matrices_of(effects: np.ndarray, launches: int, seed: int,
                node_launch: float = NODE_LAUNCH, pair: float = PAIR, launch_sd: float = 0.0,
                links: np.ndarray | float = 0.0) -> Matrices:
    """check_of's matrices, before judging; `links`: N x N log factors of the directed
    pairs."""
    rng = np.random.default_rng(seed)
    n = effects.size
    a = effects + node_launch * rng.standard_normal((launches, n))
    shared = launch_sd * rng.standard_normal(launches)[:, None, None] if launch_sd else 0.0
    bw = np.exp(20 + shared + a[:, :, None] + a[:, None, :] + links
                + pair * rng.standard_normal((launches, n, n)))
    bw[:, np.arange(n), np.arange(n)] = np.nan
    return Matrices([f"n{i}" for i in range(n)], "pairs", bw, np.ones_like(bw), 1 << 20, 8)
