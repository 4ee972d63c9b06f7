"""Drift and flapping (stats/drift.py, stats/flapping.py) where the truth is known:
issue 52's simulated targets, measured in one run, seeded (docs/watch.md).

drift: a watch of 4 cases, each probe one command of PROBE_LAUNCHES launches; a probe's
figure is a run's (the mean log median of the launches states.odd_launches keeps).
Launch medians carry tests/noisesim.py's noise: lognormal (5% launch noise, commands
as much again), mixture at 5% (5% of launches 2-4x slower at every case), stalls (3% of
launches 10^2-10^5x slower), and each condition and kernel of bench/data/noise.json
(this machine's recorded launches, resampled by whole commands). drift.steps is given each
probe's kept launch medians, as a watch gives them. Columns:
- false/200: steps named (the word `step`) per 200 probes of a stable case (WATCHES
  watches of 200); undet/200: the test's alarms whose interval could not tell
  (`undetermined`: no gate fails on them), per 200 probes;
- 25%<=3: the share of cases with a 25% step (after probe STEP_AT, every case) named
  `step` within 3 probes of it (found at probe STEP_AT, +1 or +2), of WATCHES watches;
- 10%<=10: the same for a 10% step within 10 probes;
- delay: the median probes after the step at which the 25% one was found (of those
  found at all).

flapping: one launch of 20 s of 1 MiB samples at 400 Mbit/s (21 ms), toggled to
200 Mbit/s every 2 s from a random phase, each sample with 5% lognormal noise and 1%
of samples 2-10x slower; the truth is the share of time spent in the slow state. Rows:
named (share of launches called flapping), within 15 points (of all launches, the share
named with a share within +-15 percentage points of the truth), mean |error| of the
named; and the launches that must not be named: steady, a 2 s slow warm-up, one slow
burst of 2 s. Between probes: 40 probes alternating every 4 between two levels 1.3x
apart (lognormal probes, sd 5%), and 40 stable ones.

scale: steps() over 10^4 probes of each of 100 cases, the seconds it took.

usage: python bench/watch.py [--smoke] [--watches N] [--seed S]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from noisesim import launch_effects, load  # noqa: E402

from commscope.watch import drift, flapping  # noqa: E402
from commscope.stats.states import odd_launches  # noqa: E402

SEED = 52
WATCHES = 100
SMOKE_WATCHES = 3
CASES = 4  # a corpus kernel's recorded sizes
PROBE_LAUNCHES = 3
STABLE_PROBES = 200
STEP_AT = 20
STEP_PROBES = 40
LAUNCH_NOISE = 0.05
SCALE_PROBES, SCALE_CASES = 10_000, 100
TARGETS = {"false/200": 1.0, "25%<=3": 0.90, "10%<=10": 0.80}


def kinds() -> list[str]:
    corpus = load()["conditions"]
    return ["lognormal", "mixture", "stalls"] + [
        f"corpus:{c}:{k}" for c, kernels in corpus.items() for k in kernels]


def probes(rng, kind: str, count: int, step: float = 1.0
           ) -> tuple[np.ndarray, list[list[np.ndarray]]]:
    """(count, CASES) probe figures: launch medians with the kind's noise (a step from
    STEP_AT on), each probe's the mean log median of the launches odd_launches keeps; and
    each case's kept launch medians a probe, which floor drift's scale as a watch's do."""
    share = {"mixture": 0.05}.get(kind)
    logs = launch_effects(rng, kind, count, PROBE_LAUNCHES, CASES, tau=LAUNCH_NOISE,
                          share=share)
    if step != 1.0:
        logs[STEP_AT:] += math.log(step)
    out = np.empty((count, CASES))
    kept: list[list[np.ndarray]] = [[] for _ in range(CASES)]
    for p in range(count):
        odd = odd_launches({c: dict(enumerate(logs[p, :, c])) for c in range(CASES)})
        for c in range(CASES):
            out_c = {o.launch for o in odd[c]}
            ys = np.array([y for k, y in enumerate(logs[p, :, c]) if k not in out_c])
            out[p, c] = ys.mean()
            kept[c].append(np.exp(ys))
    return np.exp(out), kept


def drift_row(rng, kind: str, watches: int) -> dict:
    """A row: steps named (the word `step`) and alarms left undetermined per 200 stable
    probes, and the shares of steps named within their probes."""
    false = undetermined = probes_seen = 0
    for _ in range(watches):
        figures, kept = probes(rng, kind, STABLE_PROBES)
        for c in range(CASES):
            found = drift.steps(figures[:, c], [0] * STABLE_PROBES, kept[c])
            false += sum(s.claim.failing for s in found)
            undetermined += sum(not s.claim.failing for s in found)
            probes_seen += STABLE_PROBES
    found = {}
    delays = []
    for size, within in ((1.25, 3), (1.10, 10)):
        hits = total = 0
        for _ in range(watches):
            figures, kept = probes(rng, kind, STEP_PROBES, size)
            for c in range(CASES):
                named = [s.found - STEP_AT for s in drift.steps(figures[:, c],
                                                                [0] * STEP_PROBES, kept[c])
                         if s.found >= STEP_AT and s.claim.failing and s.claim.ratio > 1]
                hits += bool(named) and named[0] < within
                total += 1
                if size == 1.25 and named:
                    delays.append(named[0])
        found[f"{round((size - 1) * 100)}%<={within}"] = hits / total
    return {"false/200": false / probes_seen * 200,
            "undet/200": undetermined / probes_seen * 200, **found,
            "delay": float(np.median(delays)) if delays else math.nan}


