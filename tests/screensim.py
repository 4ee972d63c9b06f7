"""Simulated screens (src/commscope/screen.py) of known truth: node x's bandwidth is
exp(a_x) times the typical node's, each launch gives every node a factor of its own
(node-by-launch noise) and each directed pair measurement one more (pair noise); a pair's
log bandwidth is mu + a_x + a_y plus both its nodes' launch factors and its own noise.
Used by tests/test_screen.py and bench/screen.py."""

from __future__ import annotations

import numpy as np

from commscope.screen import Launch, Observations, run_screen

NODE_LAUNCH = 0.03
PAIR = 0.05


def matching(nodes: int, rng: np.random.Generator) -> np.ndarray:
    """A random perfect matching (N odd: one node sits out), P x 2."""
    order = rng.permutation(nodes)
    return order[: nodes - nodes % 2].reshape(-1, 2)


def simulated(effects: np.ndarray, rng: np.random.Generator, node_launch: float = NODE_LAUNCH,
              pair: float = PAIR, groups: np.ndarray | None = None,
              uplink: dict[int, float] | None = None):
    """A `measure` for run_screen over nodes of these log effects; `uplink`: a switch
    group's log factor on every pair between it and another group (`groups`: each
    node's)."""
    nodes = effects.size

    def measure(launch: Launch) -> Observations:
        shock = rng.normal(0, node_launch, nodes)
        pairs = launch.pairs()
        source = np.concatenate([pairs[:, 0], pairs[:, 1]])
        dest = np.concatenate([pairs[:, 1], pairs[:, 0]])
        log_bw = 20 + effects[source] + effects[dest] + shock[source] + shock[dest] \
            + rng.normal(0, pair, source.size)
        if uplink:
            g, h = groups[source], groups[dest]
            for group, factor in uplink.items():
                log_bw += factor * ((g != h) & ((g == group) | (h == group)))
        return Observations(np.full(source.size, launch.number), source, dest, log_bw)
    return measure


def screen_of(effects: np.ndarray, threshold: float, seed: int, groups=None, **noise):
    rng = np.random.default_rng(seed)
    return run_screen(effects.size, simulated(effects, rng, groups=groups, **noise), threshold,
                      rng, groups=groups)
