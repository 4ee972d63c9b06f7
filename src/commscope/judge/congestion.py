"""Congestion (`commscope congestion`): canaries measured alone and beside aggressors, in
alternating phases of the same launches, as GPCNeT defines its congestion impact factor
(S. Chunduri et al., SC'19; docs/under-load.md). The native `congestion` kernel runs both
roles (native/kernels/congestion.c); this module places the ranks on hosts and reads the
stored cases.

- The congestion impact factor (CIF) of a canary: its time beside the aggressors over its
  time alone, for the median and for the 99th percentile; for a bandwidth canary that is
  its bandwidth alone over its bandwidth beside them, the same ratio. Each launch gives
  one (the two phases are cases of that launch), and the launches are the replicates: a
  paired comparison by the verdict core, with its interval.
- A launch's p99 is Harrell and Davis's estimate on the log of its samples, given from
  P99_MIN_SAMPLES samples a phase on; with fewer it is not estimable (docs/statistics.md,
  "Congestion").
- The aggressors' load: the payload they delivered over the phase's time, beside the
  canaries and alone (the canaries idle). `no bottleneck reached`: the median CIF lies
  within the threshold both ways by two one-sided tests (Schuirmann 1987, the verdict
  core's equivalence), and the aggressors ran at their own rate. An interval that merely
  holds 1 is `undetermined`: 3 launches of a 1.25x CIF hold 1 often.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..stats.stats import harrell_davis, harrell_davis_min_samples
from ..stats.verdict import Threshold
from ..stats.verdict.claim import Claim, Words, claims, unmeasured
from ..stats.verdict.inference import paired

PATTERNS = ("bw", "incast", "alltoall", "bcast")
CANARIES = ("pingpong", "bw", "allreduce")
# Where each member of an aggressor group goes: with the canary's sender ("near", the
# first half of the aggressor hosts) or its receiver ("far", the second half), so that
# the aggressors' traffic crosses the canary's path in the canary's direction.
FAR = {"bw": lambda m, g: m % 2 == 1, "incast": lambda m, g: m == 0,
       "alltoall": lambda m, g: m >= g // 2, "bcast": lambda m, g: m > 0}
CIF_WORDS = Words(over="congested", under="no slowdown", equivalence=True)
LOAD_WORDS = Words(over="aggressors held back", under="aggressors at their own rate",
                   equivalence=True)
NO_BOTTLENECK = "no bottleneck reached"
P99 = 0.99
# Below this many samples a phase's Harrell-Davis p99 is its largest sample or less, the
# p97 of 30 on average, and its interval over launches narrows round that as launches are
# added (bench/congestion.py): no p99 is given from fewer.
P99_MIN_SAMPLES = harrell_davis_min_samples(P99)
# The samples a phase takes (cli/congestion.py): where the log of the estimate is least
# off, 0.01-0.13 of its spread; 0.22-0.32 at 300 samples (bench/congestion.py).
P99_SAMPLES = 100


@dataclass(frozen=True)
class Layout:
    """The launch's hosts in rank order (`spec`: the --hosts form) and who is where."""
    spec: str
    ranks: int
    canaries: tuple[str, str]
    near: tuple[str, ...]
    far: tuple[str, ...]


