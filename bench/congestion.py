"""`commscope congestion`'s figures on simulated launches of known truth (docs/statistics.md,
"Congestion"; docs/under-load.md). A check is one canary's K launches, each an isolated
phase and a congested phase of n samples, judged by congestion.cif as the verb judges it
(the threshold 10%, the aggressors at their own rate).

The launches: each phase's samples are lognormal (sigma 0.1, median 1: a quiet canary)
times the launch's effect of tests/noisesim.py for that phase (its `lognormal` kind by
default: a launch effect both phases share and each phase's own, tau 2%; `mixture` and
`stalls` add launches in a second state and stalled ones), and the congested phase's
further times the launch's CIF, c exp(N(0, s^2)): the CIF itself varies between launches
by s on the log scale (0.1 unless stated).

1. A phase's p99 alone: the bias and the spread (sd) of the log of each estimate, and
   their ratio, for numpy's interpolated percentile, Harrell-Davis on the times and
   Harrell-Davis on their logs (what congestion.p99 uses), at 30, 100 and 300 samples.
2. The p99 CIF's 95% interval: the share of checks whose interval covers the true p99
   CIF (c times the tail's p99 over its median, over the isolated phase's p99), of those
   given one; the share given none (not estimable); the median interval's high over low.
   The congested phase's shape, median 1 before the CIF: `lognormal` (sigma 1), `pareto`
   (alpha 2), `queue` (95% like the isolated phase, 5% a Pareto tail of alpha 1.5 from 2:
   a few samples queued behind the aggressors).
3. The words for a true median CIF of 1.0, 1.1, 1.25 and 1.5 (the congested phase the
   isolated one's shape times the CIF), s 0.05 and 0.2, at 3, 5 and 10 launches of 100
   samples: the share of checks `no bottleneck reached`, `congested`, `undetermined` and
   any other word. The threshold's margin is 1/0.9 = 1.11x, so 1.1 lies inside it and
   1.25 outside.
4. Tables 2 and 3 at 5 launches under noisesim's `mixture` and `stalls`.

Every row draws from its own seed (--seed and the row's place), so a row does not move
when another is added. 1000 checks a row: about 4 minutes here (2 shared cores).

usage: python bench/congestion.py [--trials N] [--seed S] [--smoke]
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from pathlib import Path

import numpy as np
from scipy import optimize, stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from noisesim import launch_effects  # noqa: E402

from commscope.judge import congestion  # noqa: E402
from commscope.stats import stats as estimators  # noqa: E402
from commscope.cli.congestion import SAMPLES, THRESHOLD  # noqa: E402
from commscope.stats.verdict import parse_threshold  # noqa: E402

P99 = 0.99
ISOLATED_SIGMA = 0.1
CIF_SD = 0.1
TAU = 0.02
TRUE_CIFS = (1.0, 1.1, 1.25, 1.5)
CIF_SDS = (0.05, 0.2)
LAUNCHES = (3, 5, 10)
P99_SAMPLES = (30, 100)
ESTIMATOR_SAMPLES = (30, 100, 300)
NOISE_KINDS = ("mixture", "stalls")
QUEUE_SHARE, QUEUE_ALPHA, QUEUE_FROM = 0.05, 1.5, 2.0


def _queue_cdf(x: float) -> float:
    body = stats.lognorm.cdf(x, ISOLATED_SIGMA)
    tail = 1 - (QUEUE_FROM / x) ** QUEUE_ALPHA if x > QUEUE_FROM else 0.0
    return (1 - QUEUE_SHARE) * body + QUEUE_SHARE * tail


@functools.lru_cache(maxsize=8)
def _queue_quantile(p: float) -> float:
    return optimize.brentq(lambda x: _queue_cdf(x) - p, 1e-3, 1e6, xtol=1e-12)


def _queue_draw(rng, n: int) -> np.ndarray:
    body = np.exp(rng.normal(0, ISOLATED_SIGMA, n))
    tail = QUEUE_FROM * (1 - rng.random(n)) ** (-1 / QUEUE_ALPHA)
    return np.where(rng.random(n) < QUEUE_SHARE, tail, body)


# Each tail: a draw of n samples and its quantile function, before the median's scaling.
TAILS = {
    "lognormal": (lambda rng, n: np.exp(rng.normal(0, 1, n)),
                  lambda p: math.exp(stats.norm.ppf(p))),
    "pareto": (lambda rng, n: (1 - rng.random(n)) ** -0.5,
               lambda p: (1 - p) ** -0.5),
    "queue": (_queue_draw, _queue_quantile),
}


def tail_p99(tail: str) -> float:
    """The tail's p99 over its median: the true p99 CIF of a CIF of 1."""
    quantile = TAILS[tail][1]
    isolated = math.exp(stats.norm.ppf(P99) * ISOLATED_SIGMA)
    return quantile(P99) / quantile(0.5) / isolated


def check(rng, n: int, launches: int, cif: float, cif_sd: float, tail: str | None,
          noise: str) -> tuple[dict, dict]:
    """One check's isolated and congested samples by launch; `tail` None: the congested
    phase the isolated one's shape."""
    effects = np.exp(launch_effects(rng, noise, 1, launches, 2, tau=TAU, command=0.0)[0])
    isolated, congested = {}, {}
    for k in range(launches):
        isolated[k] = effects[k, 0] * np.exp(rng.normal(0, ISOLATED_SIGMA, n))
        if tail is None:
            shape = np.exp(rng.normal(0, ISOLATED_SIGMA, n))
        else:
            shape = TAILS[tail][0](rng, n) / TAILS[tail][1](0.5)
        congested[k] = effects[k, 1] * cif * math.exp(rng.normal(0, cif_sd)) * shape
    return isolated, congested


