"""Launch noise as real machines make it, for the benches and tests that simulate launch
medians (tests/launchsim.py, bench/coverage.py, bench/verdicts.py; docs/statistics.md,
"Under the noise machines really have").

launch_effects(rng, kind, commands, launches, cases) -> array (commands, launches, cases)
of log-scale effects, added to a case's log launch median (exp(effect) multiplies it):

  lognormal   today's model (launchsim's): a command effect per case, N(0, (command *
              launch sd)^2), a launch effect every case shares, N(0, common^2), and each
              case's own N(0, tau^2): a quiet machine whose launches vary a little.
  commands    the same with commands differing twice as much as their launches
              (command=2): a machine whose state drifts between commands (this host's 8 B
              ping-pong, docs/statistics.md, "Why one launch is not enough").
  mixture     lognormal, and a share (20%) of launches in a second state, 2-4x slower
              (log-uniform) at every case of the launch: a 2-vCPU CI runner or a shared
              node that lands some launches on a busy core or a far NUMA node.
  stalls      lognormal, and rare launches (3%) 10^2-10^5x slower (log-uniform): half of
              them at every case, half at one case alone: a launch beside another job
              whose ranks take the cores for whole scheduler ticks (in the corpus, 2-5% of
              launches beside a second job or two busy loops, each at one case of four).
  corpus:C    resampled from condition C of the recorded corpus (bench/data/noise.json,
  corpus:C:K  bench/noise_corpus.py; :K, kernel K's commands alone): each recorded case's
              log launch medians less their median over the condition (its typical
              value). An output command is a recorded command, its launches that
              command's launches in random order (drawn again, with replacement, only
              beyond the recorded count), so a launch keeps its effect at every case and
              a command its state. The cases come in blocks of a kernel's recorded sizes,
              the kernels in turn; each block of a command draws its own recorded command,
              so blocks are as independent as two commands are.
  stitched:C  the same recorded commands end to end, in random order: an output command's
              launches are one recorded command's, in their recorded order, then the
              next one's, so the state changes between recorded commands within it, as
              it does between the minutes of one long compare --live.

The extras (mixture's state, stalls) come on top of lognormal's terms with the same
tau, common and command, so a row of a bench differs from today's by the extra alone.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

CORPUS = Path(__file__).resolve().parent.parent / "bench" / "data" / "noise.json"
MIXTURE_SHARE = 0.20
MIXTURE_FACTORS = (2.0, 4.0)
STALL_SHARE = 0.03
STALL_FACTORS = (1e2, 1e5)
KINDS = ("lognormal", "commands", "mixture", "stalls")


def launch_effects(rng, kind: str, commands: int, launches: int, cases: int,
                   tau=0.02, common: float | None = None, command: float = 1.0,
                   share: float | None = None, corpus: Path = CORPUS) -> np.ndarray:
    """Log effects of shape (commands, launches, cases) of the noise `kind` (the module's
    docstring). tau: each case's own launch spread (a number or one per case); common:
    the launch effect all cases share (default tau/2, as bench/coverage.py's runs);
    command: the command effect as a multiple of a launch's sd; share: mixture's or
    stalls' share of launches (default 20%, 3%)."""
    if kind.startswith("corpus:"):
        return corpus_effects(rng, kind.split(":", 1)[1], commands, launches, cases, corpus)
    if kind.startswith("stitched:"):
        return corpus_effects(rng, kind.split(":", 1)[1], commands, launches, cases, corpus,
                              stitched=True)
    if kind not in KINDS:
        raise ValueError(f"noise kind {kind!r}: one of {', '.join(KINDS)} or corpus:CONDITION")
    tau = np.broadcast_to(np.asarray(tau, float), (cases,))
    common = float(np.median(tau)) / 2 if common is None else common
    command = 2.0 * command if kind == "commands" else command
    launch_sd = np.sqrt(tau ** 2 + common ** 2)
    shape = (commands, launches, cases)
    effects = (command * launch_sd * rng.standard_normal((commands, 1, cases))
               + common * rng.standard_normal((commands, launches, 1))
               + tau * rng.standard_normal(shape))
    if kind == "mixture":
        other = rng.random((commands, launches, 1)) < (MIXTURE_SHARE if share is None else share)
        effects += other * _log_uniform(rng, MIXTURE_FACTORS, (commands, launches, 1))
    elif kind == "stalls":
        stalled = rng.random((commands, launches, 1)) < (STALL_SHARE if share is None else share)
        # half of them at one case alone, drawn: the corpus's stalls (24 of 24 over 3x)
        one = (rng.random((commands, launches, 1)) < 0.5) & (
            np.arange(cases) != rng.integers(cases, size=(commands, launches, 1)))
        effects += (stalled & ~one) * _log_uniform(rng, STALL_FACTORS, (commands, launches, 1))
    return effects


def _log_uniform(rng, bounds: tuple[float, float], shape) -> np.ndarray:
    return rng.uniform(np.log(bounds[0]), np.log(bounds[1]), shape)


@functools.lru_cache(maxsize=2)
def load(path: Path = CORPUS) -> dict:
    return json.loads(Path(path).read_text())


def deviations(condition: str, path: Path = CORPUS) -> dict[str, list[np.ndarray]]:
    """Each kernel's recorded commands in `condition` ("COND" or "COND:KERNEL"), each a
    (launches, cases) array of log launch medians less each case's median over the
    condition's commands of its kernel; a launch with a case missing is left out."""
    name, _, only = condition.partition(":")
    kernels = load(path)["conditions"].get(name, {})
    if only:
        kernels = {only: kernels[only]} if only in kernels else {}
    if not kernels:
        known = ", ".join(f"{c}[:{'|'.join(k)}]" for c, k in load(path)["conditions"].items())
        raise ValueError(f"corpus has no condition {condition!r}: {known}")
    found = {}
    for kernel, recorded in kernels.items():
        runs = [np.log(np.array([row for row in command if None not in row], float))
                for command in recorded["commands"]]
        runs = [run for run in runs if len(run)]
        typical = np.median(np.concatenate(runs), axis=0)
        found[kernel] = [run - typical for run in runs]
    return found


def corpus_effects(rng, condition: str, commands: int, launches: int, cases: int,
                   path: Path = CORPUS, stitched: bool = False) -> np.ndarray:
    """Block b of the cases (as many as a kernel recorded) is always kernel b mod the
    kernels', its sizes in order, so a case is the same kernel and size in every command
    drawn (a history's, the sides of a compare); each command draws its recorded command
    per block, or with `stitched` recorded commands end to end (_stitched)."""
    pools = list(deviations(condition, path).values())
    out = np.empty((commands, launches, cases))
    for c in range(commands):
        for b, start in enumerate(range(0, cases, pools[0][0].shape[1])):
            pool = pools[b % len(pools)]
            width = min(pool[0].shape[1], cases - start)
            if stitched:
                out[c, :, start:start + width] = _stitched(rng, pool, launches)[:, :width]
                continue
            run = pool[rng.integers(len(pool))]
            order = np.concatenate([rng.permutation(len(run))] + [
                rng.integers(len(run), size=len(run)) for _ in range(launches // len(run))])
            out[c, :, start:start + width] = run[order[:launches], :width]
    return out


def _stitched(rng, pool: list[np.ndarray], launches: int) -> np.ndarray:
    """`launches` rows of recorded commands end to end, each in its recorded order, the
    commands in random order (all of them before any again)."""
    rows: list[np.ndarray] = []
    while sum(len(r) for r in rows) < launches:
        rows += [pool[i] for i in rng.permutation(len(pool))]
    return np.concatenate(rows)[:launches]
