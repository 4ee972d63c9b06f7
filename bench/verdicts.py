"""The verdict core on simulated launch medians of known truth (docs/statistics.md,
"Verdicts"): for check (paired, one command; and --runs, the sides in two commands) and
compare (two commands), the share of command pairs (one kernel's 4 sizes) with a false
claim at a true ratio of 1.00 and at the threshold itself, and of bundles of 100
verdicts, the power to name a 1.25x and a 1.5x slowdown, and how often the interval of
what is named covers the truth; at launch noise of 2, 5 and 10% and K of 3, 5 and 8
launches a side. A command holds 100 verdicts; each verdict's own noise is the
stated one times a lognormal factor (sd 0.3 on the log), as a run's sizes differ. Noise is
the spread of one launch's log ratio, as in issue 36: where the sides are launched apart
(--runs, compare) each side's launch spread is noise/sqrt(2). Commands differ from each
other as much as launches do (what compare assumes without history).

health: N nodes' pair matrices in K launches (5% pair noise, node-by-launch noise of 0, 3
and 5%), judged as `health` judges them at its 20% threshold: checks naming anything
with every node typical, and the power to name the one node at 0.75 (and 0.70) of the
bandwidth, alone and when missing from one launch; at N of 8, 64 and 1024.

tune: one (collective, np) family of 8 sizes x 4 algorithms (true gains 0.10, 0, 0 and
-0.20) paired with the default in K launches (a launch factor shared, and each side's own
noise): the mean gain reported where the 0.10 algorithm is chosen, how often it is, and,
with every gain 0, the share of commands that write any choice.

--noise KINDS: check's four designs and health (8 nodes) instead, under the launch noise
of tests/noisesim.py (mixture, stalls, corpus:CONDITION[:KERNEL] of bench/data/noise.json,
lognormal for reference; `all`: every one, a corpus's kernels in turn) at 5% noise (3%
node noise) and K launches (the first --launches, default 5; health its default 10); on
top of each kind's base lognormal as above, or a corpus's own noise in place of it.
check's sides are two cases of the same launches (a corpus's sizes two by two); --runs
and compare draw each side from a command of its own; compare+history adds 4 earlier
commands (agreeing, except a corpus's); health's nodes are a command's cases. 3-4
minutes at --commands 100 here. docs/statistics.md, "Under the noise machines really
have".

usage: python bench/verdicts.py [check|health|tune ...] [--commands N] [--smoke]
                                [--nodes 8,64,1024] [--launches K,...] [--noise KINDS]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from noisesim import KINDS, launch_effects, load  # noqa: E402

from commscope.judge.compare import Side, compare
from commscope.health.health import Matrices, judge
from commscope.stats.replication import history
from commscope.judge.tune import Option, Point, choose
from commscope.stats.verdict import Threshold, Words, claims, paired, unpaired

VERDICTS = 100
# The verdicts of one command pair: one kernel's sizes, as bench/data/noise.json records 4
# a command (a corpus draws each block of 4 from one recorded pair of commands). A bundle
# of VERDICTS holds 25 independent pairs, so its false rate is not a compare's.
PAIR = 4
THRESHOLD = Threshold(0.05)
NOISES = (0.02, 0.05, 0.10)
KS = (3, 5, 8)
CHECK = Words("violated", "holds")
HISTORY = 4  # earlier commands of each case in the results file
SLOW = 10  # of a command's verdicts, at the ratio whose power is measured
PAIR_NOISE = 0.05
HEALTH_THRESHOLD = 0.2
HEALTH_NODES = (8, 64, 1024)
HEALTH_NODE_NOISE = (0.0, 0.03, 0.05)
TUNE_SIZES = 8
TUNE_GAINS = [0.10, 0.0, 0.0, -0.20]


class Judged(NamedTuple):
    """What rates() reads of a claim or of compare's case: failing, and its interval."""
    failing: bool
    interval: tuple[float, float] | None


class Stored:
    """What compare's history_of is handed for a case: here, which case it is."""
    imported = False

    def __init__(self, case: str):
        self.case = case


