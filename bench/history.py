"""compare and check --runs from history under the noise this machine records (issue 62):
per compare, the share with a false `regression` and with a false `faster`, and per check
of the same two commands the share with a false `violated`, with 95% Wilson intervals.

A compare is one command pair of one kernel's recorded sizes (bench/data/noise.json, 4 a
kernel): A, B and the earlier commands of the results file are distinct recorded commands
of one condition, in random order, each with its recorded launches. Truth: no change. The
history is read as `results show` and `compare` read it (replication.history, each
command's launches in another state left out of A and B as states.py leaves them out).

The check judges one guideline at the 4 sizes, left A's case and right B's (a true ratio of
1.00 against its threshold of 1.05), the sides two commands, as `check --runs` judges
sides from two runs; each side's history the earlier commands.

Power: lognormal noise (a case's launches 5%, commands agreeing), B slowed 1.30x at every
size: the share of cases named `regression`, with earlier commands all like A, and in the
4 + 4 file (the later half of the earlier commands slowed as B is: a change stored); and
check's, left slowed 1.30x, the share named `violated`.

--rules lists the history's rules switched off one at a time, each its own rows, so a
rule's effect under the recorded noise and under lognormal stands beside the others.

usage: python bench/history.py [--compares N] [--earlier 4,8] [--rules] [--corpus FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from noisesim import CORPUS, load  # noqa: E402

from commscope.judge import checks as judge_checks
from commscope.judge import compare as judge_compare
from commscope.judge.guidelines import Guideline
from commscope.stats import replication
from commscope.stats.states import odd_launches
from commscope.stats.summary import of_medians
from commscope.stats.verdict import Threshold

THRESHOLD = Threshold(0.05)
SLOW = 1.30


class Stored:
    imported = False

    def __init__(self, case: int):
        self.case = case


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float, float]:
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, max(centre - half, 0.0), min(centre + half, 1.0)


def kept(command: np.ndarray) -> list[np.ndarray]:
    """Each size's launch medians `results show` keeps (states.odd_launches)."""
    logs = np.log(command)
    odd = odd_launches({i: dict(enumerate(logs[:, i])) for i in range(logs.shape[1])})
    return [np.delete(command[:, i], [o.launch for o in odd[i]]) for i in range(logs.shape[1])]


GUIDELINE = Guideline("left<=right", "semantics", "pingpong")


def one_check(commands: list[np.ndarray], shift: float = 0.0) -> list[str]:
    """commands as one_compare's: the words check --runs gives each size, left A's case
    (times exp(shift)) and right B's, two commands."""
    *earlier, a, b = commands
    a = a * math.exp(shift)
    pairs = [judge_checks._Pair(GUIDELINE, "pingpong np2", 2, i,
                                judge_checks.Side(of_medians(left, run=1)),
                                judge_checks.Side(of_medians(right, run=2)), 0.0)
             for i, (left, right) in enumerate(zip(kept(a), kept(b)))]
    # the left case's earlier commands are its own: as slow as it, where it is slower
    pasts = judge_checks.pooled([replication.history([c[:, i] * factor for c in earlier])
                                 for i in range(a.shape[1]) for factor in (math.exp(shift), 1)])
    return [c.word for c in judge_checks.verdicts(
        pairs, [tuple(pasts[2 * i:2 * i + 2]) for i in range(len(pairs))], THRESHOLD)]


def one_compare(commands: list[np.ndarray], shift: float = 0.0) -> list[str]:
    """commands: each (launches, sizes) of launch medians, the earlier ones first, then A,
    then B (times exp(shift)). The words compare gives each size."""
    *earlier, a, b = commands
    b = b * math.exp(shift)
    side_a, side_b = ({str(i): judge_compare.Side.of({}, x, [Stored(i)])
                       for i, x in enumerate(kept(c))} for c in (a, b))

    def history_of(cases):  # as compare's: figures.read.case_history, no level asked
        return replication.history([c[:, cases[0].case] for c in earlier])
    result = judge_compare.compare(side_a, side_b, THRESHOLD, history_of)
    return [c.word for c in result.claims]


def corpus_rows(rng, corpus: Path, condition: str, earlier: int, compares: int
                ) -> tuple[int, int, int, int]:
    """False regression, faster and violated, and the compares made."""
    kernels = load(corpus)["conditions"][condition]
    regression = faster = violated = made = 0
    for _ in range(compares):
        recorded = kernels[rng.choice(sorted(kernels))]["commands"]
        if len(recorded) < earlier + 2:
            return 0, 0, 0, 0
        # a launch with a case missing (a failed launch) left out, as noisesim leaves it
        picked = [np.array([row for row in recorded[j] if None not in row], float)
                  for j in rng.choice(len(recorded), earlier + 2, replace=False)]
        words = one_compare(picked)
        regression += "regression" in words
        faster += "faster" in words
        violated += "violated" in one_check(picked)
        made += 1
    return regression, faster, violated, made


