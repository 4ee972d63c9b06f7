"""The screen (`commscope health --screen`, docs/health.md): which nodes are bad, in a
number of rounds that grows as log N where the full matrix takes N-1 a launch.

A round is one random perfect matching of the nodes, every pair measured both ways at
once (native pairs). The launch is the unit: the verdict core tests each node on its
launch values (health._tests: variances moderated, one family, BH), each value against
the typical of the OTHER nodes of its own launch, so that a factor a whole launch shares
cancels and a slow node never moves its own reference (issue 49).

First stage: FIRST_LAUNCHES launches of one random round each, of every node (three
rounds join the nodes; two leave even cycles whose effects cannot be told apart). Node
effects are fitted over them by least squares (the connected design: log b_xy = mu + a_x
+ a_y + e); a node's value in a launch is its pair's mean log bandwidth less mu and its
partner's effect, the partner's without their measurements together (else a bad node's
slowness, shared out to its partners, comes back to clear it); each launch's values less
their median, each node's less the median of the others' means (centred_on_others).
Every node is tested, one family of all N: named where "no more than the threshold
slower" is rejected, cleared where "more than that" is, for good (the standard errors
widened to the spread of the nodes' means: their values share errors through the fitted
partners).

Second stage: the nodes left unresolved each meet a cleared node, one round a launch of
only those hosts and at least REFERENCE_PAIRS pairs of cleared nodes (the host order the
pairing, schedule adjacent), so that no round is spent on the healthy alone. A node's
value in a launch is its pair less the median of the launch's reference pairs
(paired_values); its partner and the references are taken as typical (cleared for
looking fast, their fitted effects are too high). At looks after 2, 3, 5, 8, ... of its
launches and at its last, each node not yet cleared is tested on its first-stage
estimate and its values since, combined (an adaptive design: verdict.staged_tests), their
variance moderated towards the references' spread about their launch's, one family of
them. Each stage spends half of alpha, the second's looks under one Pocock boundary
(verdict.sequential_level): on simulated screens a node at the threshold was named, and
cleared, in at most 5% of them, with or without a factor the second stage's launches
share (bench/screen.py). It stops when every node is decided or the rounds reach
BASE_ROUNDS + 2 log2 N.

The screen judges nodes, not links: a node's value mixes its pairs, and a single slow
link shows only as noise on two nodes. `--pattern pairs` or `shift` (the full matrix)
finds links.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .health import _tests, median_of_others
from ..stats.verdict.health import (FAMILY, FAULT_ORDER, REMEDY, WORDS, fault_claim,
                                    fault_where, tournament_rounds)
from ..stats.verdict import ALPHA, Claim, Threshold, unmeasured
from ..stats.verdict.inference import Stage, sequential_level
from ..system import units

# Launches of every node first: 3 random rounds join the nodes (2 leave even cycles whose
# effects cannot be told apart)
FIRST_LAUNCHES = 3
TRIES = 100  # draws of the first stage's matchings before one that does not join is kept
# The rounds in all: at most BASE_ROUNDS + 2 log2 N (10 at 8 nodes, under half the 21 of
# the full matrix at 3 launches; 24 at 1024), the cap of a node near the threshold
BASE_ROUNDS = 4
# of alpha, the first stage's; the second's looks spend the rest (200 simulated screens of
# 1024 nodes named a node at 0.75 within 16 rounds in 98% at a quarter, 97% at a half,
# 93.5% at three quarters)
FIRST_SHARE = 0.5
# Pairs of cleared nodes in each targeted round, at the least: a node's value is its pair
# less their median, whose variance (1/R of a pair's up to 2, about pi/2R above) it carries;
# at 2, 31.5% of simulated screens of 8 nodes named a node at 0.75, at 4 (3 where 8 nodes
# leave only 6 cleared) 36.5% (200 screens each)
REFERENCE_PAIRS = 4


def max_rounds(nodes: int) -> int:
    return BASE_ROUNDS + 2 * math.ceil(math.log2(nodes))


@dataclass
class Observations:
    """Directed bandwidth measurements: each one's launch, source and destination node and
    log bandwidth (bytes/s)."""
    launch: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    source: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    dest: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    log_bw: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def add(self, other: "Observations") -> "Observations":
        return Observations(*(np.concatenate([getattr(self, f), getattr(other, f)])
                              for f in ("launch", "source", "dest", "log_bw")))


class Faults(Exception):
    """What a launch that did not complete was traced to (preflight.diagnose): each a dict
    of kind ("unreachable": a pair that cannot talk, each side fine with another partner;
    "hung": a node that answers no partner), nodes, and what was seen."""

    def __init__(self, found: list[dict]):
        super().__init__(", ".join(f"{f['kind']} {f['nodes']}" for f in found))
        self.found = found


@dataclass(frozen=True)
class Launch:
    """One launch of the screen: one round, the nodes in `order` paired 2i with 2i+1 (the
    launch's host order; native pairs' schedule adjacent); N odd: the last sits out."""
    number: int
    order: tuple[int, ...]

    def pairs(self) -> np.ndarray:
        order = np.array(self.order)
        return order[: order.size - order.size % 2].reshape(-1, 2)


def first_orders(sets: list[list[int]], rng: np.random.Generator,
                 dead: set[frozenset] = frozenset(),
                 groups: np.ndarray | None = None) -> list[tuple[int, ...]]:
    """The first stage's FIRST_LAUNCHES random matchings, drawn again (up to TRIES times)
    until together they join every node into one graph with an odd cycle and no pair
    twice: on a bipartite graph a_x + a_y leaves c on one side and -c on the other
    undecided (3 random rounds of 8 nodes were bipartite in a namespace-cluster screen,
    and the fit gave the slow node 0.80 for 0.75)."""
    nodes = sorted(set().union(*sets))
    for _ in range(TRIES):
        orders = [tuple(int(x) for x in rng.permutation(nodes)) for nodes in sets]
        if groups is not None:  # the first round within the switch groups: what tells
            orders[0] = _within(sets[0], groups, rng)  # the nodes' effects from uplinks
        edges = np.concatenate([Launch(0, o).pairs() for o in orders])
        if _joined(nodes, edges, dead):
            return orders
    return orders


def _within(nodes: list[int], groups: np.ndarray, rng: np.random.Generator
            ) -> tuple[int, ...]:
    """A matching of each switch group's nodes among themselves (one of an odd group, and
    the nodes of none, matched at random after)."""
    order, left = [], []
    for g in np.unique(groups[nodes]):
        members = [int(x) for x in rng.permutation([x for x in nodes if groups[x] == g])]
        if g < 0:
            left += members
            continue
        order += members[: len(members) - len(members) % 2]
        left += members[len(members) - len(members) % 2:]
    return tuple(order + [int(x) for x in rng.permutation(left)])


def _joined(active: list[int], edges: np.ndarray, dead: set[frozenset]) -> bool:
    """Every node in one component, an odd cycle in it, no pair met twice, none that
    cannot talk."""
    met = {frozenset(e) for e in edges.tolist()}
    if len(met) < len(edges) or met & dead:
        return False
    place = {x: i for i, x in enumerate(active)}
    n = len(active)
    side = np.full(n, -1)
    side[0], stack, odd = 0, [0], False
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for x, y in ((place[a], place[b]) for a, b in edges.tolist()):
        neighbours[x].append(y)
        neighbours[y].append(x)
    while stack:
        x = stack.pop()
        for y in neighbours[x]:
            if side[y] < 0:
                side[y] = 1 - side[x]
                stack.append(y)
            elif side[y] == side[x]:
                odd = True
    return odd and bool((side >= 0).all())


def fit_nodes(n: int, obs: Observations, groups: np.ndarray | None = None
              ) -> tuple[float, np.ndarray, dict[tuple[int, int], float]]:
    """mu, each node's a_x (NaN: never measured) and, with `groups` (each node's switch
    group, -1: none), each pair of groups' v_GH, the log ratio of a pair across them to
    what its nodes predict: the least-squares fit of log b = mu + a_source + a_dest
    (+ v_GH across groups G and H), the node effects summing to 0 (scipy's LSQR on the
    sparse design), then centred on the median node. Pairs within a group tell the
    nodes' effects from the uplinks'."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.linalg import lsqr

    rows = obs.log_bw.size
    counts = np.bincount(np.concatenate([obs.source, obs.dest]), minlength=n)
    seen = counts > 0
    at = np.arange(rows)
    links = _group_links(obs, groups)
    across = [(r, n + 1 + k) for k, (_, where) in enumerate(links) for r in where]
    # row r: a_source + a_dest + mu (+ v_GH); one more row: sum a = 0
    row_of = np.concatenate([at, at, at, np.full(n, rows), [r for r, _ in across]])
    col_of = np.concatenate([obs.source, obs.dest, np.full(rows, n), np.arange(n),
                             [c for _, c in across]])
    design = csr_matrix((np.ones(row_of.size), (row_of.astype(int), col_of.astype(int))),
                        shape=(rows + 1, n + 1 + len(links)))
    solution = lsqr(design, np.append(obs.log_bw, 0.0), atol=1e-12, btol=1e-12)[0]
    a, mu = solution[:n], float(solution[n])
    centre = float(np.median(a[seen]))
    v = {key: float(solution[n + 1 + k]) for k, (key, _) in enumerate(links)}
    return mu + 2 * centre, np.where(seen, a - centre, np.nan), v


