"""`compare --live`: an A/B question answered side by side in one command (docs/compare.md,
"Side by side").

A is a command as given, B the same with something changed (environment for its ranks,
another MPI, library settings). Their launches alternate in ABBA blocks, A B then B A, so
that a drift over the command falls on both sides alike (Kalibera and Jones, ISMM 2013;
Google Benchmark's random interleaving), and each case is judged on launch *pairs*: A's
and B's launch of the same turn, whose log ratio cancels what the two launches shared
(verdict.paired). The pairs are looked at after each block, from FIRST_LOOK on, by a
group-sequential test: every look's tests are held to Pocock's one-sided level for the
looks planned (verdict.inference.sequential_level), so that with looks the chance of a false
verdict stays at alpha; the command stops once every case is decided, or when its time
(or its planned pairs) runs out, with each undecided case's pairs still needed.

The decision is pure (`sequential`, over an iterator of pairs) so that bench/live.py and
the fast tests drive it with known truth; `measure` feeds it launches through
launches.py's machinery.
"""

from __future__ import annotations

import dataclasses
import math
import shlex
import time
from dataclasses import dataclass
from typing import Callable, Hashable, Iterable, Iterator

import numpy as np

from .compare import WORDS
from ..system.errors import UserError
from ..stats.verdict import INCONCLUSIVE, UNDETERMINED, Claim, Estimate, Threshold, claims
from ..stats.verdict import moderate, paired
from ..stats.verdict.inference import sequential_level

FAMILY = "compare --live"
LIVE_MAX_TIME = 60.0  # seconds of launches, both sides: a default command ends within 90 s
MAX_PAIRS = 24  # planned pairs (A launch, B launch) unless --launches says otherwise
BLOCK = 2  # pairs in a block: A B, then B A
FIRST_LOOK = 4  # pairs before the first look: fewer leave a case's spread 1-2 df
MORE_CAP = 10_000  # beyond this many pairs a case is called out of reach


def block_order(pair: int) -> tuple[str, str]:
    """Which side launches first in pair `pair` (1-based): ABBA blocks, so a linear drift
    adds the same to A and B over each block."""
    return ("A", "B") if pair % 2 else ("B", "A")


def planned_looks(max_pairs: int) -> tuple[int, ...]:
    """The pairs after which the command looks: the end of each block from FIRST_LOOK,
    and the last pair planned. Fixed before the first launch, so Pocock's level holds."""
    looks = list(range(FIRST_LOOK, max_pairs + 1, BLOCK))
    if not looks or looks[-1] != max_pairs:
        looks.append(max_pairs)
    return tuple(looks)


def assignments(items: list[str], flag: str) -> tuple[tuple[str, str], ...]:
    """NAME=VALUE items of `flag`, checked: a UserError naming the one to fix."""
    out = []
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip() or any(c.isspace() for c in name.strip()):
            raise UserError(f"{flag} {item}: write NAME=VALUE")
        out.append((name.strip(), value))
    return tuple(out)


@dataclass(frozen=True)
class Decision:
    """The outcome: each case's claim (the verdict core's) and the pairs still needed to
    decide it (None: decided, or out of reach), the pairs used, the looks taken of those
    planned, each look's level, and why it stopped: decided (every case), budget (time
    ran out), pairs (the planned pairs were used) or failed (a launch failed)."""
    keys: list
    claims: list[Claim]
    medians: list[tuple[float, float]]  # each case's geometric mean launch median, A and B
    more: list[int | None]
    odd: list[int]  # each case's pairs left out (odd_pairs)
    pairs: int
    looks: tuple[int, ...]
    planned: tuple[int, ...]
    level: float
    stopped: str

    @property
    def regressions(self) -> int:
        return sum(c.failing for c in self.claims)


ODD_MADS = 5.0  # a pair this many robust SDs from the case's median log ratio is odd ...
ODD_RATIO = 2.0  # ... and at least 2x from it: a launch in another state or a stall


