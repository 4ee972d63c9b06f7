"""compare from history under the noise this machine records (issue 62): per compare, the
share with a false `regression` and with a false `faster`, with 95% Wilson intervals.

A compare is one command pair of one kernel's recorded sizes (bench/data/noise.json, 4 a
kernel): A, B and the earlier commands of the results file are distinct recorded commands
of one condition, in random order, each with its recorded launches. Truth: no change. The
history is read as `results show` and `compare` read it (replication.history, each
command's launches in another state left out of A and B as states.py leaves them out).

Power: lognormal noise (a case's launches 5%, commands agreeing), B slowed 1.30x at every
size: the share of cases named `regression`, with earlier commands all like A, and in
the 4 + 4 file (the later half of the earlier commands slowed as B is: a change stored).

--rules lists the history's rules switched off one at a time, each its own rows, so a
rule's effect under the recorded noise and under lognormal stands beside the others.

usage: python bench/history.py [--compares N] [--earlier 4,8] [--rules]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from noisesim import load  # noqa: E402

from commscope.judge import compare as judge_compare
from commscope.stats import replication
from commscope.stats.states import odd_launches
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


def screened(command: np.ndarray) -> dict:
    """A command's sides as `results show` keeps them: its launches in another state or
    stalled at a size left out (states.odd_launches)."""
    logs = np.log(command)
    odd = odd_launches({i: dict(enumerate(logs[:, i])) for i in range(logs.shape[1])})
    return {str(i): judge_compare.Side.of(
        {}, np.delete(command[:, i], [o.launch for o in odd[i]]), [Stored(i)])
        for i in range(logs.shape[1])}


def one_compare(commands: list[np.ndarray], shift: float = 0.0) -> list[str]:
    """commands: each (launches, sizes) of launch medians, the earlier ones first, then A,
    then B (times exp(shift)). The words compare gives each size."""
    *earlier, a, b = commands
    b = b * math.exp(shift)
    side_a, side_b = screened(a), screened(b)

    def history_of(cases):
        i = cases[0].case
        centre = float(np.mean(np.log(np.concatenate([a[:, i], b[:, i]]))))
        return replication.history([c[:, i] for c in earlier], centre)
    result = judge_compare.compare(side_a, side_b, THRESHOLD, history_of)
    return [c.word for c in result.claims]


def corpus_rows(rng, condition: str, earlier: int, compares: int) -> tuple[int, int, int]:
    kernels = load()["conditions"][condition]
    regression = faster = made = 0
    for _ in range(compares):
        recorded = kernels[rng.choice(sorted(kernels))]["commands"]
        if len(recorded) < earlier + 2:
            return 0, 0, 0
        picked = rng.choice(len(recorded), earlier + 2, replace=False)
        words = one_compare([np.array(recorded[j]) for j in picked])
        regression += "regression" in words
        faster += "faster" in words
        made += 1
    return regression, faster, made


def lognormal(rng, earlier: int, launches: int = 5, sizes: int = 4,
              noise: float = 0.05) -> list[np.ndarray]:
    base = np.exp(rng.normal(0, 1, sizes))
    return [base * np.exp(noise * rng.standard_normal((launches, sizes)))
            for _ in range(earlier + 2)]


def lognormal_rows(rng, earlier: int, compares: int) -> tuple[int, int, int, float, float]:
    """False claims at 1.00; power at SLOW with agreeing earlier commands, and with a
    results file that holds the change (the 4 + 4 file: half the earlier commands SLOW)."""
    regression = faster = named = stored = 0
    for _ in range(compares):
        words = one_compare(lognormal(rng, earlier))
        regression += "regression" in words
        faster += "faster" in words
        slowed = one_compare(lognormal(rng, earlier), math.log(SLOW))
        named += sum(w == "regression" for w in slowed)
        file = lognormal(rng, earlier)
        for c in file[earlier // 2:earlier]:
            c *= SLOW
        stored += sum(w == "regression" for w in one_compare(file, math.log(SLOW)))
    return regression, faster, compares, named / (4 * compares), stored / (4 * compares)


RULES = {
    "step": ("replication", "step", lambda means, *a, **k: np.zeros(means.size, dtype=int)),
    "seen states": ("judge_compare", "seen_states", lambda *a, **k: []),
    "lone state": ("judge_compare", "lone_state", lambda *a, **k: []),
}


@contextlib.contextmanager
def without(rules: str | None):
    """The history with these rules ('a+b') switched off."""
    with contextlib.ExitStack() as stack:
        for rule in rules.split("+") if rules else ():
            module, name, off = RULES[rule]
            target = {"replication": replication, "judge_compare": judge_compare}[module]
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
    ap.add_argument("--rules", nargs="?", const="each", metavar="A+B,...",
                    help="rows with rules off: each one at a time (no value), or the sets "
                         f"given ({', '.join(RULES)})")
    args = ap.parse_args()
    earliers = [int(x) for x in args.earlier.split(",")]
    conditions = sorted(load()["conditions"])
    print(f"per compare of one kernel's 4 sizes, truth 1.00, threshold {THRESHOLD}, "
          f"{args.compares} compares a row; power: lognormal 5%, B x{SLOW:.2f}, per case")
    print(f"{'rules':<22} {'noise':<12} {'earlier':>7} {'false regression':>22} "
          f"{'false faster':>22} {'power':>6} {'4+4':>6}")
    sets = [None] + (list(RULES) if args.rules == "each" else
                     args.rules.split(",") if args.rules else [])
    for rule in sets:
        label = "all" if rule is None else f"without {rule}"
        with without(rule):
            for earlier in earliers:
                for condition in conditions:
                    rng = np.random.default_rng(62)
                    r, f, n = corpus_rows(rng, condition, earlier, args.compares)
                    if n:
                        print(f"{label:<22} {condition:<12} {earlier:7d} {fmt(r, n):>22} "
                              f"{fmt(f, n):>22} {'':>6}", flush=True)
                rng = np.random.default_rng(62)
                r, f, n, power, stored = lognormal_rows(rng, earlier, args.compares)
                print(f"{label:<22} {'lognormal':<12} {earlier:7d} {fmt(r, n):>22} "
                      f"{fmt(f, n):>22} {power:6.3f} {stored:6.3f}", flush=True)


if __name__ == "__main__":
    main()