def _group_links(obs: Observations, groups: np.ndarray | None) -> list:
    """((G, H), the rows measured across them) for each pair of groups with a row across
    it and a row within one of them (else v_GH cannot be told from the nodes' effects)."""
    if groups is None:
        return []
    g, h = groups[obs.source], groups[obs.dest]
    inside = {int(x) for x in g[(g == h) & (g >= 0)]}
    cross = (g != h) & (g >= 0) & (h >= 0)
    keys = np.minimum(g, h) * (int(groups.max()) + 1) + np.maximum(g, h)
    out = []
    for key in np.unique(keys[cross]):
        pair = divmod(int(key), int(groups.max()) + 1)
        if inside & set(pair):
            out.append((pair, np.nonzero(cross & (keys == key))[0]))
    return out


def without_links(obs: Observations, groups: np.ndarray | None,
                  v: dict[tuple[int, int], float]) -> Observations:
    """The measurements with each pair across groups less its groups' v_GH: what the
    nodes' effects alone predict, for the nodes' values."""
    if not v:
        return obs
    g, h = groups[obs.source], groups[obs.dest]
    less = np.array([v.get((min(x, y), max(x, y)), 0.0) if x != y else 0.0
                     for x, y in zip(g.tolist(), h.tolist())])
    return dataclasses.replace(obs, log_bw=obs.log_bw - less)


