"""Which node or link is bad (docs/health.md): every pair's bandwidth and latency from the
node-level patterns (native pairs, shift), a robust additive model of the log bandwidths
fitted in each launch, and the suspects it names with launch-level intervals.

The model, per launch: log b_xy = mu + a_x + a_y (+ s_d in shift, d = y - x mod N) + e_xy,
fitted by medians (Tukey's median polish, extended to a node's effect on both ends of its
pairs), so that one bad node or link moves the others' effects little. A node is its a_x,
a link its residual e_xy, a step its s_d: each a log ratio to what the rest of the matrix
predicts. The launch is the unit (CONTRIBUTING.md): each candidate's K values, one per
launch, give a t interval and a one-sided t test of "more than `threshold` slower", adjusted by
Benjamini-Hochberg over the candidates of its kind; one is named where the adjusted p is
below 5%. Each candidate's spread between launches is moderated towards the one all
candidates of its kind share, with the prior's weight estimated (the verdict core's
prior): with 3 launches, a t of 2 degrees of freedom alone left a link at half its rate (a
fake matrix, 2% noise) at p 0.08 after the adjustment over 64 candidates. Nodes, steps and
links are separate families (links would swamp nodes). A node not measured in a launch
is missing there, never typical. A node is cleared where the test of "no more than the
threshold slower" passes; one neither named nor cleared is unresolved. A link through a
named node is that node's, not named again.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator, NamedTuple

import numpy as np

from ..stats.verdict import (ALPHA, DEFAULTS, INCONCLUSIVE, UNDETERMINED, Claim, Threshold,
                              VerdictSpec, more_launches, parse_threshold, unmeasured)
from ..stats.verdict.inference import (NO_SPREAD, Stage, empirical_null, family_tests, moderated,
                                       staged_tests)
from ..store.rows import PairCase
from ..stats.verdict.health import (FAMILY, REMEDY, WORDS, fault_claim, fault_where)

DEFAULT_THRESHOLD = parse_threshold(DEFAULTS["health"].threshold).fraction
PATTERNS = ("pairs", "shift")


SWEEPS = 20  # median polish converges in a few; a cap for a matrix that will not
TOLERANCE = 1e-3  # in log bandwidth: 0.1%, inside any launch's noise


@dataclass
class Matrices:
    """Per launch, node x node: bandwidth x -> y (bytes/s) at the largest size and latency
    at the smallest (s); NaN on the diagonal and where nothing was measured."""
    nodes: list[str]
    pattern: str
    bandwidth: np.ndarray  # launches x N x N
    latency: np.ndarray
    bandwidth_bytes: int
    latency_bytes: int
    rounds: int | None = None  # the rounds (pairs) or distances measured, over the launches
    _medians: dict = field(default_factory=dict, repr=False)

    @property
    def launches(self) -> int:
        return self.bandwidth.shape[0]

    def median(self, which: str) -> np.ndarray:
        """Over launches; the diagonal NaN. Kept: every view asks for it, and nanmedian
        over a 1024-node check's launches takes 0.2 s."""
        if which not in self._medians:
            values = getattr(self, which)
            missing = np.isnan(values)
            if (missing.any(axis=0) & ~missing.all(axis=0)).any():  # a pair some launch lacks
                with warnings.catch_warnings():  # the diagonal: NaN in every launch
                    warnings.simplefilter("ignore", RuntimeWarning)
                    self._medians[which] = np.nanmedian(values, axis=0)
            else:
                self._medians[which] = np.median(values, axis=0)
        return self._medians[which]

    def by_distance(self, which: str) -> np.ndarray:
        """N x (N-1): row x, column d-1, the figure from x to x + d (shift's view)."""
        m, n = self.median(which), len(self.nodes)
        return np.array([[m[x, (x + d) % n] for d in range(1, n)] for x in range(n)])


def node_names(context: dict, ppn: int) -> list[str]:
    """Node x's host as the launch placed its ranks: rank x*ppn's (native/nodes.h)."""
    placement = sorted(context["placement"], key=lambda p: p["rank"])
    return [placement[r]["host"] for r in range(0, len(placement), ppn)]