def toggled(rng, seconds: float = 20.0, period: float | None = 2.0,
            slow_spans: tuple[tuple[float, float], ...] = ()) -> tuple[np.ndarray, float]:
    """One launch's samples and the true share of its time in the slow state."""
    fast, phase = 1024 * 1024 * 8 / 400e6, rng.uniform(0, 2 * (period or 1))
    t, slow_time, out = 0.0, 0.0, []
    while t < seconds:
        slow = (period is not None and int((t + phase) // period) % 2 == 1) or any(
            a <= t < b for a, b in slow_spans)
        x = fast * (2.0 if slow else 1.0) * math.exp(0.05 * rng.standard_normal())
        if rng.random() < 0.01:
            x *= rng.uniform(2, 10)
        out.append(x)
        t += x
        slow_time += x if slow else 0.0
    return np.array(out), slow_time / t


def flapping_rows(rng, launches: int) -> list[tuple[str, float, float, float]]:
    rows = []
    cases = {"toggled every 2 s": {}, "steady": {"period": None},
             "slow warm-up 2 s": {"period": None, "slow_spans": ((0.0, 2.0),)},
             "one slow burst 2 s": {"period": None, "slow_spans": ((9.0, 11.0),)}}
    for name, how in cases.items():
        named = near = 0
        errors = []
        for _ in range(launches):
            samples, truth = toggled(rng, **how)
            found = flapping.within(samples)
            if found.claim.word == flapping.WORDS.over:
                named += 1
                errors.append(abs(found.share - truth))
                near += errors[-1] <= 0.15
        rows.append((name, named / launches, near / launches,
                     float(np.mean(errors)) if errors else math.nan))
    for name, size in (("probes alternating 1.3x", 1.3), ("probes stable", 1.0)):
        named = 0
        for _ in range(launches):
            medians = np.exp(0.05 * rng.standard_normal(40))
            medians[(np.arange(40) // 4) % 2 == 1] *= size
            named += flapping.between(medians, [0] * 40).claim.word == flapping.WORDS.over
        rows.append((name, named / launches, math.nan, math.nan))
    return rows


def scale(rng, probes_n: int, cases: int) -> float:
    series = np.exp(LAUNCH_NOISE * rng.standard_normal((cases, probes_n)))
    keys = [0] * probes_n
    start = time.perf_counter()
    for y in series:
        drift.steps(y, keys)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny counts (the suite's run)")
    ap.add_argument("--watches", type=int, default=WATCHES)
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args()
    watches = SMOKE_WATCHES if args.smoke else args.watches
    rng = np.random.default_rng(args.seed)
    print(f"drift: seed {args.seed}, {watches} watches of {CASES} cases a row, "
          f"{PROBE_LAUNCHES} launches a probe, ARL {drift.ARL} probes, k {drift.REFERENCE}, "
          f"h {drift.threshold(drift.ARL):.2f}")
    print(f"{'noise':28} {'false/200':>9} {'undet/200':>9} {'25%<=3':>7} {'10%<=10':>8} "
          f"{'delay':>5}  unmet")
    for kind in (kinds()[:2] if args.smoke else kinds()):
        row = drift_row(rng, kind, watches)
        unmet = [k for k, v in TARGETS.items()
                 if (v < row[k] if k == "false/200" else row[k] < v)]
        print(f"{kind:28} {row['false/200']:9.2f} {row['undet/200']:9.2f} "
              f"{row['25%<=3']:7.0%} {row['10%<=10']:8.0%} {row['delay']:5.1f}  "
              f"{', '.join(unmet) or '-'}")
    launches = 10 if args.smoke else 200
    print(f"\nflapping: seed {args.seed}, {launches} launches a row (1 MiB samples, 20 s)")
    print(f"{'series':28} {'named':>6} {'within 15':>9} {'mean |err|':>10}")
    for name, named, near, error in flapping_rows(rng, launches):
        near_text = "-" if math.isnan(near) else f"{near:.0%}"
        error_text = "-" if math.isnan(error) else f"{error:.3f}"
        print(f"{name:28} {named:6.0%} {near_text:>9} {error_text:>10}")
    probes_n, cases = (1000, 10) if args.smoke else (SCALE_PROBES, SCALE_CASES)
    seconds = scale(rng, probes_n, cases)
    verdict = "not measured by --smoke" if args.smoke else "met" if seconds <= 5 else "NOT met"
    print(f"\nscale: steps() over {probes_n} probes x {cases} cases: {seconds:.2f} s "
          f"(target <= 5 s at 10^4 x 100: {verdict})")


if __name__ == "__main__":
    main()