def link_values(launches: int, obs: Observations, groups: np.ndarray, mu: float,
                a: np.ndarray, keys: list[tuple[int, int]]) -> np.ndarray:
    """launches x links: each pair of groups' mean, over its measurements across them in
    a launch, of the log bandwidth less mu and both nodes' effects (v_GH there)."""
    g, h = groups[obs.source], groups[obs.dest]
    out = np.full((launches, len(keys)), np.nan)
    residual = obs.log_bw - mu - a[obs.source] - a[obs.dest]
    for k, (x, y) in enumerate(keys):
        rows = ((g == x) & (h == y)) | ((g == y) & (h == x))
        for launch in range(1, launches + 1):
            here = rows & (obs.launch == launch)
            if here.any():
                out[launch - 1, k] = float(residual[here].mean())
    return out


def launch_values(n: int, launches: int, obs: Observations, mu: float,
                  a: np.ndarray | None) -> np.ndarray:
    """launches x N: each node's mean over its measurements in a launch (either end) of
    its log bandwidth less mu and its partner's effect, the partner's effect without the
    measurements the two made together (else a bad node's slowness, shared out to its
    partners' effects, would come back to clear it); `a` None: partners taken as typical.
    NaN where it was not measured."""
    node = np.concatenate([obs.source, obs.dest])
    other = np.concatenate([obs.dest, obs.source])
    y = np.tile(obs.log_bw, 2)
    if a is None:
        return _by_launch(n, launches, obs, node, y - mu)
    residual = y - mu - a[node] - a[other]
    count = np.bincount(node, minlength=n)
    # the partner's effect from its other measurements: its sum of (y - mu - a_its
    # partner) less those with this node, over its count less theirs
    pair = node.astype(np.int64) * n + other
    together, index = np.unique(pair, return_inverse=True)
    shared = np.bincount(index, residual + a[node], together.size)  # y - mu - a_node
    shared_n = np.bincount(index, minlength=together.size)
    mirror = np.searchsorted(together, other.astype(np.int64) * n + node)
    own_sum = count[other] * a[other]  # sum over the partner's of (y - mu - a_its partner)
    left = count[other] - shared_n[mirror]
    with np.errstate(invalid="ignore", divide="ignore"):
        partner = np.where(left > 0, (own_sum - shared[mirror]) / left, a[other])
    return _by_launch(n, launches, obs, node, y - mu - partner)


