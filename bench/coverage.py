"""The launch-aware statistics on simulated commands (tests/launchsim.py): coverage of the
95% interval and its half-width, for one case alone and for a run of 24 sizes pooled,
with --launches auto and fixed counts; with commands differing as much as launches do
(what replication.py assumes without history), not at all, or twice as much, without
and with a history of 6 earlier commands; then compare's false-alarm rate and power for
a 10% shift at the default (auto). docs/statistics.md shows its output.

usage: python bench/coverage.py [--trials N] [--smoke]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from launchsim import Design, coverage, one_case, sides  # noqa: E402

from commscope.compare import compare  # noqa: E402
from commscope.verdict import Threshold  # noqa: E402

TAUS = (0.005, 0.01, 0.02, 0.05, 0.10)
CASES = 24  # a run's sizes, their own spreads from tau to 4 tau, a common launch effect tau/2
# (label, launches, between commands as a multiple of the assumed, earlier commands)
SETTINGS = (("auto", "auto", None, 0), ("K=3", 3, None, 0), ("K=6", 6, None, 0),
            ("auto, commands agree", "auto", 0.0, 0), ("auto, commands 2x", "auto", 2.0, 0),
            ("auto, commands 2x, history", "auto", 2.0, 6))
SMOKE_TRIALS = 20  # the least that gives every table a trial: a run (N/20) and a pair (N/10)


def run_design(tau: float, factor=None) -> Design:
    return Design(np.geomspace(tau, 4 * tau, CASES), tau / 2, command=factor)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--smoke", action="store_true",
                    help=f"--trials {SMOKE_TRIALS}: the same path, for tests/test_bench.py")
    args = ap.parse_args()
    n = SMOKE_TRIALS if args.smoke else args.trials
    rng = np.random.default_rng(2026)
    print(f"coverage of the 95% interval and its median half-width: one case ({n} "
          f"commands); a run of {CASES} sizes ({n // 20} commands), each case from its own "
          "launches and from the run's pooled; samples' own spread 2%")
    print(f"{'tau':>6}  {'setting':<27} {'one case':>8} {'half':>6}   {'run, own':>8} "
          f"{'half':>6}   {'pooled':>7} {'half':>6}")
    for tau in TAUS:
        for label, count, factor, commands in SETTINGS:
            one = coverage(rng, one_case(tau, command=factor), count, n, commands)
            own = coverage(np.random.default_rng(1), run_design(tau, factor), count, n // 20,
                           commands, pooled=False)
            run = coverage(np.random.default_rng(1), run_design(tau, factor), count, n // 20,
                           commands)
            print(f"{tau:>6.1%}  {label:<27} " + "   ".join(
                f"{c:>8.1%} {h:>6.1%}" for c, h, _ in (one, own, run)))
    pairs = n // 10
    print(f"\ncompare of two commands at --launches auto, {CASES} sizes each, commands "
          f"differing as launches do, threshold 5%, {pairs} pairs each")
    print(f"{'tau':>6} {'exit 1 (false alarm)':>21} {'false change':>13} "
          f"{'10% found':>10} {'10% regression':>15}")
    for tau in TAUS:
        d = run_design(tau)
        same = [compare(sides(rng, d), sides(rng, d), Threshold(0.05)) for _ in range(pairs)]
        slow = [compare(sides(rng, d), sides(rng, d, 1.10), Threshold(0.05)) for _ in range(pairs)]

        def share(found, verdicts):
            v = [c.verdict for r in found for c in r.changes]
            return sum(x in verdicts for x in v) / len(v)
        alarms = sum(bool(r.regressions) for r in same) / pairs
        print(f"{tau:>6.1%} {alarms:>21.1%} "
              f"{share(same, ('regression', 'slower', 'faster')):>13.1%} "
              f"{share(slow, ('regression', 'slower')):>10.1%} "
              f"{share(slow, ('regression',)):>15.1%}")


if __name__ == "__main__":
    main()
