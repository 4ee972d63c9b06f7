"""The verdict core where the data leave the model it was built for (issue 49;
docs/statistics.md, "At the model's edges"): seeded simulations of known truth, each row
with its trial count.

- compare+history: two commands of K=5 launches a case (24 cases), 8 earlier commands of
  each in the results file as its history; commands differ r times as much as launches
  (sd ratio 1, 1.5, 2; launch noise 3%), each case's command effect its own, or shared by
  every case of the command (a whole command in a slower state). false: share of
  baseline-against-baseline compares with any regression.
- file 4+4: the results file holds 4 baseline commands and 4 slowed 1.30x (launch noise
  5%, commands agreeing or differing as much as launches); compare one baseline with one
  slowed, the other 6 the history. called: share of the cases called a regression.
- check --runs: the sides two commands, 100 verdicts at the bound, each side's history 8
  earlier commands; commands differing 1, 1.5 and 2 times launches. false: share of
  commands with any `violated`, and whether the command term was learned or assumed.
- check --all: 4, 10, 20 and 40 guidelines (--all's count) of 35 sizes, every verdict
  at the bound, both sides in the same 5 launches (noise 5% times a lognormal factor,
  sd 0.3); false: share of commands with any `violated`, with the guidelines selected
  together (the default) and each on its own (--families guideline).
- named: families of 20 where every member lies 1.3-1.6x (bound 1.053); of the named
  intervals, the share that miss the truth (FCR).
- run interval: 24 sizes 1 B-8 MiB in 5 launches, commands differing as much as launches
  (r = 1, no history), a common launch effect (1%), quiet sizes at 2%, and one size at
  38% (8 B ping-pong here) at 1 B, 8 B, 64 KiB or 8 MiB: its coverage of the typical
  launch median, and the quiet sizes' mean interval width over the oracle's (their true
  variance known).

usage: python bench/edges.py [ROW ...] [--trials N] [--smoke]
       ROW: compare, file, runs, all, named, interval (default: all of them)
"""

from __future__ import annotations

import argparse
import math
import sys
from statistics import NormalDist

import numpy as np

from commscope.judge.checks import Side, _Pair, command_term, estimate, histories
from commscope.judge.compare import Side as CompareSide, compare
from commscope.stats.summary import of_medians
from commscope.stats.replication import Launch, history, interval, run_spreads
from commscope.stats.verdict import Threshold, Words, claims, paired

THRESHOLD = Threshold(0.05)
WORDS = Words("violated", "holds")
EARLIER = 8  # earlier commands of a case in the results file
K = 5


class Stored:
    """What compare's history_of is handed for a case: which case it is."""
    imported = False

    def __init__(self, case: str):
        self.case = case


def _command(rng, cases: int, tau: float, sigma: float, shared: bool, shift=0.0):
    """One command's launch medians, cases x K: a command effect (one for every case, or
    each case's own) and each launch's own noise."""
    effect = sigma * (rng.standard_normal() if shared else rng.standard_normal((cases, 1)))
    return np.exp(shift + effect + tau * rng.standard_normal((cases, K)))


def compare_history(rng, trials: int, ratio: float, shared: bool, cases: int = 24,
                    tau: float = 0.03) -> float:
    """Share of baseline-against-baseline compares with any regression."""
    false = 0
    for _ in range(trials):
        past = [_command(rng, cases, tau, ratio * tau, shared) for _ in range(EARLIER)]
        a, b = (_command(rng, cases, tau, ratio * tau, shared) for _ in range(2))
        histories = {str(i): history([p[i] for p in past])
                     for i in range(cases)}
        sides = [{str(i): CompareSide.of({}, m[i], [Stored(str(i))]) for i in range(cases)}
                 for m in (a, b)]
        result = compare(*sides, THRESHOLD, lambda found: histories[found[0].case])
        false += bool(result.regressions)
    return false / trials


def file_four_four(rng, trials: int, sigma: float, cases: int = 24,
                   tau: float = 0.05) -> float:
    """Share of cases called a regression, one baseline against one slowed command, the
    other 3 + 3 the history."""
    called = 0
    for _ in range(trials):
        base = [_command(rng, cases, tau, sigma, False) for _ in range(4)]
        slow = [_command(rng, cases, tau, sigma, False, math.log(1.3)) for _ in range(4)]
        histories = {str(i): history([p[i] for p in base[1:] + slow[1:]])
                     for i in range(cases)}
        sides = [{str(i): CompareSide.of({}, m[i], [Stored(str(i))]) for i in range(cases)}
                 for m in (base[0], slow[0])]
        result = compare(*sides, THRESHOLD, lambda found: histories[found[0].case])
        called += len(result.regressions)
    return called / (trials * cases)


def check_runs(rng, trials: int, ratio: float, verdicts: int = 100,
               tau: float = 0.05 / math.sqrt(2)) -> tuple[float, str]:
    """Share of commands with any false `violated`, every verdict at the bound, each side
    a command of its own with its case's 8 earlier commands as its history."""
    false, learned = 0, set()
    bound = THRESHOLD.log
    for _ in range(trials):
        sigma = tau * np.exp(0.3 * rng.standard_normal(verdicts))
        pasts, pairs = {}, []
        for i, s in enumerate(sigma):
            for side, shift in (("L", bound), ("R", 0.0)):
                pasts[f"{side}{i}"] = history([_command(rng, 1, s, ratio * s, False)[0]
                                               for _ in range(EARLIER)])
            left = _command(rng, 1, s, ratio * s, False, bound)[0]
            right = _command(rng, 1, s, ratio * s, False)[0]
            pairs.append(_Pair(None, "x", 2, i, Side(of_medians(left, run=1), (f"L{i}",)),
                               Side(of_medians(right, run=2), (f"R{i}",)), 0.0))
        terms = [command_term(h) for h in histories(pairs, lambda side: pasts[side[0]])]
        learned |= {"history" if t else "assumed" for t in terms}
        found = claims([estimate(p.left, p.right, t) for p, t in zip(pairs, terms)],
                       ["g"] * verdicts, ["x"] * verdicts, THRESHOLD, WORDS)
        false += any(c.failing for c in found)
    return false / trials, "+".join(sorted(learned))