def centred_on_others(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The first stage's launches x nodes values, each node against the typical of the
    OTHER nodes: each launch's values less their median (a factor the launch shares
    cancels), then each node's less the median of the others' means over the launches
    (its reference); the references, and their variance: pi/2 times a node mean's over
    N-1 (the sample median's large-sample variance; above the exact one at 3 and 7
    others). Against the fit's median node, itself among them, a slow node moved its own
    reference towards it: one at the threshold among 8 was cleared in 9.7% of simulated
    screens (issue 49)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a launch that measured none
        centred = values - np.nanmedian(values, axis=1, keepdims=True)
        means = np.nanmean(centred, axis=0)
        k = np.sum(np.isfinite(centred), axis=0)
        of_mean = float(np.nanmedian(np.nanvar(centred, axis=0, ddof=1) / k))
    others = max(int(np.isfinite(means).sum()) - 1, 1)
    spread = math.pi / 2 * of_mean / others if math.isfinite(of_mean) else 0.0
    reference = median_of_others(means)
    return centred - reference, reference, spread


def _by_launch(n: int, launches: int, obs: Observations, node: np.ndarray,
               value: np.ndarray) -> np.ndarray:
    at = (np.tile(obs.launch, 2) - 1) * n + node
    total = np.bincount(at, value, launches * n)
    hits = np.bincount(at, minlength=launches * n)
    with np.errstate(invalid="ignore"):
        return (total / np.where(hits, hits, np.nan)).reshape(launches, n)