def layout(canary_hosts: tuple[str, str], near: list[str], far: list[str], pattern: str,
           groups: int, group: int, placebo: bool) -> Layout:
    """Canary 0 and 1 on their hosts, then the aggressors as the kernel numbers them:
    member m of group j is rank 2 + m * groups + j, so each member's block lies on one
    side, `near` the canary sender's or `far` its receiver's. The placebo puts the far
    side's members on the near hosts' second half: the same processes, their traffic
    kept among the near hosts (off the canaries' hosts and whatever joins the sides)."""
    if placebo:
        near, far = near[:len(near) // 2], near[len(near) // 2:]
    # Ranks fill the hosts in the order given, each up to its slots: block by block, a
    # side's hosts taking its blocks' ranks in turn. A side's members are one run of m
    # (FAR), so no host comes back after another has taken a rank.
    sides = [far if FAR[pattern](m, group) else near for m in range(group)]
    ranks_on = [side[j * len(side) // groups] for side in sides for j in range(groups)]
    order = [(h, ranks_on.count(h)) for h in dict.fromkeys(ranks_on)]
    spec = ",".join([f"{canary_hosts[0]}:1", f"{canary_hosts[1]}:1"]
                    + [f"{h}:{n}" for h, n in order])
    return Layout(spec, 2 + groups * group, canary_hosts, tuple(near), tuple(far))


@dataclass(frozen=True)
class Canary:
    """One canary's figures over the launches."""
    kind: str
    bytes: int
    median: Claim
    p99: Claim  # ratio NaN, inconclusive: not estimable from p99_samples
    launches: int
    verdict: str
    p99_samples: int  # the fewest samples of a phase in a launch

    @property
    def p99_estimable(self) -> bool:
        return self.p99_samples >= P99_MIN_SAMPLES


def p99(samples: np.ndarray) -> float:
    """A phase's p99, estimated on the log scale: the Harrell-Davis weights average the top
    order statistics, and on times a heavy tail's largest pulls that average above the
    p99 (Jensen). At the 100 samples the canaries take, the log of the estimate is off by
    0.01-0.13 of its spread on logs, 0.11-0.23 on times, and numpy's interpolated
    percentile by -0.5 (lognormal, Pareto and queueing tails: bench/congestion.py); the
    interval over launches narrows as launches are added, the bias does not."""
    return math.exp(harrell_davis(np.log(samples), P99))


Phase = tuple  # (kind, bytes, isolated, congested): one canary's two phases by launch


def cifs(phases: list[Phase], threshold: Threshold, loaded: bool) -> list[Canary]:
    """Each canary's CIF for the median and the p99, each launch one replicate; `loaded`:
    the aggressors ran at their own rate. One command's canaries ask one question (does
    this pattern congest them?), so their medians are one family and their p99s another,
    adjusted over all the canaries (docs/statistics.md, "Verdicts")."""
    found, families, subjects, owner = [], [], [], []
    fewest = []
    for i, (kind, nbytes, isolated, congested) in enumerate(phases):
        fewest.append(min((len(v) for phase in (isolated, congested) for v in phase.values()),
                          default=0))
        found.append(paired({k: float(np.median(v)) for k, v in congested.items()},
                            {k: float(np.median(v)) for k, v in isolated.items()}))
        families.append("cif median")
        if fewest[-1] >= P99_MIN_SAMPLES:  # else no p99 figure rather than a biased one
            found.append(paired({k: p99(v) for k, v in congested.items()},
                                {k: p99(v) for k, v in isolated.items()}))
            families.append("cif p99")
        subjects += [f"{kind} {nbytes} B"] * (len(found) - len(subjects))
        owner += [i] * (len(found) - len(owner))
    claimed = claims(found, families, subjects, threshold, CIF_WORDS) if found else []
    out = []
    for i, (kind, nbytes, _, _) in enumerate(phases):
        mine = {c.family: c for c, o in zip(claimed, owner) if o == i}
        median = mine["cif median"]
        tail = mine.get("cif p99") or unmeasured("cif p99", median.subject)
        # equivalence within the threshold both ways, not merely an interval that holds 1
        verdict = NO_BOTTLENECK if median.word == CIF_WORDS.under and loaded else median.word
        out.append(Canary(kind, nbytes, median, tail, median.launches, verdict, fewest[i]))
    return out


def cif(isolated: dict[int, np.ndarray], congested: dict[int, np.ndarray], kind: str,
        nbytes: int, threshold: Threshold, loaded: bool) -> Canary:
    """One canary judged alone (cifs of one phase): the bench's and the tests' unit."""
    return cifs([(kind, nbytes, isolated, congested)], threshold, loaded)[0]


def load(alone: dict[int, float], beside: dict[int, float], threshold: Threshold) -> Claim:
    """The aggressors' delivered rate alone over beside the canaries, launch by launch: a
    time ratio, above 1 where the canaries' phase held them back."""
    beside = {k: 1 / v for k, v in beside.items() if v > 0}
    alone = {k: 1 / v for k, v in alone.items() if v > 0}
    if not beside or not alone:  # no rate measured: nothing to compare
        return unmeasured("aggressor load", "aggressors")
    (claim,) = claims([paired(beside, alone)], ["aggressor load"], ["aggressors"], threshold,
                      LOAD_WORDS)
    return claim


def rate(case) -> float:
    """The payload a case's aggressors delivered per second (B/s), each between its first
    and its last completion (native/kernels/congestion.c)."""
    return case.extra.get("aggressor_Bps") or math.nan


@dataclass(frozen=True)
class Judged:
    canaries: list[Canary]
    load: Claim
    alone_Bps: float  # the aggressors' delivered rate alone, the launches' median
    beside_Bps: float  # and beside the canaries
    launches: int
    threshold: Threshold

    no_bottleneck = NO_BOTTLENECK  # the word where the load held back nothing
    p99_min_samples = P99_MIN_SAMPLES

    @property
    def margin(self) -> tuple[float, float]:
        """The CIFs within which `no slowdown` (and `no bottleneck reached`) can hold."""
        return self.threshold.bandwidth_ratio, self.threshold.time_ratio


def judge(store, run_ids: list[int], pattern: str, threshold: Threshold) -> Judged:
    """The runs of one `congestion` command: each canary's run (its phases aggressor=none
    and aggressor=PATTERN) and the aggressors' run alone (canary=idle)."""
    by_run = {run_id: store.cases(run_id) for run_id in run_ids}
    alone = {c.launch: rate(c) for cases in by_run.values() for c in cases
             if c.params.get("canary") == "idle"}
    beside: dict[int, list[float]] = {}
    phases = []
    for cases in by_run.values():
        if not cases or cases[0].params.get("canary") == "idle":
            continue
        isolated = {c.launch: c.samples for c in cases if c.params["aggressor"] == "none"}
        congested = {c.launch: c.samples for c in cases if c.params["aggressor"] == pattern}
        for c in cases:
            if c.params["aggressor"] == pattern:
                beside.setdefault(c.launch, []).append(rate(c))
        phases.append((cases[0].params["canary"], cases[0].bytes, isolated, congested))
    # a canary phase too short for two of the aggressors' iterations to find messages
    # done has no rate (NaN): the others of its launch stand for it
    beside_mean = {k: float(np.nanmean(v)) for k, v in beside.items()
                   if not np.isnan(v).all()}
    held = load(alone, beside_mean, threshold)
    loaded = held.word == LOAD_WORDS.under
    found = cifs(phases, threshold, loaded)
    return Judged(found, held, float(np.nanmedian(list(alone.values()) or [math.nan])),
                  float(np.nanmedian(list(beside_mean.values()) or [math.nan])), len(alone),
                  threshold)