def compared(rng, truth: np.ndarray, sigma: np.ndarray, k: int, earlier: int) -> list:
    """compare itself (commscope.judge.compare.compare) on two commands of K launches a case.
    earlier 0: commands differ as much as launches, and compare, with no history, assumes
    as much; else commands agree (no effect of their own) and `earlier` baseline commands
    of each case in the results file are its history, which has to show it."""
    a, b, past = {}, {}, {}
    command = 0.0 if earlier else 1.0
    for i, (t, s) in enumerate(zip(np.log(truth), sigma)):
        key = str(i)

        def launches(shift: float = 0.0) -> np.ndarray:
            return np.exp(shift + s * (command * rng.standard_normal()
                                       + rng.standard_normal(k)))
        a[key] = Side.of({}, launches(), [Stored(key)])
        b[key] = Side.of({}, launches(t), [Stored(key)])
        past[key] = history([launches() for _ in range(earlier)]) if earlier else None
    return judged_compare(a, b, past)


def judged_compare(a: dict, b: dict, past: dict) -> list:
    result = compare(a, b, THRESHOLD, lambda cases: past[cases[0].case])
    return [Judged(c.failing, c.interval) for c in result.claims]


def one_command(rng, truth: np.ndarray, noise: float, k: int, design: str,
                kind: str | None = None) -> list:
    """One command's claims. paired: both sides in the same K launches; runs: each side
    one command of K launches (a command effect as large as a launch's); compare: the
    same through compare; compare+history: commands that agree, and 4 earlier commands of
    each case as the history that shows it. kind: noisesim's (noisy_command)."""
    if kind is not None:
        return noisy_command(rng, truth, noise, k, design, kind)
    sigma = noise * np.exp(0.3 * rng.standard_normal(truth.size))
    if design != "paired":  # a log ratio of two launches apart spreads by noise
        sigma = sigma / math.sqrt(2)
    if design.startswith("compare"):
        return compared(rng, truth, sigma, k, HISTORY if design == "compare+history" else 0)
    found = []
    for t, s in zip(np.log(truth), sigma):
        if design == "paired":
            d = t + s * rng.standard_normal(k)
            found.append(paired(dict(enumerate(np.exp(d))), dict.fromkeys(range(k), 1.0)))
        else:
            a = s * (rng.standard_normal() + rng.standard_normal(k))
            b = t + s * (rng.standard_normal() + rng.standard_normal(k))
            found.append(unpaired(a, b))
    return claims(found, ["all"] * truth.size, [str(i) for i in range(truth.size)],
                  THRESHOLD, CHECK)


def noisy_command(rng, truth: np.ndarray, noise: float, k: int, design: str,
                  kind: str) -> list:
    """one_command's claims with launch medians drawn by noisesim's `kind`: paired, the
    sides two cases of one command's launches (their command effects left out, as in
    one_command); else each side a command of its own (compare+history: commands that
    agree, and 4 earlier ones)."""
    v, t = truth.size, np.log(truth)
    sigma = noise * np.exp(0.3 * rng.standard_normal(v)) / math.sqrt(2)  # a side's
    if design == "paired":
        e = launch_effects(rng, kind, 1, k, 2 * v, tau=np.repeat(sigma, 2), common=0.0,
                           command=0.0)[0]
        a, b = e[:, 0::2], t + e[:, 1::2]
        found = [paired(dict(enumerate(np.exp(b[:, i]))), dict(enumerate(np.exp(a[:, i]))))
                 for i in range(v)]
        return claims(found, ["all"] * v, [str(i) for i in range(v)], THRESHOLD, CHECK)
    earlier = HISTORY if design == "compare+history" else 0
    e = launch_effects(rng, kind, 2 + earlier, k, v, tau=sigma, common=0.0,
                       command=0.0 if earlier else 1.0)
    a, b = e[0], t + e[1]
    if design == "runs":
        found = [unpaired(a[:, i], b[:, i]) for i in range(v)]
        return claims(found, ["all"] * v, [str(i) for i in range(v)], THRESHOLD, CHECK)
    keys = [str(i) for i in range(v)]
    return judged_compare(
        {key: Side.of({}, np.exp(a[:, i]), [Stored(key)]) for i, key in enumerate(keys)},
        {key: Side.of({}, np.exp(b[:, i]), [Stored(key)]) for i, key in enumerate(keys)},
        {key: history([np.exp(e[2 + j, :, i]) for j in range(earlier)]) if earlier else None
         for i, key in enumerate(keys)})