# The phase each figure is read from, by pattern: the sender's stream and the round trip
# (pairs), the receiver's stream (shift).
PHASES = {"pairs": {"bandwidth": "sent", "latency": "round_trip"},
          "shift": {"bandwidth": "received", "latency": "received"}}


def matrices(cases: Iterable[PairCase], pattern: str, nodes: list[str], ppn: int,
             sizes: list[int], launches: list[int],
             places: dict[int, np.ndarray] | None = None) -> Matrices:
    """The matrices of one health run's cases (every round or distance, two sizes or one),
    read one at a time: a 1024-node check's are 450 MB of samples. `places`: launch number
    -> each of its nodes' index among `nodes`, for a launch of some of them (a check
    measured again without a fault: preflight.check_hosts); else the launch holds all."""
    n = len(nodes)
    out = {w: np.full((len(launches), n, n), np.nan) for w in ("bandwidth", "latency")}
    rounds = 0
    for c in cases:
        if (c.launch or 1) not in launches:
            continue  # a launch that did not complete: its matrix is partial
        k = launches.index(c.launch or 1)
        rounds += c.bytes == sizes[-1]
        for which, size in (("bandwidth", sizes[-1]), ("latency", sizes[0])):
            if c.bytes == size:
                _fill(out[which][k], c, ppn, pattern, which, (places or {}).get(c.launch))
    return Matrices(nodes, pattern, out["bandwidth"], out["latency"], sizes[-1], sizes[0],
                    rounds)


