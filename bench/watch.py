"""Drift and flapping (stats/drift.py, stats/flapping.py) where the truth is known:
issue 52's simulated targets, measured in one run, seeded (docs/watch.md).

drift: a watch of 4 cases judged together as `results history` judges them
(probe_states.watch_steps: each case's own part and the probe's state, what moved every case
at once), each probe one command of PROBE_LAUNCHES launches; a probe's
figure is a run's (the mean log median of the launches states.odd_launches keeps).
Launch medians carry tests/noisesim.py's noise: lognormal (5% launch noise, commands
as much again), mixture at 5% (5% of launches 2-4x slower at every case), stalls (3% of
launches 10^2-10^5x slower), and each condition and kernel of bench/data/noise.json
(this machine's recorded launches, resampled by whole commands). Each case is given its
probes' kept launch medians, as a watch gives them. Columns:
- false/watch: steps named (the word `step`) per watch of CASES stable cases over 200
  probes (WATCHES watches), a step of the probe's state counted at every case it is
  named at; undet/watch: the alarms left `undetermined` (no gate
  fails on them; each carries its remedy), per watch;
- 25%<=3: the share of cases with a 25% step (after probe STEP_AT, every case) named
  `step` within 3 probes of it (found at probe STEP_AT, +1 or +2), of WATCHES watches;
- 10%<=10: the same for a 10% step within 10 probes;
- delay: the median probes after the step at which the 25% one was found (of those
  found at all);
- said: the share of cases with the 25% step whose watch said, at the step, that a step
  that size is not sure to be found within 3 probes (the expected level's least_step,
  as `results history` prints it, over 1.25);
- missed: the share of cases with the 25% step where nothing was named after it, neither
  `step` nor `undetermined`, by the series' end (STEP_PROBES - STEP_AT probes), though
  the watch had not said so: a step missed in silence.

flapping: one launch of 20 s of 1 MiB samples at 400 Mbit/s (21 ms), toggled to
200 Mbit/s every 2 s from a random phase, each sample with 5% lognormal noise and 1%
of samples 2-10x slower; the truth is the share of time spent in the slow state. Rows:
named (share of launches called flapping), within 15 points (of all launches, the share
named with a share within +-15 percentage points of the truth), mean |error| of the
named; and the launches that must not be named: steady, a 2 s slow warm-up, one slow
burst of 2 s. Between probes: 40 probes alternating every 4 between two levels 1.3x
apart (lognormal probes, sd 5%), and 40 stable ones.

scale: steps() over 10^4 probes of each of 100 cases, the seconds it took.

--without RULE (again for more) switches a rule of docs/watch.md's "On a machine with
states" off: "probe state", "screen", "states seen" (a step needs MIN_STAY probes at any
share), "stays" (any alarm's level holds).

usage: python bench/watch.py [--smoke] [--watches N] [--seed S] [--without RULE]
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

from commscope.watch import drift, flapping, probe_states  # noqa: E402
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
TARGETS = {"false/watch": 1.0, "25%<=3": 0.90, "10%<=10": 0.80, "missed": 0.0}
# Where the machine shows states (the corpus), a step may be `undetermined` with its
# remedy instead of found within 3 probes, never missed in silence (issue 62)
QUIET_ONLY = ("25%<=3", "10%<=10")


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
    """A row: steps named (the word `step`) and alarms left undetermined per watch of 200
    stable probes, and the shares of steps named within their probes, or missed."""
    false = undetermined = 0
    for _ in range(watches):
        figures, kept = probes(rng, kind, STABLE_PROBES)
        for found in probe_states.watch_steps(figures, [[0] * STABLE_PROBES] * CASES, kept):
            false += sum(s.claim.failing for s in found)
            undetermined += sum(not s.claim.failing for s in found)
    found = {}
    delays = []
    missed = said = 0
    arl = probe_states.series_arl(drift.ARL, CASES)
    for size, within in ((1.25, 3), (1.10, 10)):
        hits = total = 0
        for _ in range(watches):
            figures, kept = probes(rng, kind, STEP_PROBES, size)
            for c, case in enumerate(probe_states.watch_steps(figures, [[0] * STEP_PROBES] * CASES,
                                                       kept)):
                after = [s for s in case if s.found >= STEP_AT]
                named = [s.found - STEP_AT for s in after
                         if s.claim.failing and s.claim.ratio > 1]
                hits += bool(named) and named[0] < within
                total += 1
                if size == 1.25:
                    delays += named[:1]
                    least = drift.expected(figures[:STEP_AT, c], [0] * STEP_AT,
                                           kept[c][:STEP_AT], arl).least_step
                    said += least > size
                    missed += not after and least <= size
        found[f"{round((size - 1) * 100)}%<={within}"] = hits / total
        if size == 1.25:
            found["missed"], found["said"] = missed / total, said / total
    return {"false/watch": false / watches, "undet/watch": undetermined / watches, **found,
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


# Each rule of a watch on a machine with states (docs/watch.md), switched off by
# --without: its rows against the default's show what it changes (issue 62)
RULES = {
    "probe state": (probe_states, "MIN_CASES", 10 ** 9),  # each case read whole
    "screen": (probe_states, "_another_state", lambda x: np.zeros(x.size, bool)),
    "states seen": (drift, "_stays", lambda *a: (_STAYS(*a)[0], 0.0, drift.MIN_STAY)),
    "stays": (drift, "_stays", lambda *a: (10 ** 9, 0.0, 1)),  # any alarm's level holds
}
_STAYS = drift._stays


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny counts (the suite's run)")
    ap.add_argument("--watches", type=int, default=WATCHES)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--without", choices=RULES, action="append", default=[],
                    help="switch a rule off for the drift rows (again for more)")
    args = ap.parse_args()
    for rule in args.without:
        module, name, off = RULES[rule]
        setattr(module, name, off)
    watches = SMOKE_WATCHES if args.smoke else args.watches
    rng = np.random.default_rng(args.seed)
    series = CASES + (CASES >= probe_states.MIN_CASES)  # the probe's state is one too
    per_case = probe_states.series_arl(drift.ARL, CASES)
    off = f"without {' and '.join(args.without)}, " if args.without else ""
    print(f"drift: seed {args.seed}, {watches} watches of {CASES} cases a row, {off}"
          f"{PROBE_LAUNCHES} launches a probe, ARL {drift.ARL} probes a watch "
          f"({per_case:.0f} a series of {series}), k {drift.REFERENCE}, "
          f"h {drift.threshold(per_case):.2f}")
    print(f"{'noise':28} {'false/watch':>11} {'undet/watch':>11} {'25%<=3':>7} "
          f"{'10%<=10':>8} {'delay':>5} {'said':>5} {'missed':>6}  unmet")
    for kind in (kinds()[:2] if args.smoke else kinds()):
        row = drift_row(rng, kind, watches)
        unmet = [k for k, v in TARGETS.items()
                 if (row[k] > v if k in ("false/watch", "missed") else row[k] < v)
                 and not (kind.startswith("corpus:") and k in QUIET_ONLY)]
        print(f"{kind:28} {row['false/watch']:11.2f} {row['undet/watch']:11.2f} "
              f"{row['25%<=3']:7.0%} {row['10%<=10']:8.0%} {row['delay']:5.1f} "
              f"{row['said']:5.0%} {row['missed']:6.0%}  {', '.join(unmet) or '-'}")
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
