"""Arrival skew (`commscope run COLL --late RANK:DELAYS`): what a late rank costs the
punctual ranks of a collective (docs/under-load.md).

Every rank starts each sample at an agreed time (--sync window's offset-corrected clocks);
samples cycle through punctual and each delay, and in a late sample one rank waits the
delay before its call (native/sync_window.c). A rank's exit is its end of the call after
the agreed start. For a delay d and each punctual rank i, the **propagated delay** is

    P_i = (exit_i(d) - exit_i(0)) / d,

with d the wait as measured (a sleep overshoots) and each exit the launch's median; the
collective's **skew sensitivity** S(d) is the mean of P_i over the punctual ranks. S = 0: the
late rank is absorbed; S = 1: everyone waits the whole delay; S > 1: the delay grows.
P and S are computed per launch, and their intervals are over launches (the unit:
CONTRIBUTING.md), by the verdict core's `mean_interval`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .stats import ALPHA
from .verdict.claim import INCONCLUSIVE, UNDETERMINED, Claim
from .verdict.inference import mean_interval


def split(rec: dict) -> dict:
    """A --late case record as it is stored: its punctual samples as the case's samples
    (the collective with every rank on time, which every other view reads as it reads any
    case) and its late samples under `late`: each one's delay, late rank, the wait as
    measured and every rank's exit."""
    late = rec["late"]
    n = len(rec["samples_s"])
    invalid = set(rec.get("invalid", []))
    cycle = len(late["delays_s"]) + 1
    punctual = [i for i in range(n) if i % cycle == 0]
    kept = [i for i in range(n) if i % cycle and i not in invalid]
    exits = np.asarray(rec["rank_samples_s"], dtype=float).reshape(-1, n)
    return {**rec,
            "samples_s": [rec["samples_s"][i] for i in punctual],
            "rank_samples_s": exits[:, punctual].tolist(),
            "invalid": [k for k, i in enumerate(punctual) if i in invalid],
            "late": {"rank": late["rank"], "delays_s": late["delays_s"],
                     "wait": late["wait"], "placebo": late["placebo"],
                     "delay_s": [late["delays_s"][i % cycle - 1] for i in kept],
                     "late_rank": [late["ranks"][i] for i in kept],
                     "waited_s": [late["waited_s"][i] for i in kept],
                     "exit_s": exits[:, kept].T.tolist(),
                     "invalid_late": sum(1 for i in range(n) if i % cycle and i in invalid)}}


@dataclass(frozen=True)
class Skew:
    """One delay of one case, over its launches."""
    delay_s: float  # as asked
    waited_s: float  # the median wait as measured
    late_rank: int | str
    placebo: bool
    sensitivity: float
    sensitivity_ci: tuple[float, float] | None  # None: one launch
    propagated: dict[int, float]  # punctual rank -> P_i, the launches' mean
    propagated_ci: dict[int, tuple[float, float] | None]
    launches: int
    samples: int  # late samples of this delay kept, over the launches
    per_launch: dict[int, float]  # launch number -> that launch's S

    @property
    def most(self) -> tuple[int | None, float]:
        """The punctual rank that waited most, and its P (None: no launch measured one)."""
        if not self.propagated:
            return None, math.nan
        rank = max(self.propagated, key=self.propagated.get)
        return rank, self.propagated[rank]


def of_launch(punctual: np.ndarray, invalid: list[int], late: dict, delay: float
              ) -> tuple[dict[int, float], float, int]:
    """One launch: P_i of each punctual rank for this delay, the median wait, the samples.
    `punctual` is the case's ranks x samples exits with everyone on time."""
    keep = np.ones(punctual.shape[1], bool)
    keep[invalid] = False
    if not keep.any():  # every punctual sample started late: no exit on time to measure from
        return {}, math.nan, 0
    on_time = np.median(punctual[:, keep], axis=1)
    chosen = [k for k, d in enumerate(late["delay_s"]) if d == delay]
    exits = np.asarray(late["exit_s"], dtype=float)[chosen]
    who = np.asarray(late["late_rank"])[chosen]
    waited = np.asarray(late["waited_s"], dtype=float)[chosen]
    found = {}
    for rank in range(punctual.shape[0]):
        mine = who != rank
        if mine.any():  # each sample over its own wait: a median of ratios, which a sleep's
            # varying overshoot does not bias as a ratio of medians does (bench/skew.py)
            found[rank] = float(np.median((exits[mine, rank] - on_time[rank]) / waited[mine]))
    return found, float(np.median(waited)), len(chosen)