def check_all(rng, trials: int, together: bool, guidelines: int = 40, sizes: int = 35,
              noise: float = 0.05) -> float:
    """Share of commands with any false `violated`, every verdict at the bound."""
    n = guidelines * sizes
    false = 0
    for _ in range(trials):
        sigma = noise * np.exp(0.3 * rng.standard_normal(n))
        d = THRESHOLD.log + sigma[:, None] * rng.standard_normal((n, K))
        found = claims([paired(dict(enumerate(np.exp(row))), dict.fromkeys(range(K), 1.0))
                        for row in d], [str(i // sizes) for i in range(n)], ["x"] * n,
                       THRESHOLD, WORDS, together=together)
        false += any(c.failing for c in found)
    return false / trials


def named(rng, trials: int, members: int = 20, noise: float = 0.05) -> tuple[float, int]:
    """Of the named intervals of families far beyond the bound: the share missing the
    truth, and how many were named."""
    miss = total = 0
    for _ in range(trials):
        truth = np.log(rng.uniform(1.3, 1.6, members))
        d = truth[:, None] + noise * rng.standard_normal((members, K))
        found = claims([paired(dict(enumerate(np.exp(row))), dict.fromkeys(range(K), 1.0))
                        for row in d], ["f"] * members, ["x"] * members, THRESHOLD, WORDS)
        for c, t in zip(found, truth):
            if c.failing:
                total += 1
                miss += not c.interval[0] <= math.exp(t) <= c.interval[1]
    return miss / max(total, 1), total


SIZES = 2 ** np.arange(24)  # 1 B to 8 MiB


def run_interval(rng, trials: int, noisy_at: int, quiet: float = 0.02, noisy: float = 0.38,
                 common: float = 0.01) -> tuple[float, float, float]:
    """The noisy size's coverage, the quiet sizes' coverage and their mean width over the
    oracle's (the t interval with their true variance: z sqrt(v (1 + 1/K) + common^2/K))."""
    tau = np.full(SIZES.size, quiet)
    at = int(np.flatnonzero(SIZES == noisy_at)[0])
    tau[at] = noisy
    z = NormalDist().inv_cdf(0.975)
    hit_noisy = hit_quiet = 0
    widths = []
    for _ in range(trials):
        command = tau * rng.standard_normal(SIZES.size)  # commands differ as launches do
        y = command[:, None] + common * rng.standard_normal(K) \
            + tau[:, None] * rng.standard_normal((SIZES.size, K))
        spreads = run_spreads(y, SIZES)
        for i, spread in enumerate(spreads):
            iv = interval([Launch(math.exp(v), 0.0) for v in y[i]], given=spread, cap=False)
            covered = iv.ci_low_s <= 1.0 <= iv.ci_high_s
            if i == at:
                hit_noisy += covered
            else:
                hit_quiet += covered
                oracle = z * math.sqrt(tau[i] ** 2 * (1 + 1 / K) + common ** 2 / K)
                widths.append(math.log(iv.ci_high_s / iv.ci_low_s) / 2 / oracle)
    return hit_noisy / trials, hit_quiet / (trials * (SIZES.size - 1)), float(np.mean(widths))


ROWS = ("compare", "file", "runs", "all", "named", "interval")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="*", metavar="ROW", help=", ".join(ROWS))
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--smoke", action="store_true", help="a few trials of each row")
    args = ap.parse_args()
    trials = 4 if args.smoke else args.trials
    rows = args.rows or ROWS
    if set(rows) - set(ROWS):
        ap.error(f"rows are {', '.join(ROWS)}")
    rng = np.random.default_rng(49)
    print(f"{trials} trials a row")
    if "compare" in rows:
        print("compare+history   r(sd)  effects   false")
        for ratio in (1.0, 1.5, 2.0):
            for shared in (False, True):
                print(f"{'':17} {ratio:5.1f}  {'shared' if shared else 'own':8} "
                      f"{compare_history(rng, trials, ratio, shared):6.3f}")
    if "file" in rows:
        print("file 4+4 at 1.30x  commands       called")
        for sigma, label in ((0.0, "agree"), (0.05, "differ 5%")):
            print(f"{'':18} {label:14} {file_four_four(rng, trials, sigma):6.3f}")
    if "runs" in rows:
        print("check --runs      r(sd)  false  command term")
        for ratio in (1.0, 1.5, 2.0):
            false, how = check_runs(rng, trials, ratio)
            print(f"{'':17} {ratio:5.1f} {false:6.3f}  {how}")
    if "all" in rows:
        print("check, N guidelines x 35 sizes  families   false")
        for guidelines in (4, 10, 20, 40):
            for together, label in ((True, "command"), (False, "guideline")):
                print(f"{'':27} {guidelines:3} {label:10} "
                      f"{check_all(rng, trials, together, guidelines):6.3f}")
    if "named" in rows:
        miss, total = named(rng, trials)
        print(f"named, 20 a family: {total} intervals, missing the truth {miss:.3f}")
    if "interval" in rows:
        print("run interval  noisy at   noisy cover  quiet cover  quiet width/oracle")
        for at in (1, 8, 65536, 8 << 20):
            noisy, quiet, width = run_interval(rng, trials, at)
            print(f"{'':13} {at:>8}   {noisy:11.3f}  {quiet:11.3f}  {width:18.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
