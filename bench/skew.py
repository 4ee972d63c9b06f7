"""The skew sensitivity's interval (skew.py, `run --late`) on simulated launches of known
truth: its coverage of the true S and its half-width, for an everyone-waits collective
(S = 1), a late interior rank of a binomial bcast on 4 ranks (S = 1/3) and the placebo
(S = 0), at launch counts 3, 5 and 8; with samples as noisy as the 4-rank runs here
(per-sample exits with a 20 us exponential tail, launches apart by 5%, the sleep's
overshoot 60-200 us), and with one launch in ten descheduled (every exit of its late
samples 0.5 ms later). docs/under-load.md shows its output.

The records go through the code the CLI runs: skew.split on the native record, then
skew.skews on the stored cases.

--real PREFIX (repeatable): on that MPI, 2 ranks, --commands times alternated, a barrier
with rank 1 late by 1 and 10 ms (every rank waits: S = 1) and an allreduce with the
placebo (the wait after the call: S = 0); each command's S and their median.

usage: python bench/skew.py [--trials N] [--real PREFIX ...] [--commands 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from types import SimpleNamespace

import numpy as np

from commscope.stats import skew

RANKS, CYCLES, DELAY = 4, 20, 1e-3
TRUTHS = {"everyone waits": [1, 1, 1, 1], "bcast interior": [0, 0, 0, 1],
          "placebo": [0, 0, 0, 0]}
LATE = 2  # the late rank


def launch(truth, rng, bad: bool) -> dict:
    """One launch's native record of one case: punctual and late samples interleaved."""
    n = 2 * CYCLES
    on_time = 30e-6 * np.exp(rng.normal(0, 0.05))
    exits = on_time + rng.exponential(20e-6, (RANKS, n))
    waited = np.where(np.arange(n) % 2, DELAY + rng.uniform(60e-6, 200e-6, n), 0.0)
    for r in range(RANKS):
        if r != LATE:
            exits[r] += truth[r] * waited + (0.5e-3 if bad else 0.0) * (waited > 0)
    return {"samples_s": list(exits.max(axis=0)), "rank_samples_s": exits.tolist(),
            "invalid": [], "late": {"rank": LATE, "delays_s": [DELAY], "wait": "sleep",
                                    "placebo": False, "ranks": [LATE if w else -1 for w in waited],
                                    "waited_s": list(waited)}}


def trial(truth, launches: int, rng, bad_share: float):
    stored, rows = [], {}
    for k in range(launches):
        rec = skew.split(launch(truth, rng, rng.random() < bad_share))
        rows[k] = np.asarray(rec["rank_samples_s"])
        stored.append(SimpleNamespace(id=k, launch=k, extra={"late": rec["late"], "invalid": []}))
    (found,) = skew.skews(stored, rows.__getitem__)
    return found


REAL = {"barrier, every rank waits (S = 1)": ("barrier", "--sizes", "0"),
        "allreduce, placebo (S = 0)": ("allreduce", "--sizes", "8", "--late-placebo")}


def real(prefix: str, commands: int) -> None:
    """Each command's S at each delay on a real MPI, the two kinds alternated."""
    found: dict[tuple, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(commands):
            for name, args in REAL.items():
                done = subprocess.run(
                    [sys.executable, "-m", "commscope.cli", "run", *args, "--late",
                     "1:1ms,10ms", "--np", "2", "--json", "--mpi", prefix, "--db",
                     f"{tmp}/{i}.db"], capture_output=True, text=True)
                if done.returncode:
                    sys.exit(f"bench: run failed: {done.stderr[-800:]}")
                for s in json.loads(done.stdout)["skew"]:
                    found.setdefault((name, s["delay_s"]), []).append(s["sensitivity"])
    for (name, delay), values in found.items():
        print(f"{prefix} {name}, late by {delay * 1e3:g} ms: S median "
              f"{np.median(values):.4f}, each {', '.join(f'{v:.3f}' for v in values)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--real", action="append", metavar="PREFIX")
    ap.add_argument("--commands", type=int, default=5)
    parsed = ap.parse_args()
    if parsed.real:
        for prefix in parsed.real:
            real(prefix, parsed.commands)
        return
    trials = parsed.trials
    rng = np.random.default_rng(1)
    print(f"{trials} trials a row; S's 95% interval over launches; true S = mean of the "
          "punctual ranks' P")
    print(f"{'truth':<16} {'launches':>8} {'descheduled':>11} {'coverage':>9} "
          f"{'half-width':>10} {'mean S':>8}")
    for name, truth in TRUTHS.items():
        true_s = np.mean([p for r, p in enumerate(truth) if r != LATE])
        for bad in (0.0, 0.1):
            for launches in (3, 5, 8):
                found = [trial(truth, launches, rng, bad) for _ in range(trials)]
                held = [f.sensitivity_ci[0] <= true_s <= f.sensitivity_ci[1] for f in found]
                half = np.median([(f.sensitivity_ci[1] - f.sensitivity_ci[0]) / 2
                                  for f in found])
                print(f"{name:<16} {launches:>8} {bad:>11.0%} {np.mean(held):>9.1%} "
                      f"{half:>10.4f} {np.mean([f.sensitivity for f in found]):>8.4f}")


if __name__ == "__main__":
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    main()