@dataclass
class Screen:
    nodes: int
    threshold: float
    obs: Observations = field(default_factory=Observations)
    launches: list[Launch] = field(default_factory=list)
    named: dict[int, int] = field(default_factory=dict)  # node -> the launch it was named
    cleared: dict[int, int] = field(default_factory=dict)
    second: list[int] = field(default_factory=list)  # the family the second stage tests
    first_stage: dict[int, tuple] = field(default_factory=dict)  # node -> its d, se, df
    # node -> the claim of its last test (a decided node's: the test that decided it): its
    # bandwidth ratio to the typical node, interval, p, word, launches and stage
    judged: dict[int, Claim] = field(default_factory=dict)
    history: list[dict] = field(default_factory=list)  # each look: rounds, intervals
    first: list[tuple[int, ...]] = field(default_factory=list)  # the first stage's orders
    # Faults' found, each with its launch; after the screen, with the transient stalls (kind
    # "stalled": a launch that stalled and ran clean, its node judged as any: preflight)
    faults: list[dict] = field(default_factory=list)
    groups: np.ndarray | None = None  # each node's switch group (-1: none), from --groups
    group_names: list[str] = field(default_factory=list)
    # (G, H) -> the claim of the test of v_GH: its pairs across over what their nodes predict
    links: dict[tuple[int, int], Claim] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)  # the hosts (a simulation's: n0, n1, ...)

    def __post_init__(self):
        self.names = list(self.names) or [f"n{x}" for x in range(self.nodes)]
        if self.groups is not None and not self.group_names:  # a simulation's: g0, g1, ...
            self.group_names = [f"g{x}" for x in range(int(self.groups.max()) + 1)]

    @property
    def slow_links(self) -> list[tuple[int, int]]:
        return [key for key, c in self.links.items() if c.failing]

    def suspects(self) -> list[dict]:
        """The slow switch groups (group_suspects)."""
        return group_suspects(self)

    def claims(self, transient_ok: bool = False) -> list[Claim]:
        """What a gate and JUnit read (verdicts)."""
        return verdicts(self, transient_ok)

    def where(self, fault: dict) -> str:
        """A fault's hosts, and its ranks where traced (where)."""
        return where(self, fault)

    @property
    def full_matrix_rounds(self) -> int:
        return tournament_rounds(self.nodes)

    @property
    def rounds(self) -> int:
        return len(self.launches)  # one round a launch

    @property
    def hung(self) -> set[int]:
        return {f["nodes"][0] for f in self.faults if f["kind"] == "hung"}

    @property
    def dead(self) -> set[frozenset]:
        return {frozenset(f["nodes"]) for f in self.faults if f["kind"] == "unreachable"}

    @property
    def active(self) -> list[int]:
        return [x for x in range(self.nodes) if x not in self.hung]

    def launchable(self, number: int) -> list[int]:
        """The active nodes launch `number` may hold: never both ends of a pair that
        cannot talk (every launch's collectives would wait on it), the one left out
        taking turns."""
        out = {sorted(pair)[number % 2] for pair in self.dead}
        return [x for x in self.active if x not in out]

    @property
    def unresolved(self) -> list[int]:
        return [x for x in self.active if x not in self.named and x not in self.cleared]


def looks(nodes: int) -> list[int]:
    """The second stage's looks: after 2, 3, 5, 8, 13, ... of its launches (Fibonacci's:
    each about 1.6 times the last) and at its last. Under one Pocock boundary a look costs
    little; at 1024 nodes one falls at round 16."""
    budget = max_rounds(nodes) - FIRST_LAUNCHES
    at, (k, after) = [], (2, 3)
    while k < budget:
        at.append(k)
        k, after = after, k + after
    return at + [budget] if budget > 0 else []


def next_launch(s: Screen, rng: np.random.Generator) -> Launch | None:
    """The screen's next launch, or None when it is done: every node decided, or its
    rounds spent."""
    number = len(s.launches) + 1
    if number > max_rounds(s.nodes) or (number > FIRST_LAUNCHES and not s.unresolved):
        return None
    if number <= FIRST_LAUNCHES:
        if not s.first:
            s.first = first_orders([s.launchable(k) for k in range(1, FIRST_LAUNCHES + 1)],
                                   rng, s.dead, s.groups)
        return Launch(number, s.first[number - 1])
    for turn in (number, number + 1):  # the nodes this launch leaves out may be all of them
        order = _targeted(s, set(s.launchable(turn)), rng)
        if order:
            return Launch(number, order)
    return None


