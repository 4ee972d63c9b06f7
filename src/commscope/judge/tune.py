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

import numpy as np

from ..store.cases import Case
from .checks import Time, figures_alone, rest
from ..system.sizes import format_bytes
from ..stats.verdict import DEFAULTS, Claim, Estimate, Threshold, Words, claims
from ..stats.verdict import paired as paired_estimate
from ..stats.verdict import VerdictSpec, parse_threshold

MIN_GAIN = parse_threshold(DEFAULTS["tune"].threshold)
# The rules against the default: inferior, slower by more than the least gain (a gate's
# failure); non-inferior, within it.
VERIFY_WORDS = Words("inferior", "non-inferior")
# An algorithm against the default, the claim's ratio the default's time over the
# algorithm's (the core tests its side above the threshold), so its words say what the
# algorithm is: faster by more than the least gain (chosen where fastest and writable), not
# by that much, and significantly faster within it (the default "slower") or slower.
CHOICE_WORDS = Words("faster", "no gain", slower="faster within the gain", faster="slower")

VARY = "algorithm"  # the kernel parameter that forces the library's algorithm


@dataclass(frozen=True)
class Option:
    """One algorithm at one point: its own figures, and its claim against the default."""
    algorithm: str
    time_s: float  # the median of its launch medians
    time_ci: tuple[float, float] | None  # its launch-aware 95% interval (as `run` gives)
    estimate: Estimate  # log(default / this), paired by launch: the verdict core's input
    claim: Claim | None = None  # the default's time over this one's, judged (choose)
    gain: float = 0.0  # 1 - its time over the default's, corrected for the choice

    @property
    def ratio(self) -> float:
        """Its time over the default's, as tables show it: the claim's ratio inverted, taken
        from the estimate the claim was made of (1 / the claim's would differ in the last
        digit from what --json has always written)."""
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


def _side(cases: list[Case], figure: dict, key=lambda c: (c.run_id, c.launch)
          ) -> tuple[dict, Time]:
    """One side's launch medians, keyed by `key`, over the launches its time keeps, and
    that time as `results show` gives it (checks.figures_alone): a launch left out of the
    time is left out of its pairs, so the ratio and the times agree."""
    summary, kept = figure[cases[0].id]
    return ({key(c): float(np.median(c.latency_s)) for c in cases
             if (c.run_id, c.launch) in kept}, Time.of(summary))


def points(cases: list[Case]) -> list[Point]:
    """Every point where the default and at least one algorithm were measured, each
    algorithm tested against the default; nothing chosen yet (see choose). Times are
    `results show`'s, and each ratio pairs the launches both times keep (_side)."""
    figure = figures_alone(cases)
    sides: dict[tuple, dict] = {}
    for c in cases:
        if c.imported or c.family != "collective":
            continue
        slot = sides.setdefault((c.kernel, c.launched_ranks, c.bytes, rest(c, VARY)), {})
        slot.setdefault(c.params.get(VARY), []).append(c)
    made = []
    for (kernel, np_, nbytes, _), by in sorted(sides.items(), key=lambda kv: kv[0][:3]):
        own = by.pop(None, [])
        if not own or not by:
            continue
        default, default_time = _side(own, figure)
        options = []
        for name, measured in sorted(by.items()):
            launches, time = _side(measured, figure)
            # default over algorithm: above 0, the algorithm is faster
            options.append(Option(name, time.median_s, time.ci,
                                  paired_estimate(default, launches)))
        made.append(Point(kernel, np_, nbytes, default_time.median_s, default_time.ci,
                          tuple(options), len(default)))
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


def judged(groups: list[tuple[VerdictSpec, list[Case]]]) -> list[Point]:
    """The choices of stored tune runs, each group of cases judged with the verdict
    parameters its command stored (min gain, what the rules file can name), so the report
    and check's remedies choose as the command did."""
    return [p for given, cases in groups
            for p in choose(points(cases), can_name(given.writable), given.limit)]


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


def _by_number(pairs: list[list[Case]], figure: dict) -> dict[tuple, tuple[dict, Time]]:
    """Per point, launch medians keyed by (pair of runs, launch number) (_side), and the
    side's time over its runs."""
    at: dict[tuple, list] = {}
    which = {}
    for i, cases in enumerate(pairs):
        for c in cases:
            at.setdefault((c.kernel, c.launched_ranks, c.bytes), []).append(c)
            which[c.run_id] = i
    return {point: _side(cases, figure, lambda c: (which[c.run_id], c.launch))
            for point, cases in at.items()}


def verify(default: list[list[Case]], rules: list[list[Case]],
           min_gain: Threshold = MIN_GAIN) -> list[Claim]:
    """Each point both sides measured, the rules' time over the default's: `inferior` where
    slower beyond the least gain (a gate's failure), `non-inferior` where within it, each
    (collective, np) a family; `default[i]` and `rules[i]` are one pair of runs, whose
    launches k pair. Each side's time is over its two runs, each run's odd launches left
    out of it and of the pairs (checks.figures_alone)."""
    figure = figures_alone([c for cases in default + rules for c in cases])
    a, b = _by_number(rules, figure), _by_number(default, figure)
    points = sorted(set(a) & set(b))
    evidence = [{"collective": k, "np": n, "bytes": size,
                 "default_s": b[(k, n, size)][1].median_s,
                 "default_ci": b[(k, n, size)][1].as_list(),
                 "rules_s": a[(k, n, size)][1].median_s,
                 "rules_ci": a[(k, n, size)][1].as_list()}
                for k, n, size in points]
    return claims([paired_estimate(a[p][0], b[p][0]) for p in points],
                  [f"{k} np{n}" for k, n, _ in points],
                  [f"{k} np{n} {format_bytes(size)}" for k, n, size in points], min_gain,
                  VERIFY_WORDS, evidence, together=True)
