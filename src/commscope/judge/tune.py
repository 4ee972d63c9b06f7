"""Choosing each collective's algorithm from the library's own, measured in the same
launches as its default (docs/tune.md, "How the choice is made").

The launch is the unit, as in `check`: per (collective, np, size) each launch gives one
median for the default and one for every algorithm, and the default's time over each
algorithm's is a paired ratio of launch medians. The verdict core (commscope.stats.verdict)
tests each against the least gain worth a rule (`--min-gain`, 5%: H0 "the algorithm is
no more than that faster"), each (collective, np) a family at a false discovery rate of
0.05. Of the algorithms that pass, the fastest; none, and the library keeps its own
choice. The gain reported is corrected for having been chosen (`_unbiased`), so the
fastest of many noisy estimates is not reported as its luckiest draw (the winner's
curse). Neighbouring sizes with one choice form a range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


from ..figures.read import measured, skews
from ..stats import skew
from ..stats.summary import CaseSummary
from ..stats.verdict import (DEFAULTS, VERB_WORDS, Claim, Estimate, Threshold, VerdictSpec,
                             claims, parse_threshold)
from ..store.cases import Case
from ..system.sizes import format_bytes
from .checks import Side, estimate, rest

MIN_GAIN = parse_threshold(DEFAULTS["tune"].threshold)
# The rules against the default: inferior, slower by more than the least gain (a gate's
# failure); non-inferior, within it.
VERIFY_WORDS = VERB_WORDS["tune-verify"]
# An algorithm against the default, the claim's ratio the default's time over the
# algorithm's (the core tests its side above the threshold), so its words say what the
# algorithm is: faster by more than the least gain (chosen where fastest and writable), not
# by that much, and significantly faster within it (the default "slower") or slower.
CHOICE_WORDS = VERB_WORDS["tune"]

VARY = "algorithm"  # the kernel parameter that forces the library's algorithm


@dataclass(frozen=True)
class Option:
    """One algorithm at one point: its own figures, and its claim against the default."""
    algorithm: str
    time_s: float  # its summary's figure
    time_ci: tuple[float, float] | None  # its launch-aware 95% interval (as `run` gives)
    estimate: Estimate  # log(default / this), paired by launch: the verdict core's input
    claim: Claim | None = None  # the default's time over this one's, judged (choose)
    gain: float = 0.0  # 1 - its time over the default's, corrected for the choice

    @property
    def ratio(self) -> float:
        """Its time over the default's, as tables show it: the claim's ratio inverted, taken
        from the estimate the claim was made of (the ratio of the two figures)."""
        return math.exp(-self.estimate.log_ratio)

    @property
    def ci(self) -> tuple[float, float] | None:
        """The interval of `ratio` (None: one launch)."""
        i = self.claim.interval
        return None if i is None else (1 / i[1], 1 / i[0])

    @property
    def faster(self) -> bool:
        """Faster than the default by more than the least gain."""
        return self.claim.word == CHOICE_WORDS.over

    def as_dict(self) -> dict:
        return {"algorithm": self.algorithm, "time_s": self.time_s,
                "time_ci": list(self.time_ci) if self.time_ci else None, "ratio": self.ratio,
                "ci": list(self.ci) if self.ci else None, "p_value": self.claim.p}


@dataclass(frozen=True)
class Point:
    """One (collective, np, size): the default, each algorithm, and the choice."""
    kernel: str
    np: int
    bytes: int
    default_s: float
    default_ci: tuple[float, float] | None
    options: tuple[Option, ...]
    launches: int
    choice: str | None = None  # None: the library's own
    # Faster beyond doubt, and faster than the choice, but not one the library's rules
    # format can name (MPICH: an algorithm its own selection never names).
    unwritable: str | None = None

    @property
    def chosen(self) -> Option | None:
        return next((o for o in self.options if o.algorithm == self.choice), None)

    @property
    def gain(self) -> float:
        """How much less time the choice takes than the default (0: the default kept),
        corrected for the choice (the winner's curse)."""
        return self.chosen.gain if self.chosen else 0.0

    @property
    def regret(self) -> float:
        """The default's time over the fastest measured (1: the default was the fastest)."""
        return self.default_s / min([self.default_s, *(o.time_s for o in self.options)])

    def as_dict(self) -> dict:
        return {"collective": self.kernel, "np": self.np, "bytes": self.bytes,
                "default_s": self.default_s,
                "default_ci": list(self.default_ci) if self.default_ci else None,
                "launches": self.launches,
                "algorithms": [o.as_dict() for o in self.options], "choice": self.choice,
                "gain": self.gain, "regret": self.regret, "unwritable": self.unwritable}


@dataclass(frozen=True)
class Range:
    """Neighbouring measured sizes with one choice: from `low` to `high` bytes."""
    kernel: str
    np: int
    low: int
    high: int
    choice: str | None


def points(found: list[tuple[list[Case], CaseSummary]]) -> list[Point]:
    """Every point where the default and at least one algorithm were measured in one run,
    each algorithm tested against the default; nothing chosen yet (see choose). `found`:
    each run's cases and summaries (figures.read.measured, run by run); each time is its
    summary's, and each ratio pairs the launches both keep (checks.estimate)."""
    slots: dict[tuple, dict] = {}
    for cases, s in found:
        if s.imported or cases[0].family != "collective":
            continue
        slot = slots.setdefault((s.kernel, cases[0].launched_ranks, s.bytes, s.run,
                                 rest(s, VARY)), {})
        slot[s.params.get(VARY)] = Side(s, tuple(cases))
    made = []
    for (kernel, np_, nbytes, *_), by in sorted(slots.items(), key=lambda kv: kv[0][:4]):
        default = by.pop(None, None)
        if default is None or not by:
            continue
        # default over algorithm: above 0, the algorithm is faster
        options = [Option(name, side.median_s, side.ci, estimate(default, side))
                   for name, side in sorted(by.items())]
        made.append(Point(kernel, np_, nbytes, default.median_s, default.ci, tuple(options),
                          len(default.launches)))
    return made


def _unbiased(d: float, se: float, cut: float) -> float:
    """The log gain d, chosen because it passed d > cut, corrected for that choice: the
    conditional maximum likelihood estimate of a normal truncated at the cut (Zhong &
    Prentice, Biostatistics 9(4), 2008), which an estimate far beyond the cut keeps and
    one just past it gives up most of (the winner's curse: the choice favours the luckiest
    draw). That estimate overcorrects where few pass, so the midpoint of it and d: on
    simulated families (bench/verdicts.py tune) a true gain of 0.10 is reported as
    0.09-0.10 at 2-5% launch noise and 3-8 launches (0.08-0.12 at 10%), where d alone
    gave 0.13 at 5% noise and 5 launches (docs/statistics.md, "Verdicts")."""
    from scipy.optimize import minimize_scalar
    from scipy.special import log_ndtr

    def minus_log_likelihood(mu: float) -> float:
        return 0.5 * ((d - mu) / se) ** 2 + log_ndtr((mu - cut) / se)
    mle = minimize_scalar(minus_log_likelihood, bounds=(d - 10 * se, d), method="bounded").x
    return (d + float(mle)) / 2


def _gain(e: Estimate, c: Claim) -> float:
    """The gain of an algorithm named faster, corrected for its having passed BH's cut
    (_unbiased); 0 for any other."""
    if c.word != CHOICE_WORDS.over:
        return 0.0
    return -math.expm1(-_unbiased(e.log_ratio, c.se, c.cut))


def can_name(writable: dict | None):
    """`writable` (collective -> the algorithms a rules file can name; None: any) as the
    test choose() takes."""
    return lambda kernel, algorithm: writable is None or algorithm in writable.get(kernel, ())


def choose(found: list[Point], writable=lambda kernel, algorithm: True,
           min_gain: Threshold = MIN_GAIN) -> list[Point]:
    """Each point's choice: of the algorithms faster than the default by more than
    `min_gain` (the verdict core's test, each (collective, np) a family) that the rules
    format can name (`writable(kernel, algorithm)`), the fastest."""
    at = [(p, o) for p in found for o in p.options]
    # one command writes one rules file: its families are selected together
    verdicts = iter(claims([o.estimate for _, o in at], [f"{p.kernel} np{p.np}" for p, _ in at],
                           [f"{p.kernel} np{p.np} {format_bytes(p.bytes)} {o.algorithm}"
                            for p, o in at], min_gain, CHOICE_WORDS, together=True))
    chosen = []
    for p in found:
        these = []
        for o in p.options:
            c = next(verdicts)
            # a choice gates nothing: tune's gate is --verify's
            these.append(replace(o, claim=replace(c, failing=False), gain=_gain(o.estimate, c)))
        faster = sorted((o for o in these if o.faster), key=lambda o: o.ratio)
        named = [o for o in faster if writable(p.kernel, o.algorithm)]
        best = named[0].algorithm if named else None
        blocked = faster[0].algorithm if faster and faster[0].algorithm != best else None
        chosen.append(replace(p, options=tuple(these), choice=best, unwritable=blocked))
    return chosen


def judged(store, groups: list[tuple[VerdictSpec, list[int]]]) -> list[Point]:
    """The choices of stored tune runs, each group of runs judged with the verdict
    parameters its command stored (min gain, what the rules file can name), so the report
    and check's remedies choose as the command did."""
    return [p for given, run_ids in groups
            for p in choose(points(by_run(store, run_ids)), can_name(given.writable),
                            given.limit)]


def by_run(store, run_ids: list[int]) -> list[tuple[list[Case], CaseSummary]]:
    """Each run's cases and summaries, run by run (figures.read.measured)."""
    return [pair for run_id in run_ids for pair in measured(store, [run_id])]


def ranges(chosen: list[Point]) -> list[Range]:
    """Per (collective, np), neighbouring sizes with the same choice merged."""
    made: list[Range] = []
    for p in sorted(chosen, key=lambda p: (p.kernel, p.np, p.bytes)):
        last = made[-1] if made else None
        if last and (last.kernel, last.np, last.choice) == (p.kernel, p.np, p.choice):
            made[-1] = replace(last, high=p.bytes)
        else:
            made.append(Range(p.kernel, p.np, p.bytes, p.bytes, p.choice))
    return made


def _by_point(store, runs: list[int]) -> dict[tuple, Side]:
    """Per point, the side's summary over its runs (each run's odd launches left out of it
    and of the pairs: figures.read.measured), its launches keyed by (the run's place among
    `runs`, launch number), so that run i of one side pairs with run i of the other."""
    out = {}
    for cases, s in measured(store, runs):
        keyed = replace(s, kept=tuple((runs.index(r), n) for r, n in s.kept))
        out[(s.kernel, cases[0].launched_ranks, s.bytes)] = Side(keyed, tuple(cases))
    return out


def verify(store, default: list[int], rules: list[int],
           min_gain: Threshold = MIN_GAIN) -> list[Claim]:
    """Each point both sides measured, the rules' time over the default's: `inferior` where
    slower beyond the least gain (a gate's failure), `non-inferior` where within it, each
    (collective, np) a family; `default[i]` and `rules[i]` are one pair of runs, whose
    launches k pair. Each side's time is its summary over its runs (_by_point)."""
    a, b = _by_point(store, rules), _by_point(store, default)
    at = sorted(set(a) & set(b))
    evidence = [{"collective": k, "np": n, "bytes": size,
                 "default_s": b[(k, n, size)].median_s, "default_ci": b[(k, n, size)].as_list(),
                 "rules_s": a[(k, n, size)].median_s, "rules_ci": a[(k, n, size)].as_list()}
                for k, n, size in at]
    return claims([estimate(a[p], b[p]) for p in at], [f"{k} np{n}" for k, n, _ in at],
                  [f"{k} np{n} {format_bytes(size)}" for k, n, size in at], min_gain,
                  VERIFY_WORDS, evidence, together=True)


def absorbing_points(store, run_ids: list[int]) -> list[dict]:
    """`tune --late`'s points: per collective, np, size and delay, the default's S and
    each algorithm's against it (skew.absorbing), JSON-ready."""
    groups: dict[tuple, dict] = {}
    for summary, found in skews(store, measured(store, run_ids)):
        algorithm = summary.params.get("algorithm")
        for s in found:
            key = (summary.kernel, summary.ranks, summary.bytes, s.delay_s)
            groups.setdefault(key, {})[algorithm] = s
    out = []
    for (kernel, ranks, nbytes, delay), by in sorted(groups.items()):
        if None not in by:
            continue
        default = by.pop(None)
        family = f"{kernel} np{ranks} {nbytes} B, {delay * 1e3:g} ms late"
        out.append({"kernel": kernel, "ranks": ranks, "bytes": nbytes, "delay_s": delay,
                    "late_rank": default.late_rank, "default": default.sensitivity,
                    "default_ci": list(default.sensitivity_ci or []) or None,
                    "algorithms": [{"algorithm": a.algorithm, "sensitivity": a.sensitivity,
                                    "sensitivity_ci": list(a.sensitivity_ci or []) or None,
                                    "less": a.claim.evidence["less"],
                                    "less_ci": a.claim.evidence["less_ci"],
                                    "chosen": a.chosen}
                                   for a in skew.absorbing(default, by, family)]})
    return out
