"""The launch-aware statistics on simulated commands (tests/launchsim.py): coverage of the
95% interval and its half-width, for one case alone and for a run of 24 sizes pooled,
with --launches auto and fixed counts; with commands differing as much as launches do
(what replication.py assumes without history), not at all, or twice as much, without
and with a history of 6 earlier commands; then, by thirds of a run's sizes ordered by
their launches' spread, the coverage and the median half-width against an oracle's that
knows every variance, for a smooth rise of the spread with size, a step at a protocol
switch and a machine of two levels, at ratios of the variance between commands to that
between launches of 0 to 2, with 2 earlier commands and without; the same at pilots of 3,
5 and 8 launches; then compare's
false-alarm rate and power for a 10% shift at the default (auto). docs/statistics.md
shows its output.

--noise KINDS prints instead the run's intervals under the noise of tests/noisesim.py
(mixture, stalls, corpus:CONDITION[:KERNEL] of bench/data/noise.json, lognormal for
reference; `all`: every one, each corpus kernel apart): coverage of the true median (the
typical launch's) and of the next command's median (an independent command's printed
figure), and the median half-width, at auto, K=5 and auto with 6 earlier commands, each
command's launches in another state left out as results.py leaves them out (launchsim's
screen; no replacement launches); 24 sizes at tau 2% for the simulated kinds, the
corpus's own sizes for corpus rows (docs/statistics.md, "Under the noise machines really
have"). 1-2.5 minutes here.

usage: python bench/coverage.py [--trials N] [--smoke] [--noise KINDS]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from launchsim import SAMPLES, Design, coverage, intervals, level, one_case, sides  # noqa: E402
from noisesim import KINDS, load  # noqa: E402

from commscope.judge.compare import compare  # noqa: E402
from commscope.stats.verdict import Threshold  # noqa: E402

TAUS = (0.005, 0.01, 0.02, 0.05, 0.10)
CASES = 24  # a run's sizes, their own spreads from tau to 4 tau, a common launch effect tau/2
# (label, launches, between commands as a multiple of the assumed, earlier commands)
SETTINGS = (("auto", "auto", None, 0), ("K=3", 3, None, 0), ("K=6", 6, None, 0),
            ("auto, commands agree", "auto", 0.0, 0), ("auto, commands 2x", "auto", 2.0, 0),
            ("auto, commands 2x, history", "auto", 2.0, 6))
SMOKE_TRIALS = 20  # the least that gives every table a trial: a run (N/20) and a pair (N/10)


def run_design(tau: float, factor=None) -> Design:
    return Design(np.geomspace(tau, 4 * tau, CASES), tau / 2, command=factor)


# (label, the run's own spreads, common launch effect, two levels (factor, chance))
SHAPES = (("smooth rise", np.geomspace(0.01, 0.04, CASES), 0.015, None),
          ("step at a switch", np.where(np.arange(CASES) < 16, 0.01, 0.04), 0.005, None),
          ("two levels", np.geomspace(0.01, 0.04, CASES), 0.015, (3.0, 0.3)))
RATIOS = (0.0, 0.1, 0.3, 1.0, 2.0)
# Earlier commands of the two-level machine: levels are told apart from 2 a side (regimes)
HISTORY = 6  # sigma^2 / tau^2: between commands over between launches
Z95 = 1.959964


def thirds(rng, d: Design, ratio: float, trials: int, commands: int) -> tuple:
    """Coverage by thirds of the sizes ordered by spread, the median half-width, and the
    median of each half-width over the oracle's for the same case and command: z sqrt(v /
    K + ratio v) on the log scale, v a launch median's true variance (launchsim), K the
    launches the command made, the truth its level's median."""
    v = d.common ** 2 + d.taus ** 2 + (1.2533 * d.sigma) ** 2 / SAMPLES
    covered, widths, oracle = [], [], []
    for _ in range(trials):
        truth = level(rng, d)
        found = intervals(rng, d, "auto", commands, shift=truth)
        covered.append([iv.ci_low_s <= truth <= iv.ci_high_s for iv in found])
        widths += [iv.precision for iv in found]
        oracle += [np.expm1(Z95 * np.sqrt(vi / iv.launches + ratio * vi))
                   for vi, iv in zip(v, found)]
    by_case = np.mean(covered, axis=0)[np.argsort(d.taus, kind="stable")]
    return ([float(t.mean()) for t in np.array_split(by_case, 3)],
            float(np.median(widths)), float(np.median(np.array(widths) / oracle)))


def thirds_table(n: int) -> None:
    print(f"\nby thirds of a run's {CASES} sizes, quiet to noisy ({n} commands a row): "
          "coverage, median half-width, and the median ratio of each half-width to an "
          "oracle's that knows the variances")
    print(f"{'shape':<17} {'ratio':>5} {'history':>8}  {'quiet':>6} {'middle':>6} "
          f"{'noisy':>6}  {'half':>6} {'x oracle':>8}")
    for label, taus, common, levels in SHAPES:
        for ratio in RATIOS:
            for commands in (HISTORY if levels else 2, 0):
                d = Design(taus, common, command=np.sqrt(ratio), levels=levels)
                cov, half, times = thirds(np.random.default_rng(5), d, ratio, n, commands)
                print(f"{label:<17} {ratio:>5.1f} {commands or 'none':>8}  "
                      + " ".join(f"{c:>6.1%}" for c in cov)
                      + f"  {half:>6.1%} {times:>8.2f}", flush=True)


PILOTS = (3, 5, 8)


