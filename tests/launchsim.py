"""Simulated commands with known variance components, measured the way commscope
measures them: each launch's median of its samples; every case of a run in the same
launches; the spreads from all the run's cases at once (replication.run_spreads); the
launch count of --launches auto chosen from the pilot (replication.launches_needed).
Used by tests/test_replication.py and bench/coverage.py (docs/statistics.md shows it).

Case i's launch k of a command has samples exp(mu + a_i + b_k + c_ik + e):
  a_i ~ N(0, command_i^2)  once per command, the variance between commands;
  b_k ~ N(0, common^2)     once per launch, the same at every case (a slow launch);
  c_ik ~ N(0, tau_i^2)     the case's own launch to launch variation;
  e ~ N(0, sigma^2)        per sample.
The true typical launch median is exp(mu) = 1 (times `shift`). By default
command_i^2 is the variance of a launch's log median (common^2 + tau_i^2 + the
median's own sampling variance, about (1.2533 sigma)^2 / SAMPLES), as replication.py
assumes without history."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from noisesim import launch_effects

from commscope.judge.compare import Side
from commscope.stats.replication import (MAX_LAUNCHES, PILOT, CommandRatio, History, Interval,
                                         Launch, Spread, command_ratios, history, interval, launch,
                                         launches_needed, run_spreads)
from commscope.stats.states import odd_launches

SAMPLES = 20  # per launch: about what a case gets in its share of a default run


@dataclass
class Design:
    taus: np.ndarray  # each case's own launch-to-launch spread
    common: float = 0.0  # the launch effect every case shares
    sigma: float = 0.02  # spread of single samples in a launch
    command: float | None = None  # between commands, as a multiple of the assumed
    precision: float = 0.05
    sizes: np.ndarray | None = None  # each case's message size; default 1, 2, 4, ... bytes
    # A two-level machine: (factor, p): a command runs `factor` times as long with
    # probability p, at every case (the truth is then its level's median)
    levels: tuple[float, float] | None = None
    pilot: int = PILOT  # --launches auto's first launches (launches.py chooses 3 to 8)
    # A noise kind of tests/noisesim.py: its launch effects replace a_i + b_k + c_ik, drawn
    # with taus, common and command (None: the model above)
    noise: str | None = None
    # Leave out the launches in another state or stalled, and take the spreads from the
    # pilot's launches every case kept, as results.py and summary.launch_spreads do (no
    # replacement launches: launches.py measures them where the budget allows)
    screen: bool = False

    def message_sizes(self) -> np.ndarray:
        return 2 ** np.arange(self.taus.size) if self.sizes is None else self.sizes


def one_case(tau: float, **kw) -> Design:
    return Design(np.array([tau]), **kw)


def command(rng, d: Design, count: int | str = "auto", shift: float = 1.0,
            past: list[History | None] | None = None,
            ratio: list[CommandRatio | None] | None = None):
    """One command's run: each case's launches and its spread (None: its own launches')."""
    cases = d.taus.size
    assumed = np.sqrt(d.common ** 2 + d.taus ** 2 + (1.2533 * d.sigma) ** 2 / SAMPLES)
    a = rng.normal(0, 1, cases) * assumed * (1.0 if d.command is None else d.command)
    medians: list[list[Launch]] = [[] for _ in range(cases)]
    noise = None if d.noise is None else launch_effects(
        rng, d.noise, 1, MAX_LAUNCHES, cases, tau=d.taus, common=d.common,
        command=1.0 if d.command is None else d.command)[0]

    def launch_of(which):
        b = rng.normal(0, d.common) if noise is None else 0.0
        for i in which:
            effect = (a[i] + b + rng.normal(0, d.taus[i]) if noise is None
                      else noise[len(medians[i]), i])
            samples = shift * np.exp(effect + rng.normal(0, d.sigma, SAMPLES))
            medians[i].append(launch(samples))
    first = d.pilot if count == "auto" else count
    for _ in range(first):
        launch_of(range(cases))
    table = np.log([[lc.median_s for lc in m] for m in medians])
    spreads = run_spreads(table, d.message_sizes()) if first >= 2 else [None] * cases
    if count == "auto":
        wanted = [launches_needed(s, d.precision, (past or [None] * cases)[i],
                                  ratio[i] if ratio else None, d.pilot)
                  for i, s in enumerate(spreads)]
        for k in range(d.pilot + 1, max(wanted) + 1):
            launch_of([i for i in range(cases) if wanted[i] >= k])
    return medians, spreads


def level(rng, d: Design) -> float:
    """A command's state: 1, or on a two-level machine its other level with its chance."""
    return d.levels[0] if d.levels is not None and rng.random() < d.levels[1] else 1.0


def intervals(rng, d: Design, count: int | str = "auto", commands: int = 0,
              pooled: bool = True, shift: float = 1.0) -> list[Interval]:
    """Each case's interval from one command (its medians `shift` times the design's),
    with a history of `commands` earlier commands of the same design (0: none), each in
    its own state (level), kept to this command's level as figures.read.case_history keeps
    it, and the ratios learned from them (replication.command_ratios); `pooled`: the
    spreads from all the run's cases (else each case's own launches')."""
    past, ratio = None, None
    if commands:
        runs = [command(rng, d, shift=level(rng, d))[0] for _ in range(commands)]
        groups = [[[lc.median_s for lc in run[i]] for run in runs] for i in range(d.taus.size)]
        past = [history(g) for g in groups]
        ratio = command_ratios(past, d.message_sizes())
    medians, spreads = command(rng, d, count, shift, past=past, ratio=ratio)
    pilot = d.pilot if count == "auto" else None
    if d.screen:
        medians, spreads = screened(medians, d.message_sizes(), pilot)
    if commands:
        past = [history(g, float(np.mean(np.log([lc.median_s for lc in m]))))
                for g, m in zip(groups, medians)]
        ratio = command_ratios(past, d.message_sizes())
    # the interval itself, not its cap (replication.MAX_SPAN): its coverage is the question
    return [interval(m, pilot=pilot, given=s if pooled else None,
                     past=past[i] if past else None, ratio=ratio[i] if ratio else None,
                     cap=False)
            for i, (m, s) in enumerate(zip(medians, spreads))]


def screened(medians: list[list[Launch]], sizes, pilot: int | None) -> tuple:
    """Each case's launches less those states.odd_launches leaves out over the run, and
    the spreads from the first `pilot` launches (a fixed count: all) that every case
    using them kept (summary.launch_spreads' rule; None for a case that lost one)."""
    logs = {i: {k: math.log(lc.median_s) for k, lc in enumerate(m)}
            for i, m in enumerate(medians)}
    odd = odd_launches(logs)
    kept = [{k: lc for k, lc in enumerate(m) if k not in {o.launch for o in odd[i]}}
            for i, m in enumerate(medians)]
    numbers = sorted(set().union(*kept))
    first = numbers[:pilot or min(len(c) for c in kept)]
    usable = [i for i, c in enumerate(kept) if all(n in c for n in first)]
    spreads: list[Spread | None] = [None] * len(medians)
    if len(first) >= 2 and usable:
        table = np.log([[kept[i][n].median_s for n in first] for i in usable])
        for i, s in zip(usable, run_spreads(table, np.asarray(sizes)[usable])):
            spreads[i] = s
    return [list(c.values()) for c in kept], spreads


def coverage(rng, d: Design, count: int | str, trials: int, commands: int = 0,
             pooled: bool = True):
    """The share of intervals covering the true median (of the command's level), their
    median half-width (relative) and the mean launch count, over `trials` commands."""
    covered, widths, counts = 0, [], []
    for _ in range(trials):
        truth = level(rng, d)
        for iv in intervals(rng, d, count, commands, pooled, truth):
            covered += iv.ci_low_s <= truth <= iv.ci_high_s
            widths.append(iv.precision)
            counts.append(iv.launches)
    return covered / len(widths), float(np.median(widths)), float(np.mean(counts))


def sides(rng, d: Design, shift: float = 1.0, count: int | str = "auto") -> dict[str, Side]:
    """One command's cases as compare's sides."""
    medians, spreads = command(rng, d, count, shift)
    return {str(i): Side.of({}, np.array([lc.median_s for lc in m]), [],
                         d.pilot if count == "auto" else None, s)
            for i, (m, s) in enumerate(zip(medians, spreads))}


def spread_of(values: list[float]) -> Spread:
    logs = np.log(values)
    return Spread(float(logs.var(ddof=1)), logs.size - 1)