def judged(isolated: dict, congested: dict):
    return congestion.cif(isolated, congested, "pingpong", 8, parse_threshold(THRESHOLD),
                          loaded=True)


def estimator_row(rng, tail: str, n: int, trials: int) -> list[str]:
    truth = math.log(TAILS[tail][1](P99))
    found = {"interpolated": [], "hd times": [], "hd logs": []}
    for _ in range(trials):
        x = TAILS[tail][0](rng, n)
        found["interpolated"].append(math.log(np.percentile(x, 99)))
        found["hd times"].append(math.log(estimators.harrell_davis(x, P99)))
        found["hd logs"].append(estimators.harrell_davis(np.log(x), P99))
    cells = []
    for values in found.values():
        bias, sd = float(np.mean(values)) - truth, float(np.std(values))
        cells.append(f"{bias:+7.3f} {sd:6.3f} {bias / sd:+6.2f}")
    return cells


def coverage_row(rng, tail: str, n: int, launches: int, trials: int,
                 noise: str) -> tuple[float, float, float]:
    truth = 1.25 * tail_p99(tail)
    covered, given, widths = 0, 0, []
    for _ in range(trials):
        p99 = judged(*check(rng, n, launches, 1.25, CIF_SD, tail, noise)).p99
        if p99.interval is None:
            continue
        given += 1
        covered += p99.interval[0] <= truth <= p99.interval[1]
        widths.append(p99.interval[1] / p99.interval[0])
    return (covered / given if given else math.nan, 1 - given / trials,
            float(np.median(widths)) if widths else math.nan)


def words_row(rng, cif: float, cif_sd: float, launches: int, trials: int,
              noise: str) -> dict[str, float]:
    counts: dict[str, int] = {}
    for _ in range(trials):
        word = judged(*check(rng, SAMPLES["pingpong"], launches, cif, cif_sd, None,
                             noise)).verdict
        counts[word] = counts.get(word, 0) + 1
    return {w: c / trials for w, c in counts.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=1000, help="checks a row")
    parser.add_argument("--seed", type=int, default=49)
    parser.add_argument("--smoke", action="store_true", help="tiny counts (tests)")
    args = parser.parse_args(argv)
    trials = 8 if args.smoke else args.trials
    launch_counts = LAUNCHES[:1] if args.smoke else LAUNCHES
    row = iter(range(10 ** 6))

    def rng():
        return np.random.default_rng([args.seed, next(row)])

    print(f"1. a phase's p99, log of the estimate less the truth's: bias, sd, bias/sd; "
          f"{trials * 4} phases a row")
    print(f"{'tail':10} {'n':>4}  {'interpolated':>21}  {'hd times':>21}  {'hd logs':>21}")
    for tail in TAILS:
        for n in ESTIMATOR_SAMPLES:
            print(f"{tail:10} {n:4d}  " + "  ".join(estimator_row(rng(), tail, n, trials * 4)))

    print(f"\n2. the p99 CIF's 95% interval, true median CIF 1.25 (s {CIF_SD}); "
          f"{trials} checks a row")
    print(f"{'noise':10} {'tail':10} {'n':>4} {'K':>3} {'truth':>7} {'cover':>7} "
          f"{'no p99':>7} {'hi/lo':>7}")
    rows = [("lognormal", t, n, k) for t in TAILS for n in P99_SAMPLES for k in launch_counts]
    rows += [(kind, "lognormal", SAMPLES["pingpong"], 5) for kind in NOISE_KINDS]
    for noise, tail, n, k in rows:
        cover, none, width = coverage_row(rng(), tail, n, k, trials, noise)
        given = (f"{cover:7.3f}", f"{width:7.2f}") if none < 1 else (f"{'-':>7}", f"{'-':>7}")
        print(f"{noise:10} {tail:10} {n:4d} {k:3d} {1.25 * tail_p99(tail):7.2f} "
              f"{given[0]} {none:7.3f} {given[1]}")

    words = (congestion.NO_BOTTLENECK, congestion.CIF_WORDS.over, "undetermined")
    print(f"\n3. the median CIF's word, {SAMPLES['pingpong']} samples a phase, margin "
          f"{parse_threshold(THRESHOLD).time_ratio:.3f}x; {trials} checks a row")
    print(f"{'noise':10} {'s':>5} {'K':>3} {'CIF':>5} " + " ".join(f"{w:>22}" for w in words)
          + f" {'other':>7}")
    rows = [("lognormal", s, k, c) for s in CIF_SDS for k in launch_counts for c in TRUE_CIFS]
    rows += [(kind, CIF_SDS[0], 5, c) for kind in NOISE_KINDS for c in TRUE_CIFS]
    for noise, s, k, c in rows:
        shares = words_row(rng(), c, s, k, trials, noise)
        other = 1 - sum(shares.get(w, 0.0) for w in words)
        print(f"{noise:10} {s:5.2f} {k:3d} {c:5.2f} "
              + " ".join(f"{shares.get(w, 0.0):22.3f}" for w in words) + f" {other:7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