def lognormal(rng, earlier: int, launches: int = 5, sizes: int = 4,
              noise: float = 0.05) -> list[np.ndarray]:
    base = np.exp(rng.normal(0, 1, sizes))
    return [base * np.exp(noise * rng.standard_normal((launches, sizes)))
            for _ in range(earlier + 2)]


def lognormal_rows(rng, earlier: int, compares: int
                   ) -> tuple[int, int, int, int, float, float, float]:
    """False claims at 1.00; compare's power at SLOW with agreeing earlier commands, and
    with a results file that holds the change (the 4 + 4 file: half the earlier commands
    SLOW); check's power with the left side SLOW."""
    regression = faster = violated = named = stored = checked = 0
    for _ in range(compares):
        file = lognormal(rng, earlier)
        words = one_compare(file)
        regression += "regression" in words
        faster += "faster" in words
        violated += "violated" in one_check(file)
        slowed = one_compare(lognormal(rng, earlier), math.log(SLOW))
        named += sum(w == "regression" for w in slowed)
        checked += one_check(lognormal(rng, earlier), math.log(SLOW)).count("violated")
        file = lognormal(rng, earlier)
        for c in file[earlier // 2:earlier]:
            c *= SLOW
        stored += sum(w == "regression" for w in one_compare(file, math.log(SLOW)))
    return regression, faster, violated, compares, named / (4 * compares), \
        stored / (4 * compares), checked / (4 * compares)


RULES = {
    "step": ("replication", "step", lambda means, *a, **k: np.zeros(means.size, dtype=int)),
    "seen states": ("judge_compare", "seen_states", lambda *a, **k: []),
    "states within": ("judge_compare", "_states_within", lambda *a, **k: 0.0),
    "lone state": ("judge_compare", "lone_state", lambda *a, **k: []),
    "states apart": ("judge_checks", "states_apart", lambda *a, **k: None),
}


@contextlib.contextmanager
def without(rules: str | None):
    """The history with these rules ('a+b') switched off."""
    with contextlib.ExitStack() as stack:
        for rule in rules.split("+") if rules else ():
            module, name, off = RULES[rule]
            target = {"replication": replication, "judge_compare": judge_compare,
                      "judge_checks": judge_checks}[module]
            stack.enter_context(_patched(target, name, off))
        yield


@contextlib.contextmanager
def _patched(target, name, value):
    saved = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, saved)


def fmt(hits: int, n: int) -> str:
    p, lo, hi = wilson(hits, n)
    return f"{100 * p:5.1f}% [{100 * lo:4.1f}, {100 * hi:4.1f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compares", type=int, default=1000)
    ap.add_argument("--earlier", default="4,8")
    ap.add_argument("--corpus", type=Path, default=CORPUS,
                    help="the recorded noise (default bench/data/noise.json)")
    ap.add_argument("--rules", nargs="?", const="each", metavar="A+B,...",
                    help="rows with rules off: each one at a time (no value), or the sets "
                         f"given ({', '.join(RULES)})")
    args = ap.parse_args()
    earliers = [int(x) for x in args.earlier.split(",")]
    conditions = sorted(load(args.corpus)["conditions"])
    print(f"per compare of one kernel's 4 sizes, truth 1.00, threshold {THRESHOLD}, "
          f"{args.compares} compares a row; power: lognormal 5%, B x{SLOW:.2f}, per case")
    print(f"{'rules':<22} {'noise':<14} {'earlier':>7} {'false regression':>22} "
          f"{'false faster':>22} {'false violated':>22} {'power':>6} {'4+4':>6} {'check':>6}")
    sets = [None] + (list(RULES) if args.rules == "each" else
                     args.rules.split(",") if args.rules else [])
    for rule in sets:
        label = "all" if rule is None else f"without {rule}"
        with without(rule):
            for earlier in earliers:
                for condition in conditions:
                    rng = np.random.default_rng(62)
                    r, f, v, n = corpus_rows(rng, args.corpus, condition, earlier,
                                             args.compares)
                    if n:
                        print(f"{label:<22} {condition:<14} {earlier:7d} {fmt(r, n):>22} "
                              f"{fmt(f, n):>22} {fmt(v, n):>22}", flush=True)
                rng = np.random.default_rng(62)
                r, f, v, n, power, stored, check = lognormal_rows(rng, earlier, args.compares)
                print(f"{label:<22} {'lognormal':<14} {earlier:7d} {fmt(r, n):>22} "
                      f"{fmt(f, n):>22} {fmt(v, n):>22} {power:6.3f} {stored:6.3f} "
                      f"{check:6.3f}", flush=True)


if __name__ == "__main__":
    main()