def pilots_table(n: int) -> None:
    """What more, shorter launches buy (launches.py: the pilot is as many launches as start
    up in half of --max-time): the thirds' coverage and half-width at pilots of 3, 5 and 8,
    on the smooth rise, without history (commands assumed to differ as launches do, as
    they then do) and with 2 earlier commands where commands differ 0.3 as much."""
    print(f"\n--launches auto's pilot of 3, 5 or 8 launches, smooth rise ({n} commands a row)")
    print(f"{'pilot':>5} {'ratio':>5} {'history':>8}  {'quiet':>6} {'middle':>6} "
          f"{'noisy':>6}  {'half':>6} {'x oracle':>8}")
    label, taus, common, _ = SHAPES[0]
    for ratio, commands in ((1.0, 0), (0.3, 2)):
        for pilot in PILOTS:
            d = Design(taus, common, command=np.sqrt(ratio), pilot=pilot)
            cov, half, times = thirds(np.random.default_rng(5), d, ratio, n, commands)
            print(f"{pilot:>5} {ratio:>5.1f} {commands or 'none':>8}  "
                  + " ".join(f"{c:>6.1%}" for c in cov) + f"  {half:>6.1%} {times:>8.2f}",
                  flush=True)


NOISE_TAU = 0.02
NOISE_SETTINGS = (("auto", "auto", 0), ("K=5", 5, 0), ("auto, 6 earlier", "auto", 6))


def noise_kinds(spec: str) -> list[str]:
    if spec != "all":
        return spec.split(",")
    return ["lognormal", "mixture", "stalls"] + [
        f"corpus:{c}:{k}" for c, kernels in load()["conditions"].items() for k in kernels]


def noise_design(kind: str) -> Design:
    """24 sizes at tau 2% (run_design) for a simulated kind; for a corpus condition its
    recorded sizes (its kernel's, or the first kernel's), whose noise the corpus carries
    whole."""
    if not kind.startswith("corpus:"):
        d = run_design(NOISE_TAU)
        d.noise, d.screen = kind, True
        return d
    _, condition, *kernel = kind.split(":")
    kernels = load()["conditions"][condition]
    sizes = kernels[kernel[0] if kernel else next(iter(kernels))]["sizes"]
    return Design(np.full(len(sizes), NOISE_TAU), sizes=np.array(sizes), noise=kind,
                  screen=True)


def noise_row(rng, d: Design, count, commands: int, trials: int) -> tuple:
    """Coverage of the truth (1) and of the next command's median by the intervals given,
    their median half-width, the mean launches, and the share of cases given no interval
    (replication.supported: launches too far apart for one), over `trials` commands (each
    with `commands` earlier ones). A case with no interval makes no claim to cover."""
    truth = nxt = cases = 0
    widths, counts = [], []
    for _ in range(trials):
        found = intervals(rng, d, count, commands)
        then = intervals(rng, d, count)  # the next command, its figure as it prints it
        for iv, later in zip(found, then):
            cases += 1
            counts.append(iv.launches)
            if iv.ci_low_s is None:
                continue
            truth += iv.ci_low_s <= 1.0 <= iv.ci_high_s
            nxt += iv.ci_low_s <= later.median_s <= iv.ci_high_s
            widths.append(iv.precision)
    given = max(len(widths), 1)
    return (truth / given, nxt / given, float(np.median(widths)) if widths else np.nan,
            float(np.mean(counts)), 1 - len(widths) / cases)


def noise_table(kinds: list[str], n: int) -> None:
    print(f"a run's intervals under launch noise of tests/noisesim.py ({n} commands a row of "
          f"{CASES} sizes, as many cases a corpus row); cover: of the true median (the typical "
          "launch's), of the next command's median, by the intervals given; half: their median "
          "half-width; no CI: cases given none")
    print(f"{'noise':<28} {'setting':<16} {'cases':>5} {'commands':>8} {'truth':>7} "
          f"{'next':>7} {'half':>6} {'launches':>8} {'no CI':>6}")
    for kind in kinds:
        if kind not in KINDS and not kind.startswith("corpus:"):
            sys.exit(f"--noise {kind}: one of {', '.join(KINDS)}, corpus:CONDITION or all")
        d = noise_design(kind)
        trials = n * CASES // d.taus.size  # as many intervals a row as a run of 24 sizes
        for label, count, commands in NOISE_SETTINGS:
            truth, nxt, half, launches, none = noise_row(np.random.default_rng(7), d, count,
                                                         commands, trials)
            print(f"{kind:<28} {label:<16} {d.taus.size:>5} {trials:>8} {truth:>7.1%} "
                  f"{nxt:>7.1%} {half:>6.1%} {launches:>8.1f} {none:>6.1%}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--smoke", action="store_true",
                    help=f"--trials {SMOKE_TRIALS}: the same path, for tests/test_bench.py")
    ap.add_argument("--noise", metavar="KINDS",
                    help="only the rows under these noise kinds (comma list, or all); "
                         "--trials / 20 commands a row")
    args = ap.parse_args()
    n = SMOKE_TRIALS if args.smoke else args.trials
    if args.noise:
        noise_table(noise_kinds(args.noise), max(n // 20, 2))
        return
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
    thirds_table(max(n // 20, 2))
    pilots_table(max(n // 20, 2))
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
            v = [c.claim.word for r in found for c in r.changes]
            return sum(x in verdicts for x in v) / len(v)
        alarms = sum(bool(r.regressions) for r in same) / pairs
        print(f"{tau:>6.1%} {alarms:>21.1%} "
              f"{share(same, ('regression', 'slower', 'faster')):>13.1%} "
              f"{share(slow, ('regression', 'slower')):>10.1%} "
              f"{share(slow, ('regression',)):>15.1%}")


if __name__ == "__main__":
    main()