def _middle(samples: np.ndarray) -> np.ndarray:
    """Each row's median: np.median's fixed cost was most of the matrices' time (2 calls
    a case, 12276 cases at 1024 nodes)."""
    n = samples.shape[1]
    middle = sorted({(n - 1) // 2, n // 2})
    ordered = np.partition(samples, middle, axis=1)
    return (ordered[:, middle[0]] + ordered[:, middle[-1]]) / 2


def _fill(m: np.ndarray, c: PairCase, ppn: int, pattern: str, which: str,
          place: np.ndarray | None = None) -> None:
    """One case's pairs into m. pairs: x's sent stream is x -> peer, its round trip the
    pair's latency (half of it). shift: x's received stream is source -> x, and its time
    per message under the full load the latency. A node's ppn streams move ppn W n bytes
    in the slowest one's time. Vectorised over the nodes: a 1024-node check has 2046
    cases of 1024 ranks a launch. `place`: the launch's nodes as m's (None: the same)."""
    times = _middle(c.phases[PHASES[pattern][which]])
    per_rank = times.reshape(-1, ppn)  # nodes x ppn
    peers = c.peers.reshape(-1, ppn)[:, 0]
    local = np.nonzero(peers >= 0)[0]
    node, other = local, peers[local] // ppn
    if place is not None:
        node, other = place[node], place[other]
    window = c.window or 1
    if which == "bandwidth":
        if c.bytes:
            source, dest = (node, other) if pattern == "pairs" else (other, node)
            m[source, dest] = ppn * window * c.bytes / per_rank[local].max(axis=1)
    elif pattern == "pairs":
        m[node, other] = _middle(per_rank[local]) / 2
    else:
        m[other, node] = _middle(per_rank[local]) / window


@dataclass
class Fit:
    """One launch's model of log bandwidth."""
    mu: float
    nodes: np.ndarray  # a_x
    residuals: np.ndarray  # N x N, NaN where unmeasured
    steps: np.ndarray | None  # s_d for d = 1 .. N-1 (shift), else None


def _row_medians(m: np.ndarray) -> np.ndarray:
    """Each row's median over its finite values (NaN: none): np.nanmedian's masked-array
    path took 0.25 s a sweep at 256 nodes. Rows with as many values each (every pair
    measured) take one np.median of the values packed; others sort."""
    finite = np.isfinite(m)
    counts = finite.sum(axis=1)
    if counts.min() == counts.max() and counts[0]:
        return np.median(m[finite].reshape(m.shape[0], counts[0]), axis=1)
    ordered = np.sort(np.where(finite, m, np.inf), axis=1)
    rows = np.arange(m.shape[0])
    low, high = np.maximum(counts - 1, 0) // 2, counts // 2
    with np.errstate(invalid="ignore"):
        found = (ordered[rows, low] + ordered[rows, np.minimum(high, m.shape[1] - 1)]) / 2
    return np.where(counts > 0, found, np.nan)


def _distances(n: int) -> np.ndarray:
    x = np.arange(n)
    return (x[None, :] - x[:, None]) % n  # [x, y]: y - x mod N


def fit(log_bw: np.ndarray, steps: bool = False) -> Fit:
    """Median polish of log b_xy = mu + a_x + a_y (+ s_{y-x}) + e_xy over the measured
    pairs: each sweep moves every a_x by the median of its pairs' residuals (both
    directions), then the steps by the median at each distance, then centres both on
    their medians into mu."""
    n = log_bw.shape[0]
    mu = float(np.nanmedian(log_bw))
    a = np.zeros(n)
    dist = _distances(n)
    s = np.zeros(n)  # s[0] unused: the diagonal
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows: unmeasured nodes
        for _ in range(SWEEPS):
            r = log_bw - mu - a[:, None] - a[None, :] - s[dist]
            step = _row_medians(np.concatenate([r, r.T], axis=1))
            step = np.where(np.isfinite(step), step, 0.0)
            a += step
            centre = float(np.median(a))
            a -= centre
            mu += 2 * centre
            moved = float(np.max(np.abs(step)))
            if steps:
                r = log_bw - mu - a[:, None] - a[None, :] - s[dist]
                by_d = np.array([np.nanmedian(r[dist == d]) for d in range(1, n)])
                by_d = np.where(np.isfinite(by_d), by_d, 0.0)
                s[1:] += by_d
                centre = float(np.median(s[1:]))
                s[1:] -= centre
                mu += centre
                moved = max(moved, float(np.max(np.abs(by_d))))
            if moved < TOLERANCE:
                break
        residuals = log_bw - mu - a[:, None] - a[None, :] - s[dist]
    unmeasured = ~(np.isfinite(log_bw).any(axis=0) | np.isfinite(log_bw).any(axis=1))
    return Fit(mu, np.where(unmeasured, np.nan, a), residuals, s[1:].copy() if steps else None)


# Up to this many nodes each node's effect is taken against a fit of the others alone;
# above, against the others' effects in the fit of all: there a slow node's 2 of each
# other node's 2(N-1) pairs pulled the others' effects, and so its own, towards it by
# +0.005 on the log at 4 nodes, +0.002 at 5 and +0.0013 at 6, within the simulation's
# error (0.0007) from 7 up (4000 simulated launches each, a node at 0.8, 3% node and 5%
# pair noise); the refits cost N fits a launch
REFIT_NODES = 8


def against_others(log_bw: np.ndarray, whole: Fit, steps: bool) -> tuple[np.ndarray, np.ndarray]:
    """One launch's node effects, each against the typical of the OTHER nodes: the log
    ratio of the node's pairs to what the others' effects predict, and the log bandwidth
    of the others' typical pair (what a pair of two typical nodes is expected to move).
    Up to REFIT_NODES nodes each node's is the median of its 2(N-1) residuals from a fit
    of the matrix without it (the others' effects centred on their median); above, the
    fit of all centred on the others' median (median_of_others)."""
    n = log_bw.shape[0]
    if n > REFIT_NODES:
        typical = median_of_others(whole.nodes)
        return whole.nodes - typical, whole.mu + 2 * typical
    effect, typical = np.full(n, np.nan), np.full(n, np.nan)
    dist = _distances(n)
    for x in range(n):
        if np.isnan(whole.nodes[x]):
            continue  # not measured in this launch: missing, never typical
        rest = log_bw.copy()
        rest[x, :] = rest[:, x] = np.nan
        f = fit(rest, steps)
        s = np.r_[0.0, f.steps] if steps else np.zeros(n)
        others = np.delete(f.nodes, x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # no other measured
            centre = float(np.nanmedian(others))
            out = np.concatenate([log_bw[x] - f.mu - f.nodes - s[dist[x]],
                                  log_bw[:, x] - f.mu - f.nodes - s[dist[:, x]]])
            effect[x] = float(np.nanmedian(out)) - centre
        typical[x] = f.mu + 2 * centre
    return effect, typical


def median_of_others(effects: np.ndarray) -> np.ndarray:
    """Each effect's typical among the others: the median of the finite effects but its
    own (NaN for its own NaN, or where no other is finite). Centring a node on the median
    of all N, itself among them, pulls a slow node towards typical: with one node low,
    the median of 4 is the mean of the lower two of the other three, 0.42 of their
    spread below their centre (the order statistics of a normal sample), and a node at
    the threshold among 4 was cleared in 38.5% of simulated checks (issue 49). Against
    the others alone its effect is unbiased wherever their noise is symmetric: the
    leave-one-out estimate of its deviation (as Cook's distance and the studentized
    deleted residual measure a case against a fit without it: Cook and Weisberg,
    Residuals and Influence in Regression, 1982, chs. 2-3)."""
    finite = np.isfinite(effects)
    out = np.full(effects.shape, np.nan)
    m = int(finite.sum())
    if m < 2:
        return out
    order = np.argsort(effects[finite], kind="stable")
    ordered = effects[finite][order]
    rank = np.empty(m, dtype=int)
    rank[order] = np.arange(m)  # each effect's place among the sorted
    low, high = (m - 2) // 2, (m - 1) // 2  # the middle of the m - 1 others
    # the others' j-th smallest is the j-th of all, or the (j+1)-th at or past its own place
    out[finite] = (ordered[low + (low >= rank)] + ordered[high + (high >= rank)]) / 2
    return out


@dataclass
class Candidate:
    """A node, directed link or step judged: its log ratio in each launch and its claim
    (the ratio its values give, measured over expected bandwidth; the claim's evidence the
    figures its JSON item gives: bytes/s as MB/s, geometric means over launches)."""
    kind: str  # node, link, step
    hosts: list[str]
    values: np.ndarray
    claim: Claim
    direction: str | None = None  # a link's, "a->b"
    distance: int | None = None  # a step's

    def as_dict(self) -> dict:
        """Its JSON item (schema health): the evidence, then the claim's figures."""
        c, e = self.claim, self.claim.evidence
        out = {**{k: e[k] for k in ("kind", "hosts", "metric", "bytes", "measured",
                                    "expected")},
               "ratio": c.ratio, "ci": list(c.interval) if c.interval else None,
               "p_value": c.p, "launches": c.launches}
        return {**out, **{k: e[k] for k in ("direction", "distance") if k in e}}


@dataclass
class Links:
    """The directed links tested and their tests, kept as arrays (a 1024-node check has a
    million); their claims are made when asked (Health.verdicts)."""
    index: np.ndarray  # N x N: link x -> y's place in `tested`, -1 where not tested
    tested: Tested


@dataclass
class Health:
    matrices: Matrices
    threshold: float
    candidates: list[Candidate] = field(default_factory=list)  # every node and step
    suspects: list[Candidate] = field(default_factory=list)
    links: Links | None = None
    detectable: float | None = None  # a node's bandwidth ratio named with 80% power
    fits: list[Fit] = field(default_factory=list)
    note: str | None = None  # why nothing could be named
    # what stopped a launch, traced (preflight.diagnose): kind (unreachable: a pair that
    # cannot talk; hung: a node that answers none), hosts, evidence; judged without them
    faults: list[dict] = field(default_factory=list)

    @property
    def cleared(self) -> list[str]:
        """Nodes no more than the threshold slower, beyond doubt."""
        return [c.hosts[0] for c in self.candidates
                if c.kind == "node" and c.claim.word == WORDS.under]

    @property
    def hung(self) -> list[str]:
        return [f["hosts"][0] for f in self.faults if f["kind"] == "hung"]

    @property
    def unreachable(self) -> list[tuple[str, ...]]:
        return [tuple(f["hosts"]) for f in self.faults if f["kind"] == "unreachable"]

    @property
    def drain(self) -> list[str]:
        return self.hung + [s.hosts[0] for s in self.suspects if s.kind == "node"]

    @property
    def unresolved(self) -> list[str]:
        """Nodes neither named nor cleared: more launches would decide them."""
        if self.note:
            return []
        decided = set(self.drain) | set(self.cleared)
        return [n for n in self.matrices.nodes if n not in decided]

    def node_scores(self) -> dict[str, float]:
        """Each node's bandwidth over the typical node's (exp a_x, geometric mean over
        launches): 1 is typical, 0.25 a node at a quarter."""
        return {c.hosts[0]: c.claim.ratio for c in self.candidates if c.kind == "node"
                and np.isfinite(c.values).any()}

    def verdicts(self) -> Iterator[Claim]:
        """What a gate and JUnit read: a claim per node, per link (both directions in one:
        the worse-judged) and per step named; a fault traced in place of what it stops. A
        link through a drained node is that node's failure: undetermined. One at a time:
        a 1024-node check has half a million links."""
        nodes, drain = self.matrices.nodes, set(self.drain)
        faults = {(FAMILY[f["kind"]], " ".join(sorted(f["hosts"], key=nodes.index))): f
                  for f in self.faults}
        judged = {(c.claim.family, c.claim.subject): c.claim
                  for c in self.candidates + self.suspects}

        def one(kind: str, hosts: list[str], pair: Claim | None = None) -> Claim:
            subject = " ".join(hosts)
            fault = faults.get((FAMILY[kind], subject))
            if fault:
                return fault_claim(fault["kind"], subject,
                                   f"{fault_where(fault['hosts'])}: {fault['evidence']}")
            found = judged.get((FAMILY[kind], subject))
            if found is not None and (kind == "node" or found.failing):
                return found
            if self.note:
                return replace(unmeasured(FAMILY[kind], subject), seen=self.note)
            pair = pair or replace(unmeasured(FAMILY[kind], subject),
                                   seen="a way measured in fewer than 2 launches")
            through = sorted(drain & set(hosts))
            return replace(pair, word=UNDETERMINED, failing=False,
                           remedy=f"through drained node {', '.join(through)}") \
                if through else pair

        yield from (one("node", [n]) for n in nodes)
        yield from (one("link", [nodes[x], nodes[y]], pair) for x, y, pair in self._pairs())
        yield from (c.claim for c in self.suspects if c.kind == "step")

    def _pairs(self) -> Iterator[tuple[int, int, Claim | None]]:
        """Each pair x < y with its links' claim: the worse-judged direction's (named, then
        untested, undetermined, cleared; then the lower ratio); None where a direction was
        not tested."""
        n = len(self.matrices.nodes)
        x, y = np.triu_indices(n, 1)
        if self.links is None or self.note:
            yield from ((a, b, None) for a, b in zip(x.tolist(), y.tolist()))
            return
        t, index = self.links.tested, self.links.index
        there, back = index[x, y], index[y, x]
        rank = np.where(t.named, 3, np.where(~t.tested, 2, np.where(t.cleared, 0, 1)))
        first = (rank[there] > rank[back]) | ((rank[there] == rank[back])
                                              & (t.ratio[there] <= t.ratio[back]))
        worse = np.where((there < 0) | (back < 0), -1, np.where(first, there, back))
        for a, b, d in zip(x.tolist(), y.tolist(), worse.tolist()):
            subject = f"{self.matrices.nodes[a]} {self.matrices.nodes[b]}"
            yield a, b, None if d < 0 else t.claim(d, "link", subject)


class Tested(NamedTuple):
    """_tests' outcome per candidate: named, cleared, the adjusted p of being named, the
    interval as bandwidth ratios, the ratio named with 80% power (NaN: not estimated),
    the values' own estimates (a later stage's `earlier`), the bandwidth ratio at the
    interval's middle, the launches that measured each, the adjusted p of being cleared
    and whether it was tested (a spread known). Arrays inside the statistics; what leaves
    for the views is each one's claim."""
    named: np.ndarray
    cleared: np.ndarray
    p: np.ndarray
    low: np.ndarray
    high: np.ndarray
    seen: np.ndarray
    stage: Stage
    ratio: np.ndarray
    launches: np.ndarray
    under: np.ndarray
    tested: np.ndarray

    def claim(self, i: int, kind: str, subject: str, ratio: float | None = None,
              evidence: dict | None = None, earlier: int = 0) -> Claim:
        """Candidate i's claim: named, suspect; cleared; else undetermined, or inconclusive
        where untested. The p of the word's test (of being named where none passed), the
        interval, the launches it stands on (`earlier`: a first stage's); `ratio`: the
        verb's own figure where it is taken otherwise (the JSON's, as it always was)."""
        ratio = float(self.ratio[i]) if ratio is None else ratio
        launches = int(self.launches[i]) + earlier
        if not self.tested[i]:
            return Claim(FAMILY[kind], subject, ratio, None, None, INCONCLUSIVE, launches,
                         True, None, False, evidence or {})
        named, cleared, seen = bool(self.named[i]), bool(self.cleared[i]), float(self.seen[i])
        return Claim(FAMILY[kind], subject, ratio, (float(self.low[i]), float(self.high[i])),
                     float(self.under[i] if cleared else self.p[i]),
                     WORDS.over if named else WORDS.under if cleared else UNDETERMINED,
                     launches, True, seen if math.isfinite(seen) else None, named,
                     evidence or {}, REMEDY[kind] if named else None)


def _tests(values: np.ndarray, threshold: Threshold, alpha: float = ALPHA,
           earlier: tuple[Stage, float] | None = None,
           prior: tuple[float, float] | None = None,
           shared: tuple[np.ndarray, float] | None = None) -> Tested:
    """values: launches x candidates of one kind, one family (log bandwidth ratios; NaN
    where a launch did not measure the candidate: missing, never typical). The verdict
    core's tests of each candidate's log time ratio (its variance moderated towards the
    family's, the prior's weight estimated): which are named (more than the threshold
    slower) and cleared (no more than that), their BH-adjusted p of being named, each
    interval as bandwidth ratios (FCR-adjusted where named), and the bandwidth ratio each
    test names with 80% power. `alpha`: what each adjusted p is held to (the screen's
    looks each spend a share of ALPHA). `earlier`: the same candidates' estimates from a
    first stage and its weight, combined with these (staged_tests; a second stage on fresh
    values of candidates the first left open). `prior`: the variance (s0^2, d0) the
    candidates' are moderated towards, measured apart (else the one they share). `shared`:
    each candidate's reference and that reference's variance, where the values share
    errors (the screen's fitted partners) and each was centred on the others' median
    (screen.centred_on_others): the standard errors are widened to the spread of the means
    about one centre, the references added back (empirical_null; about each one's own
    reference the middle ones sit apart by half the gap between them, which is no error
    of theirs: the widening was 2.1 times instead of 1.2 at 8 nodes), then the
    reference's variance is added."""
    k = np.sum(np.isfinite(values), axis=0)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(values, axis=0)
        var, df = moderated(np.nanvar(values, axis=0, ddof=1), np.maximum(k - 1, 0),
                            given=prior)
    se = np.sqrt(var / np.maximum(k, 1))
    tested = (k > 1) & (df > 0) & (se ** 2 > NO_SPREAD)
    if shared is not None and tested.any():
        centre, spread = shared
        se[tested], df[tested] = empirical_null(mean[tested] + centre[tested], se[tested],
                                                df[tested])
        se = np.sqrt(se ** 2 + spread)
    p, named, cleared = np.ones(k.size), np.zeros(k.size, bool), np.zeros(k.size, bool)
    under = np.ones(k.size)
    low, high = np.zeros(k.size), np.full(k.size, np.inf)
    seen = np.full(k.size, np.nan)  # the lowest bandwidth ratio named with 80% power
    stage = Stage(-mean, np.where(tested, se, np.nan), df)
    ratio = np.exp(mean)
    if tested.any() and earlier is not None:
        first, weight = earlier
        f = staged_tests(Stage(first.d[tested], first.se[tested], first.df[tested]),
                         Stage(-mean[tested], se[tested], df[tested]), weight,
                         threshold.log, alpha)
        p[tested], named[tested], under[tested] = f.over, f.over < alpha, f.under
        cleared[tested] = (f.under < alpha) & ~named[tested]
        low[tested], high[tested] = np.exp(-f.high), np.exp(-f.low)
        ratio[tested] = np.exp(-f.centre)
    elif tested.any():
        f = family_tests(-mean[tested], se[tested], df[tested], threshold.log, alpha=alpha)
        p[tested], named[tested], under[tested] = f.over, f.over < alpha, f.under
        cleared[tested] = (f.under < alpha) & ~named[tested]
        half = np.where(named[tested], f.fcr, f.plain)
        low[tested], high[tested] = np.exp(mean[tested] - half), np.exp(mean[tested] + half)
        seen[tested] = 1 / f.detectable
    return Tested(named, cleared, p, low, high, seen, stage, ratio, k, under, tested)


def judge(m: Matrices, threshold: float = DEFAULT_THRESHOLD) -> Health:
    """Fit each launch, test every node, directed link and (shift) step, name the suspects.
    Links are tested as arrays (a 1024-node check has a million) and become candidates
    only when named."""
    health = Health(m, threshold)
    n, k = len(m.nodes), m.launches
    with np.errstate(all="ignore"):
        logs = np.log(m.bandwidth)
    if n < 3:
        health.note = "2 nodes: a slow pair cannot be told from a slow node; check 3 or more"
        return health
    if not np.isfinite(logs).any():
        health.note = "no bandwidth was measured (a size above 0 is needed)"
        return health
    # shift's distances are around the ring of a launch's nodes: a launch of some of them
    # (measured again without a fault) has a ring of its own, and no step is fitted
    shift = m.pattern == "shift" and bool(np.isfinite(logs).any(axis=2).all())
    health.fits = fits = [fit(logs[i], shift) for i in range(k)]
    mus = np.array([f.mu for f in fits])
    # launches x N: each node against the others alone, and the others' typical pair
    a, typical = (np.array(v) for v in zip(*(against_others(logs[i], f, shift)
                                             for i, f in enumerate(fits))))
    s = np.zeros((k, 0))
    if shift:
        s = np.array([f.steps for f in fits])  # launches x N-1
        usual = np.array([median_of_others(row) for row in s])  # as the nodes', by distance
        s = s - usual
    e = np.array([f.residuals for f in fits])  # launches x N x N
    # a link in 2 launches or more (a launch without one of its ends misses it)
    measured = np.isfinite(e).sum(axis=0) >= 2
    np.fill_diagonal(measured, False)
    xs, ys = np.nonzero(measured)
    if k < 2:
        health.note = ("one launch: its spread between launches is unknown, so nothing is "
                       f"named; {more_launches('health')}")
    limit = Threshold(threshold)
    tests = {} if health.note else \
        {kind: _tests(values, limit) for kind, values in (("node", a), ("step", s),
                                                          ("link", e[:, xs, ys]))
         if values.size}  # each kind its own family
    if "node" in tests and np.isfinite(tests["node"].seen).any():
        health.detectable = float(np.nanmedian(tests["node"].seen))

    def judged(kind: str, i: int, hosts: list[str], subject: str, values: np.ndarray,
               measured: float, expected: float, **where) -> Candidate:
        """Candidate i of its kind, its claim from its family's tests (none: one launch)."""
        evidence = {"kind": kind, "hosts": hosts, "metric": "bandwidth_MBps",
                    "bytes": m.bandwidth_bytes, "measured": measured / 1e6,
                    "expected": expected / 1e6, **where}
        ratio = math.exp(float(np.nanmean(values)))
        t = tests.get(kind)
        claim = t.claim(i, kind, subject, ratio, evidence) if t is not None else \
            Claim(FAMILY[kind], subject, ratio, None, None, INCONCLUSIVE,
                  int(np.isfinite(values).sum()), True, None, False, evidence, health.note)
        return Candidate(kind, hosts, values, claim, **where)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a node never measured: NaN
        # its pairs with a typical other against the typical pair of two others
        nodes = [judged("node", x, [host], host, a[:, x],
                        float(np.exp(np.nanmean(typical[:, x] + a[:, x]))),
                        float(np.exp(np.nanmean(np.where(np.isfinite(a[:, x]), typical[:, x],
                                                         np.nan)))))
                 for x, host in enumerate(m.nodes)]
    steps = [judged("step", d - 1, [], f"distance {d}", s[:, d - 1],
                    float(np.exp((mus + s[:, d - 1] + usual[:, d - 1]).mean())),
                    float(np.exp((mus + usual[:, d - 1]).mean())), distance=d)
             for d in range(1, s.shape[1] + 1)]
    health.candidates = nodes + steps
    named = [c for c in health.candidates if c.claim.failing]
    if "link" in tests:
        t = tests["link"]
        health.links = Links(np.full((n, n), -1), t)
        health.links.index[xs, ys] = np.arange(xs.size)
        for i in np.nonzero(t.named)[0]:
            x, y = xs[i], ys[i]
            hosts = sorted([m.nodes[x], m.nodes[y]], key=m.nodes.index)
            named.append(judged("link", i, hosts, " ".join(hosts), e[:, x, y],
                                float(np.exp(logs[:, x, y].mean())),
                                float(np.exp((logs[:, x, y] - e[:, x, y]).mean())),
                                direction=f"{m.nodes[x]}->{m.nodes[y]}"))
    bad = {c.hosts[0] for c in named if c.kind == "node"}
    links: dict[tuple, Candidate] = {}  # a pair slow both ways is one link, its worse way
    for c in named:
        if c.kind == "link" and not bad & set(c.hosts):
            key = tuple(c.hosts)
            if key not in links or c.claim.ratio < links[key].claim.ratio:
                links[key] = c
    health.suspects = [c for c in named if c.kind != "link" or links.get(tuple(c.hosts)) is c]
    return health


def health_of(store, run_id: int, threshold: float | None = None) -> Health:
    """A stored health run judged: its nodes from the first launch's placement, ppn from
    its parameters, and the threshold its command gave (or `threshold`, or the default)."""
    row = store.run(run_id)
    settings = row.settings
    if threshold is None:
        spec = VerdictSpec.of(settings.get("verdict"))
        given = spec.threshold if spec else None
        command = row.command
        for i, word in enumerate(command if given is None else []):  # stored before verdicts
            if word == "--threshold" and i + 1 < len(command):
                given = command[i + 1]
            elif word.startswith("--threshold="):
                given = word.partition("=")[2]
        threshold = parse_threshold(given).fraction if given else DEFAULT_THRESHOLD
    ppn = int(settings["params"].get("ppn", 1))
    rows = store.launches(run_id)
    sizes = store.case_sizes(run_id)
    # the launches that measured the matrix: complete, and not a trace's (check_hosts)
    noted = {r.number: r.settings for r in rows}
    launches = [r.number for r in rows if r.status == "complete"
                and not noted[r.number].get("health_trace")] or [1]
    names = settings.get("health_nodes") or node_names(rows[0].context, ppn)
    # a launch of some of the nodes: its nodes in its host order (check_hosts)
    places = {k: np.array(noted[k]["health_part"]) for k in launches
              if noted.get(k, {}).get("health_part")}
    cases = store.case_phases(run_id, (sizes[0], sizes[-1]))
    health = judge(matrices(cases, row.kernel, names, ppn, sizes, launches, places),
                   threshold)
    health.faults = [{"kind": f["kind"], "hosts": [names[x] for x in f["nodes"]],
                      "evidence": f["evidence"]} for f in settings.get("health_faults", [])]
    return health