def _targeted(s: Screen, here: set[int], rng: np.random.Generator) -> tuple[int, ...]:
    """A reference pair of cleared nodes first, where two can talk (each unresolved
    node's value is its pair against its own launch's reference pairs); then each
    unresolved node meets a cleared one it can talk to; beyond the cleared, they meet
    each other; one that can talk to none left sits the round out. Then as many more
    reference pairs (at least REFERENCE_PAIRS in all), whose spread is what a typical
    node's value varies by in these launches (judge's prior): the round holds more nodes,
    never more rounds. Without a reference pair, the launch's other pairs are the
    reference, so a round of one pair tells nothing and is not planned."""
    open_ = [int(x) for x in rng.permutation([x for x in s.unresolved if x in here])]
    partners = [int(x) for x in rng.permutation([x for x in s.cleared if x in here])]
    first = _reference_pair(s, partners) if open_ else None
    order: list[int] = []
    while open_:
        x = open_.pop()
        mate = next((p for p in partners + open_ if frozenset((x, p)) not in s.dead), None)
        if mate is not None:
            (partners if mate in partners else open_).remove(mate)
            order += [x, mate]
    if not order or (first is None and len(order) < 4):
        return ()
    wanted = max(REFERENCE_PAIRS, len(order) // 2) - (first is not None)
    order += first or []
    for _ in range(wanted):
        more = _reference_pair(s, partners)
        if more is None:
            break
        order += more
    return tuple(order)


def _reference_pair(s: Screen, partners: list[int]) -> list[int] | None:
    """Two of the cleared `partners` that can talk, taken out of them; None if none."""
    for i, x in enumerate(partners):
        mate = next((p for p in partners[i + 1:] if frozenset((x, p)) not in s.dead), None)
        if mate is not None:
            partners.remove(x)
            partners.remove(mate)
            return [x, mate]
    return None


def paired_values(s: Screen, obs: Observations, family: list[int]
                  ) -> tuple[np.ndarray, tuple[float, float] | None]:
    """The second stage's launches x family: each node's pair (its mean log bandwidth,
    both ways) less the median of its launch's reference pairs: the pairs of two nodes
    cleared before the launch was planned, or in a launch with none (too few cleared),
    every other pair of the launch (NaN where the node or any reference was not
    measured). A factor the whole launch shares cancels: fitted against one level over
    every round, a node at the threshold was named in 35.5% of 200 simulated screens of
    64 nodes whose second-stage launches ran 5% slower, and cleared in 46.5% where they
    ran 5% faster (issue 49; bench/screen.py launches). The partner is taken as the
    typical node (cleared for looking fast, its fitted effect is too high: the winner's
    curse), as are the references. With the
    prior its variance is moderated towards (None with no launch of two cleared
    references): the cleared references' spread about their launch's mean, pooled over
    launches (sum(R_L - 1) degrees of freedom), times 1 + the mean over those launches
    of the variance of a median of R_L pairs in units of one pair's (1/R_L up to 2, then
    the large-sample pi/2R_L, above the exact one at 3 and 4), since a node's value is one
    pair, like a reference, less that median."""
    launches = len(s.launches)
    before = np.full(s.nodes, np.inf)  # the launch after which each node was cleared
    for x, at in s.cleared.items():
        before[x] = at
    rows = obs.launch > FIRST_LAUNCHES
    launch, low, high = obs.launch[rows], np.minimum(obs.source[rows], obs.dest[rows]), \
        np.maximum(obs.source[rows], obs.dest[rows])
    # each pair of a launch: its value, the mean of its two directions
    key = (launch.astype(np.int64) * s.nodes + low) * s.nodes + high
    pairs, index = np.unique(key, return_inverse=True)
    value = np.bincount(index, obs.log_bw[rows]) / np.bincount(index)
    at, rest = np.divmod(pairs, s.nodes * s.nodes)
    first, second = np.divmod(rest, s.nodes)
    cleared = (before[first] < at) & (before[second] < at)
    centre = np.full(pairs.size, np.nan)
    spread, df, factor = 0.0, 0, []
    for k in np.unique(at):
        here = at == k
        refs = value[here & cleared]
        if refs.size:
            centre[here] = np.median(refs)
            if refs.size > 1:  # the references' spread about their mean
                spread += float(np.sum((refs - refs.mean()) ** 2))
                df += refs.size - 1
                factor.append(1 / refs.size if refs.size <= 2 else math.pi / (2 * refs.size))
        else:
            centre[here] = median_of_others(value[here])
    values = np.full((launches - FIRST_LAUNCHES, len(family)), np.nan)
    place = {x: i for i, x in enumerate(family)}
    for end in (first, second):
        for j in np.nonzero([x in place for x in end.tolist()])[0]:
            values[at[j] - FIRST_LAUNCHES - 1, place[int(end[j])]] = value[j] - centre[j]
    if not df:
        return values, None
    return values, (spread / df * (1 + float(np.mean(factor))), float(df))


def judge(s: Screen, alpha: float = ALPHA) -> None:
    """The first stage, after its FIRST_LAUNCHES: every node that answers tested on its
    launch values, one family of them (BH, health._tests), named or cleared for good. The
    second stage, at each of its looks: the nodes the first left unresolved and no look
    has cleared, one family, each tested on its first-stage estimate and its launch values
    since, combined (staged_tests), the looks held together to the rest of alpha (a
    Pocock boundary)."""
    launches = len(s.launches)
    if launches < FIRST_LAUNCHES:
        return
    obs = s.obs
    if s.groups is not None:
        mu, a, v = fit_nodes(s.nodes, s.obs, s.groups)
        if launches == FIRST_LAUNCHES and v:
            _judge_links(s, launches, mu, a, sorted(v), alpha)
        # the nodes judged beyond the named links alone, and every link of a group named
        # as its uplink (one of its links not named, its nodes paired across it looked
        # slow: a node of that group named in 3% of simulated screens of 4 groups of 8);
        # each group term fitted where none is slow only added noise (a node named in 30%
        # of those screens with nothing slow)
        uplinks = {g["groups"][0] for g in group_suspects(s) if len(g["groups"]) == 1}
        obs = without_links(s.obs, s.groups, {k: v[k] for k in v
                                              if k in s.slow_links or uplinks & set(k)})
    limit = Threshold(s.threshold)
    if launches == FIRST_LAUNCHES:
        family = s.active
        mu, a, _ = fit_nodes(s.nodes, obs)
        values, reference, spread = centred_on_others(
            launch_values(s.nodes, launches, obs, mu, a)[:, family])
        tested = _tests(values, limit, alpha * FIRST_SHARE, shared=(reference, spread))
        d, se, df = tested.stage.d, tested.stage.se, tested.stage.df
        s.first_stage = {x: (d[i], se[i], df[i]) for i, x in enumerate(family)}
        before = np.zeros(len(family))  # launches of an earlier stage the tests used
    else:
        plan = looks(s.nodes)
        if launches - FIRST_LAUNCHES not in plan or not s.second:
            return
        active = set(s.active)  # a property: once, not once a node
        family = [x for x in s.second if x in active and x not in s.cleared]
        values, prior = paired_values(s, obs, family)  # each against its launch's references
        # the first stage's evidence joins these fresh values (an adaptive design,
        # staged_tests), weighted by launches as this look planned them
        first = Stage(*np.array([s.first_stage.get(x, (np.nan,) * 3) for x in family]).T)
        level = sequential_level(tuple(FIRST_LAUNCHES + k for k in plan),
                                 alpha * (1 - FIRST_SHARE))
        tested = _tests(values, limit, level, earlier=(first, FIRST_LAUNCHES / launches),
                        prior=prior)
        before = np.where(np.isfinite(first.se), FIRST_LAUNCHES, 0)
    for i, x in enumerate(family):
        if x in s.named or x in s.cleared:
            continue
        s.judged[x] = c = tested.claim(i, "node", s.names[x], earlier=int(before[i]),
                                       evidence={"stage": 1 if launches == FIRST_LAUNCHES
                                                 else 2})
        if c.word == WORDS.over:
            s.named[x] = launches
        elif c.word == WORDS.under:
            s.cleared[x] = launches
    if launches == FIRST_LAUNCHES:
        s.second = s.unresolved
    # an untested node's interval is unbounded
    s.history.append({"launch": launches, "rounds": s.rounds, "family": len(family),
                      "ci": {x: s.judged[x].interval or (0.0, math.inf) for x in family}})


def _judge_links(s: Screen, launches: int, mu: float, a: np.ndarray,
                 keys: list[tuple[int, int]], alpha: float) -> None:
    """The pairs of switch groups, once, on the first stage's launches: one family of
    them (BH), each named where its pairs across are more than the threshold slower than
    their nodes predict, beyond doubt."""
    values = link_values(launches, s.obs, s.groups, mu, a, keys)
    tested = _tests(values, Threshold(s.threshold), alpha)
    for i, key in enumerate(keys):
        s.links[key] = tested.claim(i, "group", " ".join(s.group_names[g] for g in key))


def group_suspects(s: Screen) -> list[dict]:
    """The named pairs of groups as the groups behind them: a group in every named pair,
    two or more of them, is that group's uplink; else each named pair. Each with its
    claim: the links' ratio (an uplink's: their geometric mean), interval (one link's),
    the largest of their p and their fewest launches."""
    named = sorted(s.slow_links)
    for g in {x for key in named for x in key}:
        if len(named) >= 2 and all(g in key for key in named):
            ratio = float(np.exp(np.mean([np.log(s.links[k].ratio) for k in named])))
            return [{"groups": (g,), "links": named, "claim": _group(s, (g,), named, ratio)}]
    return [{"groups": key, "links": [key], "claim": _group(s, key, [key], s.links[key].ratio)}
            for key in named]


def _group(s: Screen, groups: tuple[int, ...], links: list[tuple[int, int]],
           ratio: float) -> Claim:
    which = [s.group_names[x] for x in groups]
    what = (f"group {which[0]}: {sum(s.groups == groups[0])} nodes, uplink "
            f"{units.ratio(ratio)} of the pairs within" if len(which) == 1 else
            f"groups {which[0]} and {which[1]}: pairs between them {units.ratio(ratio)} of "
            "the pairs within")
    found = [s.links[k] for k in links]
    members = [s.names[x] for x in range(s.nodes) if s.groups[x] in groups]
    return Claim(FAMILY["group"], " ".join(which), ratio,
                 found[0].interval if len(found) == 1 else None, max(c.p for c in found),
                 WORDS.over, min(c.launches for c in found), True, None, True,
                 {"kind": "group", "hosts": members, "groups": which, "what": what},
                 REMEDY["group"])


def verdicts(s: Screen, transient_ok: bool = False) -> list[Claim]:
    """What a gate and JUnit read: each node's claim (a hung one's in its fault's place;
    one never tested, inconclusive), each fault traced (named by host: a rank varies;
    a transient stall passes with `transient_ok`: --transient ok), each slow group."""
    hung, before = s.hung, "not tested: the screen ended before its first look"
    out = [s.judged.get(x) or dataclasses.replace(unmeasured(FAMILY["node"], host), seen=before)
           for x, host in enumerate(s.names) if x not in hung]
    for f in sorted(s.faults, key=lambda f: FAULT_ORDER.index(f["kind"])):
        out.append(fault_claim(f["kind"], " ".join(s.names[x] for x in sorted(f["nodes"]))
                               or "host unknown",
                               f"{where(s, f)}: {f['evidence']} (round {f['launch']})",
                               passes=f["kind"] == "stalled" and transient_ok))
    return out + [g["claim"] for g in group_suspects(s)]


def where(s: Screen, fault: dict) -> str:
    """A fault's hosts, and its ranks where traced: `h1 -> h2`, `h4 rank 3`."""
    return fault_where([s.names[x] for x in fault["nodes"]], fault.get("ranks", ()))


def run_screen(nodes: int, measure: Callable[[Launch], Observations], threshold: float,
               rng: np.random.Generator, alpha: float = ALPHA,
               groups: np.ndarray | None = None, group_names: list[str] = (),
               names: list[str] = ()) -> Screen:
    """The whole screen: launches chosen by next_launch, measured by `measure` (the real
    launches, or a simulation), judged after each; `groups`: each node's switch group;
    `names`: the hosts."""
    s = Screen(nodes, threshold, groups=groups, group_names=list(group_names),
               names=list(names))
    while (launch := next_launch(s, rng)) is not None:
        try:
            found = measure(launch)
        except Faults as faults:  # the round again, in a fresh launch without them
            s.faults += [{**f, "launch": launch.number} for f in faults.found]
            s.first = s.first if launch.number > FIRST_LAUNCHES else []
            continue
        s.launches.append(launch)
        s.obs = s.obs.add(found)
        judge(s, alpha)
    return s