def odd_pairs(a: dict, b: dict) -> set:
    """One case's pairs whose log ratio B/A is an outlier by Hampel's identifier (median
    +- ODD_MADS x 1.4826 MAD; Davies and Gather, JASA 88, 1993) and at least ODD_RATIO
    off: a launch in another state (2-4x) or beside another job (10^2-10^5x, CONTRIBUTING.md).
    One such launch would carry a mean of log ratios and its variance alone; under
    launch noise of a few percent the rule never fires (bench/live.py measures both)."""
    common = sorted(set(a) & set(b))
    if len(common) < FIRST_LOOK:
        return set()
    d = np.log([b[p] / a[p] for p in common])
    off = np.abs(d - np.median(d))
    mad = 1.4826 * float(np.median(off))
    return {p for p, x in zip(common, off) if x > max(ODD_MADS * mad, math.log(ODD_RATIO))}


def estimates(a: dict, b: dict, keys: list) -> list[Estimate]:
    """B over A for each case, pair by pair (a and b: key -> {pair: median seconds}), its
    odd pairs left out."""
    out = []
    for k in keys:
        odd = odd_pairs(a[k], b[k])
        out.append(paired({p: v for p, v in b[k].items() if p not in odd},
                          {p: v for p, v in a[k].items() if p not in odd}))
    return out


def judge(a: dict, b: dict, keys: list, names: list[str], threshold: Threshold,
          level: float) -> list[Claim]:
    """Each case's claim at one look: the verdict core's tests at the threshold, its
    variances moderated over the cases and Benjamini-Hochberg over them (one family),
    each test at `level`."""
    return claims(estimates(a, b, keys), [FAMILY] * len(keys), names, threshold, WORDS,
                  alpha=level)


def pairs_to_decide(e: Estimate, bound: float, level: float) -> int | None:
    """How many more pairs would decide a case if its effect and spread stayed as they
    are now (a point estimate, so about even odds of deciding then): the fewest n at
    which the one-sided test at `level` passes, of `over` (d beyond the bound), `under`
    (|d| within it) or `apart` for a faster B. None where the spread is unknown or the
    effect sits on the bound."""
    from scipy.special import ndtri
    if not e.df or not e.var > 0:
        return None
    s, d = math.sqrt(e.var), e.log_ratio
    # `over` and `apart` are two-sided (verdict.inference), `under` one-sided
    gaps = [(d - bound, 2), (bound - abs(d), 1)] + ([(-d, 2)] if d < 0 else [])
    need = min((float(ndtri(1 - level / sides)) * s / g) ** 2 for g, sides in gaps if g > 0) \
        if any(g > 0 for g, _ in gaps) else math.inf
    if not math.isfinite(need) or need > MORE_CAP:
        return None
    return max(math.ceil(need) - e.launches, 1)


def decided(c: Claim) -> bool:
    return c.word not in (UNDETERMINED, INCONCLUSIVE)


def sequential(pairs: Iterable[dict], threshold: Threshold, max_pairs: int,
               name: Callable[[Hashable], str] = str) -> Decision:
    """The command's decision from its pairs as they come: each item of `pairs` is one
    turn's {case key: (A's launch median, B's)}. Looks at planned_looks(max_pairs); stops
    at the first look where every case is decided, else when `pairs` ends (the budget)
    or at max_pairs."""
    planned = planned_looks(max_pairs)
    level = sequential_level(tuple(float(n) for n in planned))
    a: dict = {}
    b: dict = {}
    looks: list[int] = []
    found: list[Claim] = []
    count = 0
    stopped = "budget"
    for count, turn in enumerate(pairs, 1):
        for k, (ma, mb) in turn.items():
            a.setdefault(k, {})[count] = ma
            b.setdefault(k, {})[count] = mb
        if count in planned:
            looks.append(count)
            keys = list(a)
            found = judge(a, b, keys, [name(k) for k in keys], threshold, level)
            if all(decided(c) for c in found):
                stopped = "decided"
                break
        if count >= max_pairs:
            stopped = "pairs"
            break
    keys = list(a)
    if count and (not looks or looks[-1] != count):  # ended between looks: a launch failed
        found = judge(a, b, keys, [name(k) for k in keys], threshold, level)
    more = [None if decided(c) else pairs_to_decide(e, threshold.log, level)
            for c, e in zip(found, moderate(estimates(a, b, keys)) if keys else [])]
    odd = [odd_pairs(a[k], b[k]) for k in keys]
    medians = [tuple(float(np.exp(np.mean(np.log([v for p, v in side[k].items()
                                                   if p not in o])))) for side in (a, b))
               for k, o in zip(keys, odd)]
    return Decision(keys, found, medians, more, [len(o) for o in odd], count, tuple(looks),
                    planned, level, stopped)


