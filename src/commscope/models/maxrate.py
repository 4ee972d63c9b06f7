"""The max-rate model (Gropp, Olson & Samfass, "Modeling MPI communication performance on
SMP nodes: is it time to retire the ping pong test", EuroMPI 2016): k processes of a node
each sending n bytes at once take

    T(k, n) = alpha + k n / min(R_N, k R_C)

each process injecting at most R_C bytes/s and the node at most R_N. Fitted to mbw_mr
runs at several process counts: k = P/2 pairs, all senders on one node (the ranks placed
in blocks, as osu_mbw_mr assumes), T the slowest pair's time per window slot.

In inverse rates, T = alpha + n max(c, k d) with c = 1/R_C and d = 1/R_N: a k below
c/d is limited by its processes, one above by the node. For each split of the measured
k into those two sets the model is linear, and it is fitted there by least squares with
alpha, c, d >= 0 and relative residuals (each point weighted 1/T^2, so that every size
counts); of the splits whose fit puts every k on its own side, the one of least BIC
wins (one that needs both rates pays for the second: where a k sits at the edge, R_C and
R_N are not both told apart). Where no k reached
the node's limit, R_N is not identifiable and only its lower bound (the largest k R_C
seen) is given; where every k is node-limited, R_C is given only as at least R_N / k.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..store.cases import Case


MARGIN = 1.05  # a k within 5% of the other limit does not tell R_C and R_N apart


@dataclass(frozen=True)
class Point:
    k: int
    bytes: int
    time_s: float  # the median over launches of each launch's median


@dataclass(frozen=True)
class MaxRate:
    alpha_s: float
    rate_process_Bps: float | None  # R_C; None: not identifiable (see process_at_least)
    rate_node_Bps: float | None  # R_N; None: not identifiable (see node_at_least)
    process_at_least_Bps: float | None
    node_at_least_Bps: float | None
    points: list[Point]

    def time_s(self, nbytes, k: int):
        """T(k, n), of numbers or arrays; a rate that was not identifiable does not limit."""
        k = np.asarray(k, dtype=float)
        rate = np.minimum(self.rate_node_Bps or np.inf, k * (self.rate_process_Bps or np.inf))
        return self.alpha_s + k * np.asarray(nbytes, dtype=float) / rate


def points(cases: list[Case]) -> list[Point]:
    by_point: dict[tuple[int, int], list[float]] = {}
    for c in cases:
        if c.valid_samples.size:
            by_point.setdefault((c.ranks // 2, c.bytes), []).append(float(np.median(c.latency_s)))
    return [Point(k, n, float(np.median(t))) for (k, n), t in sorted(by_point.items())]


def fit_maxrate(cases: list[Case]) -> MaxRate | None:
    """The model over mbw_mr cases of one configuration but their rank counts; None with
    fewer than 2 sizes or a single k."""
    return fit_points(points(cases))


def fit_points(found: list[Point]) -> MaxRate | None:
    ks = sorted({p.k for p in found})
    if len({p.bytes for p in found}) < 2 or len(ks) < 2:
        return None
    k = np.array([p.k for p in found], float)
    n = np.array([p.bytes for p in found], float)
    t = np.array([p.time_s for p in found])
    best = None
    for split in range(len(ks) + 1):  # ks[:split] process-limited, the rest node-limited
        node = k >= (ks[split] if split < len(ks) else np.inf)
        columns = [np.ones_like(t), np.where(node, 0.0, n), np.where(node, k * n, 0.0)]
        used = [i for i, col in enumerate(columns) if col.any()]  # a rate no k uses: 0
        from scipy.optimize import lsq_linear  # 0.3 s to import: only where a fit is made
        fitted = lsq_linear(np.column_stack([columns[i] for i in used]) / t[:, None],
                            np.ones_like(t), bounds=(0, np.inf))
        alpha, c, d = (fitted.x[used.index(i)] if i in used else 0.0 for i in range(3))
        both = 0 < split < len(ks)  # both rates used: each side's k clear of the other limit
        margin = MARGIN if both else 1.0
        consistent = all(c >= margin * ki * d for ki in ks[:split]) and \
            all(ki * d >= margin * c for ki in ks[split:])
        # BIC: a split that uses both rates pays for the second one
        bic = t.size * np.log(max(fitted.cost, 1e-300)) + len(used) * np.log(t.size)
        if consistent and (best is None or bic < best[0]):
            best = (bic, alpha, c, d, split)
    _, alpha, c, d, split = best
    process = 1 / c if split > 0 and c > 0 else None
    node = 1 / d if split < len(ks) and d > 0 else None
    return MaxRate(float(alpha), process, node,
                   None if process else (node / ks[0] if node else None),
                   None if node else (ks[-1] * process if process else None), found)


def across_ranks(groups) -> list[list]:
    """The cases of groups that differ only in their rank count (and the slots on each
    host that it took), together."""
    together: dict[str, list] = {}
    for g in groups:
        config = {k: v for k, v in g.config.items()
                  if k not in ("np", "ranks", "oversubscribed", "ppn")}
        if isinstance(config.get("hosts"), str):
            config["hosts"] = sorted(h.split(":")[0] for h in config["hosts"].split(","))
        key = json.dumps(config, sort_keys=True, default=str)
        together.setdefault(key, []).extend(g.cases)
    return list(together.values())


def mbw_mr_time(t, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """predict's form: t is a fitted MaxRate's time_s, k = ranks / 2 senders."""
    return float(t(nbytes, ranks // 2))
