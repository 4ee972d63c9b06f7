"""compare --live's decision with known truth: simulated launch pairs fed to the same
pure functions the command uses (commscope.judge.live.sequential), so that its error rates and
power are measured where the truth is known (STYLE.md, "Verdicts").

usage: python bench/live.py [--commands N] [--pairs P] [--cases C] [--smoke]

Each command is C cases (6: a default command's sizes) measured in up to P pairs (the
command's MAX_PAIRS). Launch medians are exp(effect) with effects from tests/noisesim.py
(`launch_effects`: lognormal; mixture, 20% of launches in a second state 2-4x slower;
stalls, 3% of launches 10^2-10^5x; corpus:CONDITION, resampled from recorded real noise,
one recorded command's launches in random order; stitched:CONDITION, recorded commands
end to end, so the state changes between them within a command),
A's launches and B's drawn alike and B's multiplied by the truth. Both sides of a pair
are one command, so the command term cancels in the pair, as it does in the command.
The budget is the planned pairs (stopping on time is stopping at fewer planned looks,
which only lowers the error rates).

Columns: false@1.00 and false@thr, the share of commands with any `regression` where B
is the same as A and where B is exactly at the threshold (1/0.95: every case's null true
at its boundary, where the test errs at its level by design); undet@1.00, the share of
cases left `undetermined` where B is A; pow1.10 and pow1.25, the share of cases called
`regression` at 1.10x and 1.25x; early, the share of commands stopped before their last
planned pair, decided (at the four truths together); pairs, the mean pairs a command
used (the same four).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from noisesim import CORPUS, launch_effects  # noqa: E402

from commscope.judge.live import MAX_PAIRS, sequential  # noqa: E402
from commscope.stats.verdict import UNDETERMINED, Threshold  # noqa: E402

THRESHOLD = Threshold(0.05)
TRUTHS = (1.0, THRESHOLD.time_ratio, 1.10, 1.25)
KINDS = ("lognormal", "mixture", "stalls")
CORPUS_KINDS = ("corpus:quiet", "corpus:busy", "stitched:quiet", "stitched:busy",
                "stitched:second_job")


def command(rng, kind: str, truth: float, pairs: int, cases: int, tau: float):
    """One simulated command's decision: A's launch medians and B's, pair by pair."""
    effects = launch_effects(rng, kind, 1, 2 * pairs, cases, tau=tau)[0]
    a, b = np.exp(effects[0::2]) * 1e-5, np.exp(effects[1::2]) * 1e-5 * truth
    turns = ({k: (a[p, k], b[p, k]) for k in range(cases)} for p in range(pairs))
    return sequential(turns, THRESHOLD, pairs)


def row(rng, kind: str, commands: int, pairs: int, cases: int, tau: float) -> str:
    found = {t: [command(rng, kind, t, pairs, cases, tau) for _ in range(commands)]
             for t in TRUTHS}

    def any_regression(t):
        return np.mean([d.regressions > 0 for d in found[t]])
    power = [np.mean([d.regressions / cases for d in found[t]]) for t in (1.10, 1.25)]
    undetermined = np.mean([c.word == UNDETERMINED for d in found[1.0] for c in d.claims])
    every = [d for t in TRUTHS for d in found[t]]
    early = np.mean([d.stopped == "decided" and d.pairs < pairs for d in every])
    used = np.mean([d.pairs for d in every])
    return (f"{kind:<20}{tau:>6.0%}{pairs:>6}{any_regression(1.0):>11.3f}"
            f"{any_regression(TRUTHS[1]):>10.3f}{undetermined:>11.3f}{power[0]:>9.3f}"
            f"{power[1]:>9.3f}{early:>7.3f}{used:>7.1f}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--commands", type=int, default=200)
    p.add_argument("--pairs", type=int, default=MAX_PAIRS)
    p.add_argument("--cases", type=int, default=6)
    p.add_argument("--smoke", action="store_true")
    args = p.parse_args(argv)
    commands = 4 if args.smoke else args.commands
    rng = np.random.default_rng(2025)
    kinds = KINDS + (CORPUS_KINDS if CORPUS.exists() and not args.smoke else ())
    taus = (0.02,) if args.smoke else (0.02, 0.05)
    print(f"{'noise':<20}{'tau':>6}{'pairs':>6}{'false@1.00':>11}{'false@thr':>10}"
          f"{'undet@1.00':>11}{'pow1.10':>9}{'pow1.25':>9}{'early':>7}{'pairs':>7}")
    for kind in kinds:
        for tau in taus if not kind.startswith(("corpus:", "stitched:")) else (0.0,):
            print(row(rng, kind, commands, args.pairs, args.cases, tau), flush=True)


if __name__ == "__main__":
    main()