def rates(rng, noise: float, k: int, design: str, commands: int,
          kind: str | None = None) -> dict:
    """False claims at 1.00 and at the threshold: the share of command pairs with any
    (PAIR verdicts each), and of the bundles of VERDICTS ("null bundle", "boundary
    bundle"); power at 1.25x and 1.5x (share of the slow verdicts named), coverage of
    the named."""
    out = {}
    for label, ratio in (("null", 1.0), ("boundary", THRESHOLD.time_ratio)):
        made = [[c.failing for c in one_command(rng, np.full(VERDICTS, ratio), noise, k,
                                                design, kind)] for _ in range(commands)]
        out[label] = np.mean([any(m[i:i + PAIR]) for m in made
                              for i in range(0, VERDICTS, PAIR)])
        out[f"{label} bundle"] = np.mean([any(m) for m in made])
    for label, ratio in (("power 1.25", 1.25), ("power 1.5", 1.5)):
        truth = np.ones(VERDICTS)
        truth[:SLOW] = ratio
        named = covered = found = 0
        for _ in range(commands):
            made = one_command(rng, truth, noise, k, design, kind)
            found += sum(c.failing for c in made[:SLOW])
            for c, t in zip(made, truth):
                if c.failing:
                    named += 1
                    covered += c.interval[0] <= t <= c.interval[1]
        out[label] = found / (SLOW * commands)
        out.setdefault("coverage", []).append(covered / named if named else math.nan)
    named = [c for c in out["coverage"] if not math.isnan(c)]  # none named: no coverage
    out["coverage"] = float(np.mean(named)) if named else math.nan
    return out


def health_check(rng, n: int, k: int, node_noise: float, slow: float | None,
                 missing: bool = False, kind: str | None = None) -> list[str]:
    """The nodes one simulated check names: log b_xy = mu + a_x + a_y + noise, a_x a
    node's effect plus its noise in that launch (kind: drawn by noisesim, node_noise its
    tau, a node a case); node 0 at `slow` of the bandwidth, and with `missing` not
    measured at all in the first launch."""
    truth = np.zeros(n)
    if slow is not None:
        truth[0] = math.log(slow)
    a = truth + (node_noise * rng.standard_normal((k, n)) if kind is None else
                 launch_effects(rng, kind, 1, k, n, tau=node_noise, common=0.0,
                                command=0.0)[0])
    bw = np.exp(math.log(5e9) + a[:, :, None] + a[:, None, :]
                + PAIR_NOISE * rng.standard_normal((k, n, n)))
    bw[:, np.arange(n), np.arange(n)] = np.nan
    if missing:
        bw[0, 0, :] = bw[0, :, 0] = np.nan
    m = Matrices([f"n{i}" for i in range(n)], "pairs", bw, np.ones_like(bw), 1 << 20, 8)
    return judge(m, HEALTH_THRESHOLD).drain


