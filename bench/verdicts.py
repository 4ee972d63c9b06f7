"""The verdict core on simulated launch medians of known truth (docs/statistics.md,
"Verdicts"): for check (paired, one command; and --runs, the sides in two commands) and
compare (two commands), the share of commands with a false claim at a true ratio of 1.00
and at the threshold itself, the power to name a 1.25x and a 1.5x slowdown, and how often
the interval of what is named covers the truth; at launch noise of 2, 5 and 10% and K of
3, 5 and 8 launches a side. A command holds 100 verdicts; each verdict's own noise is the
stated one times a lognormal factor (sd 0.3 on the log), as a run's sizes differ; commands
differ from each other as much as launches do (what compare assumes without history).

usage: python bench/verdicts.py [--commands N] [--smoke]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from commscope.verdict import Threshold, Words, claims, paired, unpaired

VERDICTS = 100
THRESHOLD = Threshold(0.05)
NOISES = (0.02, 0.05, 0.10)
KS = (3, 5, 8)
CHECK = Words("violated", "holds")
COMPARE = Words("regression", "no change", equivalence=True)
SLOW = 10  # of a command's verdicts, at the ratio whose power is measured


def one_command(rng, truth: np.ndarray, noise: float, k: int, design: str) -> list:
    """One command's claims. paired: both sides in the same K launches; apart: each side
    one command of K launches (a command effect as large as a launch's)."""
    sigma = noise * np.exp(0.3 * rng.standard_normal(truth.size))
    found = []
    for t, s in zip(np.log(truth), sigma):
        if design == "paired":
            d = t + s * rng.standard_normal(k)
            found.append(paired(dict(enumerate(np.exp(d))), dict.fromkeys(range(k), 1.0)))
        else:
            a = s * (rng.standard_normal() + rng.standard_normal(k))
            b = t + s * (rng.standard_normal() + rng.standard_normal(k))
            found.append(unpaired(a, b))
    words = CHECK if design != "compare" else COMPARE
    design_words = words
    return claims(found, ["all"] * truth.size, [str(i) for i in range(truth.size)],
                  THRESHOLD, design_words)


def rates(rng, noise: float, k: int, design: str, commands: int) -> dict:
    """False claims at 1.00 and at the threshold (share of commands with any), power at
    1.25x and 1.5x (share of the slow verdicts named), coverage of the named."""
    out = {}
    for label, ratio in (("null", 1.0), ("boundary", THRESHOLD.time_ratio)):
        out[label] = np.mean([any(c.failing for c in one_command(
            rng, np.full(VERDICTS, ratio), noise, k, design)) for _ in range(commands)])
    for label, ratio in (("power 1.25", 1.25), ("power 1.5", 1.5)):
        truth = np.ones(VERDICTS)
        truth[:SLOW] = ratio
        named = covered = found = 0
        for _ in range(commands):
            made = one_command(rng, truth, noise, k, design)
            found += sum(c.failing for c in made[:SLOW])
            for c, t in zip(made, truth):
                if c.failing:
                    named += 1
                    covered += c.interval[0] <= t <= c.interval[1]
        out[label] = found / (SLOW * commands)
        out.setdefault("coverage", []).append(covered / named if named else math.nan)
    out["coverage"] = float(np.nanmean(out["coverage"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commands", type=int, default=400)
    ap.add_argument("--smoke", action="store_true", help="a few commands of one setting")
    args = ap.parse_args()
    rng = np.random.default_rng(2026)
    settings = [(d, n, k) for d in ("paired", "runs", "compare") for n in NOISES for k in KS]
    if args.smoke:
        settings, args.commands = settings[:1], 4
    print(f"threshold {THRESHOLD}; {VERDICTS} verdicts a command, {args.commands} commands "
          "a row; false: share of commands with any false claim; power: share of the "
          f"{SLOW} slow verdicts named; coverage: of the named intervals")
    print(f"{'verb':8} {'noise':>5} {'K':>2} {'false@1.00':>10} {'false@thr':>9} "
          f"{'pow1.25':>7} {'pow1.5':>6} {'cover':>6}")
    for design, noise, k in settings:
        r = rates(rng, noise, k, design, args.commands)
        verb = {"paired": "check", "runs": "--runs", "compare": "compare"}[design]
        print(f"{verb:8} {noise:5.0%} {k:2d} {r['null']:10.3f} {r['boundary']:9.3f} "
              f"{r['power 1.25']:7.3f} {r['power 1.5']:6.3f} {r['coverage']:6.3f}", flush=True)


if __name__ == "__main__":
    main()