def skews(cases, rank_samples) -> list[Skew]:
    """Each delay of one case (its stored cases, one per launch, all with `late`);
    `rank_samples(case_id)` reads a stored case's ranks x samples."""
    late = cases[0].extra["late"]
    found = []
    for delay in late["delays_s"]:
        # a launch whose late samples of this delay all started late has none to give
        measured = [(c, *of_launch(rank_samples(c.id), c.extra.get("invalid", []),
                                   c.extra["late"], delay)) for c in cases]
        measured = [m for m in measured if m[1]]
        ranks = sorted(set.intersection(*(set(m[1]) for m in measured))) if measured else []
        p = {r: mean_interval([m[1][r] for m in measured]) for r in ranks}
        s = {m[0].launch: float(np.mean([m[1][r] for r in ranks])) for m in measured
             if ranks}
        mean, ci = mean_interval(list(s.values())) if s else (math.nan, None)
        found.append(Skew(delay, float(np.median([m[2] for m in measured])) if measured
                          else math.nan, late["rank"], late["placebo"], mean, ci,
                          {r: v[0] for r, v in p.items()}, {r: v[1] for r, v in p.items()},
                          len(measured), sum(m[3] for m in measured), s))
    return found


# The words of an algorithm's S against the default's: below it beyond doubt (the default's
# less its own above 0), above it beyond doubt, or neither told.
ABSORBS_MORE, ABSORBS_LESS = "absorbs more", "absorbs less"


@dataclass(frozen=True)
class Absorbs:
    """One algorithm against the library's default at one point and delay (`tune
    --late`): its S, and its claim against the default's."""
    algorithm: str
    sensitivity: float
    sensitivity_ci: tuple[float, float] | None
    # S is 0 where absorbed and can fall below, so no ratio of two S means anything: the
    # claim's figure is the default's S less this one's, paired by launch, in its evidence
    # (`less`, above 0: it absorbs more; `less_ci`), its ratio NaN and its ratio interval None.
    claim: Claim
    chosen: bool = False


def _against(family: str, name: str, less: float, ci: tuple[float, float] | None,
             launches: int, m: int) -> Claim:
    """The claim of `less`, the default's S less an algorithm's, by its interval at 1 -
    ALPHA / m."""
    if ci is None:
        word = INCONCLUSIVE
    else:
        word = ABSORBS_MORE if ci[0] > 0 else ABSORBS_LESS if ci[1] < 0 else UNDETERMINED
    # failing never: a choice gates nothing
    return Claim(family, f"{family} {name}", math.nan, None, None, word, launches, True, None,
                 False, {"less": less, "less_ci": list(ci) if ci else None,
                         "level": 1 - ALPHA / m})


def absorbing(default: Skew, others: dict[str, Skew], family: str) -> list[Absorbs]:
    """Each algorithm's S beside the default's, the algorithms one `family` (a point and
    delay); chosen: of those whose S is below the default's beyond doubt (the paired
    difference's interval above 0, each at 1 - 0.05 / m for the m algorithms compared:
    Bonferroni), the lowest."""
    m = max(len(others), 1)
    found = []
    for name, s in others.items():
        common = sorted(set(default.per_launch) & set(s.per_launch))
        less, ci = mean_interval([default.per_launch[k] - s.per_launch[k] for k in common],
                                 alpha=ALPHA / m) if common else (math.nan, None)
        found.append(Absorbs(name, s.sensitivity, s.sensitivity_ci,
                             _against(family, name, less, ci, len(common), m)))
    sure = [a for a in found if a.claim.word == ABSORBS_MORE and not math.isnan(a.sensitivity)]
    best = min(sure, key=lambda a: a.sensitivity, default=None)
    return [replace(a, chosen=a is best) for a in found]


def as_json(case_summary, found: list[Skew]) -> list[dict]:
    """A skew case per delay (schema skew): the case it belongs to, then its figures."""
    head = {k: getattr(case_summary, k) for k in ("kernel", "bytes", "ranks")}
    return [{**head, "params": case_summary.params, "late_rank": s.late_rank,
             "delay_s": s.delay_s, "waited_s": _number(s.waited_s), "placebo": s.placebo,
             "sensitivity": _number(s.sensitivity),
             "sensitivity_ci": list(s.sensitivity_ci) if s.sensitivity_ci else None,
             "propagated": {str(r): v for r, v in s.propagated.items()},
             "propagated_ci": {str(r): list(ci) if ci else None
                               for r, ci in s.propagated_ci.items()},
             "most_delayed_rank": s.most[0], "launches": s.launches, "samples": s.samples}
            for s in found]


def _number(x: float) -> float | None:
    """JSON has no NaN: a figure not measured is null."""
    return None if math.isnan(x) else x