def live_command(a_command: list[str], b_command: list[str], kernel: str) -> str:
    """The `compare --live` command that would decide what a history compare left
    undetermined: A's run command as the side A, B's difference where its command shows
    one (another --mpi), else the flag to fill in."""
    def options(cmd: list[str]) -> dict[str, str]:
        return {k: v for k, v in zip(cmd, cmd[1:] + [""]) if k.startswith("--")}
    if "--live" in a_command:  # A was measured so: the same command again, for longer
        return shlex.join(a_command)
    a_opts, b_opts = options(a_command), options(b_command)
    if a_command[1:2] == ["run"] and len(a_command) > 2:
        rest, skip = [], False
        for item in a_command[3:]:
            if skip:
                skip = False
                continue
            if item in ("--launches", "--max-time", "--json", "--info"):
                skip = item != "--json"
                continue
            rest.append(item)
        base = [a_command[2], *rest]
    else:
        base = [kernel]
    if b_opts.get("--mpi") and b_opts.get("--mpi") != a_opts.get("--mpi"):
        change = ["--b-mpi", b_opts["--mpi"]]
    else:
        change = ["--b-env", "NAME=VALUE"]
    return shlex.join(["commscope", "compare", "--live", *base, *change])


# --- measuring: the pairs from launches (launches.py's machinery) -----------------------

@dataclass(frozen=True)
class Live:
    """A measured command: its decision, each side's run ids, each case key's identity
    (A's case), the failure that ended it (None: none) and its seconds of launches."""
    decision: Decision
    runs: dict[str, list[int]]
    identities: dict
    failure: str | None
    wall_s: float
    block: int = BLOCK  # pairs in a block of the order


@dataclass
class Side:
    """One side of the command: its MPI and its plans (one per process count)."""
    mpi: object
    plans: list


def measure(store, sides: dict[str, Side], command: list[str], budget_s: float,
            threshold: Threshold, progress=None, clock=time.monotonic) -> Live:
    """Launch A and B in ABBA blocks until `sequential` stops or a block would run past
    `budget_s`; every launch stored as in `commscope run` (each side's plans as runs)."""
    from ..measure import launches
    from ..store.cases import identity
    from ..store.names import identity as case_name
    runs = {s: [launches._planned(store, side.mpi, launches.Run(p, i))
                for i, p in enumerate(side.plans)] for s, side in sides.items()}
    max_pairs = sides["A"].plans[0].sampling.launches
    idents: dict = {}
    failed: list[str] = []

    def medians(pair: int) -> dict:
        got = {}
        for s in ("A", "B"):
            for i, run in enumerate(runs[s]):
                for c in store.cases(run.run_id, pair):
                    if c.valid_samples.size:
                        k = (i, c.send_mode, c.bytes)
                        got.setdefault(k, {})[s] = float(np.median(c.latency_s))
                        if s == "A":
                            idents.setdefault(k, identity(c))
        return {k: (v["A"], v["B"]) for k, v in got.items() if len(v) == 2}

    def turns() -> Iterator[dict]:
        started, block_s, block_start = clock(), 0.0, clock()
        for pair in range(1, max_pairs + 1):
            if pair % BLOCK == 1:
                if pair > 1:
                    block_s = max(block_s, clock() - block_start)
                    if clock() - started + block_s > budget_s:
                        return
                block_start = clock()
            for s in block_order(pair):
                for run in runs[s]:
                    todo = {m: list(run.plan.sizes) for m in run.plan.modes}
                    out = launches._launch(store, sides[s].mpi, run, todo, pair, command,
                                           None, progress, None)
                    if out.status != "complete":
                        failed.append(out.message or out.status)
                        return
            yield medians(pair)

    began = clock()
    try:
        decision = sequential(turns(), threshold, max_pairs,
                              lambda k: case_name(idents[k]))
    except KeyboardInterrupt:
        for run in runs["A"] + runs["B"]:
            if run.run_id is not None:
                store.end_running(run.run_id, "interrupted", "interrupted between or "
                                  "around launches of compare --live; finished cases kept")
        raise
    launches._finish_all(store, runs["A"] + runs["B"])
    if failed:
        decision = dataclasses.replace(decision, stopped="failed")
    return Live(decision, {s: [r.run_id for r in rs if r.run_id] for s, rs in runs.items()},
                idents, failed[0] if failed else None, clock() - began)