def health_rows(rng, checks: int, smoke: bool, nodes=HEALTH_NODES, launches=()) -> None:
    """K: `launches`, or health's default."""
    from commscope.cli.health import LAUNCHES
    print(f"\nhealth: threshold 20%, {PAIR_NOISE:.0%} pair noise, K launches ({LAUNCHES}: the "
          "default); false: share of checks naming any node with all typical; power: share "
          "naming node 0 alone")
    print(f"{'N':>5} {'K':>2} {'node noise':>10} {'checks':>6} {'false':>6} {'pow0.75':>7} "
          f"{'missing':>7} {'pow0.70':>7}")
    for n in (8,) if smoke else nodes:
        runs = max(4, checks // (1 if n < 100 else 40)) if not smoke else 2
        for k in launches or (LAUNCHES,):
            for node_noise in HEALTH_NODE_NOISE:
                row = [np.mean([bool(health_check(rng, n, k, node_noise, None))
                                for _ in range(runs)])]
                for slow, missing in ((0.75, False), (0.75, True), (0.70, False)):
                    row.append(np.mean([health_check(rng, n, k, node_noise, slow,
                                                     missing) == ["n0"] for _ in range(runs)]))
                print(f"{n:5d} {k:2d} {node_noise:10.0%} {runs:6d} " + " ".join(
                    f"{x:{w}.3f}" for x, w in zip(row, (6, 7, 7, 7))), flush=True)


def tune_command(rng, gains: list[float], noise: float, k: int) -> list[Point]:
    made = []
    for size in range(TUNE_SIZES):
        launch = noise * rng.standard_normal(k)  # a launch slow as a whole: both sides
        default = dict(enumerate(np.exp(launch + noise * rng.standard_normal(k))))
        options = []
        for a, g in enumerate(gains):
            times = np.exp(math.log(1 - g) + launch + noise * rng.standard_normal(k))
            options.append(Option(f"a{a}", float(np.median(times)), None,
                                  paired(default, dict(enumerate(times)))))
        made.append(Point("allreduce", 4, 1 << size, float(np.median(list(default.values()))),
                          None, tuple(options), k))
    return choose(made)


def tune_rows(rng, commands: int, smoke: bool, launches=()) -> None:
    print(f"\ntune: min gain 5%; {TUNE_SIZES} sizes x gains {TUNE_GAINS}; gain: mean "
          "reported where the 0.10 algorithm is chosen (truth 0.10); chosen: its share of "
          "the sizes; null: share of commands writing any choice with every gain 0")
    print(f"{'noise':>5} {'K':>2} {'gain':>6} {'chosen':>6} {'null':>5}")
    for noise, k in [(0.02, 3)] if smoke else [(n, k) for n in NOISES
                                               for k in launches or KS]:
        gains, chosen = [], 0
        for _ in range(commands):
            for p in tune_command(rng, TUNE_GAINS, noise, k):
                if p.choice == "a0":
                    gains.append(p.gain)
                    chosen += 1
        null = np.mean([any(p.choice for p in tune_command(rng, [0.0] * 4, noise, k))
                        for _ in range(commands)])
        print(f"{noise:5.0%} {k:2d} {np.mean(gains) if gains else math.nan:6.3f} "
              f"{chosen / (commands * TUNE_SIZES):6.3f} {null:5.3f}", flush=True)


FALSE = (f"false: share of command pairs ({PAIR} verdicts) with any false claim; bundle: "
         f"of the {VERDICTS} verdicts a command")
HEADER = (f"{'false@1.00':>10} {'false@thr':>9} {'bundle@1.00':>11} {'bundle@thr':>10} "
          f"{'pow1.25':>7} {'pow1.5':>6} {'cover':>6}")


def cells(r: dict) -> str:
    """A row's rates under HEADER."""
    return (f"{r['null']:10.3f} {r['boundary']:9.3f} {r['null bundle']:11.3f} "
            f"{r['boundary bundle']:10.3f} {r['power 1.25']:7.3f} {r['power 1.5']:6.3f} "
            f"{r['coverage']:6.3f}")


def check_rows(rng, commands: int, smoke: bool, launches=()) -> None:
    settings = [(d, n, k) for d in ("paired", "runs", "compare", "compare+history")
                for n in NOISES for k in launches or KS]
    if smoke:
        settings = settings[:1]
    print(f"threshold {THRESHOLD}; {VERDICTS} verdicts a command, {commands} commands "
          f"a row; {FALSE}; power: share of the {SLOW} slow verdicts named; coverage: of "
          "the named intervals")
    print(f"{'verb':15} {'noise':>5} {'K':>2} {HEADER}")
    for design, noise, k in settings:
        r = rates(rng, noise, k, design, commands)
        verb = {"paired": "check", "runs": "--runs"}.get(design, design)
        print(f"{verb:15} {noise:5.0%} {k:2d} {cells(r)}", flush=True)


NOISE = 0.05
NOISE_K = 5
NOISE_NODE = 0.03


def noise_kinds(spec: str) -> list[str]:
    kinds = (["lognormal", "mixture", "stalls"] + [f"corpus:{c}" for c in load()["conditions"]]
             if spec == "all" else spec.split(","))
    bad = [k for k in kinds if k not in KINDS and not k.startswith("corpus:")]
    if bad:
        sys.exit(f"--noise {bad[0]}: one of {', '.join(KINDS)}, corpus:CONDITION or all")
    return kinds


def noise_rows(rng, kinds: list[str], commands: int, smoke: bool, launches=()) -> None:
    """check's designs, then health's, under each noise kind."""
    from commscope.cli.health import LAUNCHES
    k = (launches or [NOISE_K])[0]
    print(f"under launch noise of tests/noisesim.py: threshold {THRESHOLD}, {NOISE:.0%} noise "
          f"(a corpus: its own), {k} launches; {VERDICTS} verdicts a command, {commands} "
          f"commands a row; {FALSE}; power: share of the {SLOW} slow verdicts named; "
          "coverage: of the named intervals")
    print(f"{'noise':<18} {'verb':15} {HEADER}")
    for kind in kinds:
        for design in ("paired",) if smoke else ("paired", "runs", "compare", "compare+history"):
            r = rates(rng, NOISE, k, design, commands, kind)
            verb = {"paired": "check", "runs": "--runs"}.get(design, design)
            print(f"{kind:<18} {verb:15} {cells(r)}", flush=True)
    hk = LAUNCHES  # health's own default; --launches sets check's K
    checks = 2 if smoke else commands
    print(f"\nhealth under the same noise: 8 nodes, {hk} launches (its default), "
          f"{NOISE_NODE:.0%} node noise (a corpus: its own), {PAIR_NOISE:.0%} pair noise, "
          f"threshold 20%, {checks} checks a row")
    print(f"{'noise':<18} {'false':>6} {'pow0.75':>7} {'missing':>7} {'pow0.70':>7}")
    for kind in kinds:
        row = [np.mean([bool(health_check(rng, 8, hk, NOISE_NODE, None, kind=kind))
                        for _ in range(checks)])]
        for slow, missing in ((0.75, False), (0.75, True), (0.70, False)):
            row.append(np.mean([health_check(rng, 8, hk, NOISE_NODE, slow, missing, kind)
                                == ["n0"] for _ in range(checks)]))
        print(f"{kind:<18} " + " ".join(f"{x:{w}.3f}" for x, w in zip(row, (6, 7, 7, 7))),
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("verbs", nargs="*", help="check, health, tune (default: all)")
    ap.add_argument("--commands", type=int, default=400)
    ap.add_argument("--smoke", action="store_true", help="a few commands of one setting")
    ap.add_argument("--nodes", type=lambda s: [int(x) for x in s.split(",")],
                    default=list(HEALTH_NODES), help="health: the node counts (8,64,1024)")
    ap.add_argument("--launches", type=lambda s: [int(x) for x in s.split(",")], default=[],
                    help="the launches K (default: 3,5,8; health: its own)")
    ap.add_argument("--noise", metavar="KINDS",
                    help="only check's and health's rows under these noise kinds of "
                         "tests/noisesim.py (comma list, or all); K: the first --launches")
    args = ap.parse_args()
    rng = np.random.default_rng(2026)
    commands = 4 if args.smoke else args.commands
    if args.noise:
        noise_rows(rng, noise_kinds(args.noise), commands, args.smoke, args.launches)
        return
    rows = {"check": lambda *a: check_rows(*a, args.launches),
            "health": lambda *a: health_rows(*a, args.nodes, args.launches),
            "tune": lambda *a: tune_rows(*a, args.launches)}
    unknown = set(args.verbs) - set(rows)
    if unknown:
        ap.error(f"no bench for {', '.join(sorted(unknown))}: name check, health or tune")
    for verb in args.verbs or rows:
        rows[verb](rng, commands, args.smoke)


if __name__ == "__main__":
    main()
