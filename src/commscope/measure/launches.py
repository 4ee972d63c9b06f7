"""Runs made of launches: each plan measured in several launches (one mpirun each), by
default as many as its cases need, in turns across the plans of one command.

A plan's launches form one run. With `launches = K` every case is measured in K
launches. By default (auto) every case is measured in the pilot's launches first, each
with its cases in an order of its own; then each case is measured in as many more as
its pilot's spread asks for to bring its interval within +-precision (Stein's
two-stage count, replication.launches_needed), up to MAX_LAUNCHES, while the run has
time left of its max_time seconds; none more where the variation between commands
dominates, which more launches of one command cannot narrow. The count is chosen from
the pilot alone, so the interval stays exact (replication.py). Within a launch a case
samples until its median is within +-precision/2, or its share of the time left runs
out (plan.Step): launch medians need only be precise enough that the launches' spread,
not their own error, sets the interval. docs/statistics.md says what this gives.

The pilot is as many launches as start up within half of max_time, by what the latest
launches of the same thing cost here beyond their sampling (start-up, warm-up, ending;
stored with each launch), from PILOT (3, also when nothing is stored yet) to MAX_PILOT:
where a launch starts in 0.1 s, a 1 s budget makes 5. Slow machine states then fall
inside the command, and a pilot of 5 has a t quantile of 2.78 where 3 have 4.30. The
count is fixed before the first launch, so Stein's interval stays exact.

max_time is wall time of launches, their start-up included: auto plans it for the
pilot and one launch more (the pilot's share, the rest goes to the cases that ask for
more). Every launch of the pilot (or of a fixed count) gets the same share, fixed
before the first, so that no launch is left the minimum samples because an earlier one
ran long (_step).
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable


from ..system import host, owner, stopping
from ..stats.advice import broad, case_advice, launch_effects, run_advice
from ..store.cases import grouped
from .measure import Outcome, measure
from ..system.launcher import slurm
from ..system.mpi import Mpi
from .plan import Plan, Step
from ..system.progress import Progress
from ..stats.replication import MAX_LAUNCHES, PILOT, launches_needed
from ..figures.read import histories, measured
from ..stats.states import screen
from ..store.store import Store
from ..stats.summary import launch_spreads

MAX_PILOT = 8
START_UP_SHARE = 0.5  # auto: the pilot's start-ups take at most this share of max_time
LAUNCH_COST_S = 0.15  # a launch's own cost (MPI start-up, probes) until one is measured
MIN_LAUNCH_COST_S = 0.02


@dataclass
class Run:
    """One plan's run as it is measured: its launches so far and the cases still to measure."""
    plan: Plan
    index: int  # the plan's place in the command (a sweep's point)
    run_id: int | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    spent_s: float = 0.0
    launch_cost_s: float = LAUNCH_COST_S  # the least a launch cost beyond its sampling
    pilot: int = PILOT  # auto: the launches every case gets (_planned)
    key: str = ""  # what it launches, under which its launches' start-up costs are stored
    share_s: float | None = None  # each case's share in every launch of the first round
    needed: dict | None = None  # (mode, bytes) -> launches its pilot asks for
    replaced: int = 0  # launches measured in place of ones in another state (_replacements)
    todo: dict[str | None, list[int]] | None = None  # mode -> sizes of the next launch

    @property
    def launches(self) -> int:
        return len(self.outcomes)

    @property
    def status(self) -> str:
        failed = [o for o in self.outcomes if o.status != "complete"]
        return failed[-1].status if failed else "complete"


def measure_runs(store: Store, mpi: Mpi, plans: list[Plan], command: list[str],
                 sweep_id: int | None = None,
                 case_key: Callable[[int, int, str | None, int], str] | None = None,
                 stored: set[str] = frozenset(),
                 on_launch: Callable[[Run, Outcome], None] | None = None) -> list[Run]:
    """Every plan's run, launch k of every plan before launch k+1 of any, so that drift
    over the command spreads over all plans. `case_key(plan index, launch number, mode,
    bytes)` names a sweep's cases, and cases whose key is `stored` are not measured
    again. Stops at the first launch that does not complete. Its progress (_progress) is
    drawn on a terminal."""
    owner.check_temp()
    runs = [_planned(store, mpi, Run(p, i)) for i, p in enumerate(plans)]
    progress = _progress(plans, command, sweep_id, stored)
    try:
        return _measure_runs(store, mpi, runs, command, sweep_id, progress, case_key, stored,
                             on_launch)
    except KeyboardInterrupt:  # stopped between launches, or while one was set up or ended
        message = f"interrupted by {stopping.name()} between or around launches"
        for run in runs:
            if run.run_id is not None:
                store.end_running(run.run_id, "interrupted",
                                  f"{message}; {len(store.cases(run.run_id))} finished "
                                  "cases kept")
        raise
    finally:
        progress.close()


def _progress(plans: list[Plan], command: list[str], sweep_id: int | None,
              stored: set[str]) -> Progress:
    """The command's progress: every plan's cases in the launches each case gets at least
    (a fixed count, or auto's pilot), less a resumed sweep's stored ones; named by the
    verb (and the sweep)."""
    total = sum(p.cases * (p.sampling.launches or PILOT) for p in plans) - len(stored)
    label = " ".join(command[1:2]) + (f" {sweep_id}" if sweep_id is not None else "")
    return Progress(total, label)


def _planned(store: Store, mpi: Mpi, run: Run) -> Run:
    """The run with its key and, for auto, its pilot count and first guess of a launch's
    cost, from the launches of the same thing stored here (the module's docstring)."""
    p = run.plan
    run.key = json.dumps([str(mpi.launcher), p.kernel.name, p.ranks, p.placement.as_dict()],
                         sort_keys=True)
    costs = store.start_ups(run.key)
    if costs:
        run.launch_cost_s = statistics.median(costs)
        if not p.sampling.launches:
            fit = int(START_UP_SHARE * p.sampling.max_time / run.launch_cost_s)
            run.pilot = min(max(fit, PILOT), MAX_PILOT)
    return run


def _measure_runs(store, mpi, runs: list[Run], command, sweep_id, progress, case_key,
                  stored, on_launch) -> list[Run]:
    number = 0
    while True:
        number += 1
        active = [r for r in runs if _wants(store, r, number)]
        if not active:
            break
        for run in active:
            todo = _todo(run, number, case_key, stored)
            if not todo:
                continue
            outcome = _launch(store, mpi, run, todo, number, command, sweep_id, progress,
                              case_key)
            if on_launch:
                on_launch(run, outcome)
            if outcome.status != "complete":
                _finish_all(store, runs)
                return runs
    _finish_all(store, runs)
    return runs


def _wants(store: Store, run: Run, number: int) -> bool:
    """Whether the run takes launch `number`: every case the pilot's launches, then the
    cases whose pilot asks for this many (Stein's count, replication.launches_needed) while
    the run's time lasts."""
    s = run.plan.sampling
    first_round = (s.launches or run.pilot) + run.replaced
    if number <= first_round:
        return True
    if number == first_round + 1 and _replacements(store, run):
        return True
    if s.launches:
        return False
    if number > MAX_LAUNCHES or run.spent_s + run.launch_cost_s >= s.max_time \
            or not s.adaptive or run.run_id is None:
        return False
    if run.needed is None:  # chosen once, from the pilot alone: no peeking at later launches
        run.needed = _needed(store, run)
    run.todo = {}
    for (mode, nbytes), k in run.needed.items():
        if k >= number:
            run.todo.setdefault(mode, []).append(nbytes)
    return bool(run.todo)


def _replacements(store: Store, run: Run) -> bool:
    """Whether the run measures one more launch in place of one in another state
    (states.screen) among its first round (the pilot, or a fixed count): up to half of
    them less one, so the first round stays a majority; auto's while its time lasts (a
    fixed count is the user's: it is replaced whatever the budget). Every case is
    measured in the replacement, as in the launch it replaces."""
    s = run.plan.sampling
    first_round = s.launches or run.pilot
    if run.run_id is None or run.replaced >= (first_round - 1) // 2 \
            or not s.launches and run.spent_s + run.launch_cost_s >= s.max_time:
        return False
    _, odd = screen([cases for _, cases in grouped(store.cases(run.run_id))])
    if len({o.launch for found in odd for o in found if o.cause == "state"}) <= run.replaced:
        return False
    run.replaced += 1
    return True


def _needed(store: Store, run: Run) -> dict[tuple[str | None, int], int]:
    """Each case's launch count from its pilot launches' spread (all the run's cases at
    once: summary.launch_spreads) and its history."""
    found = {}
    groups, _ = screen([cases for _, cases in grouped(store.cases(run.run_id))])
    pasts, ratios = histories(store, groups)
    for cases, spread, past, ratio in zip(groups, launch_spreads(groups), pasts, ratios):
        if spread is not None:  # with --each, a launch holds every side: the most any asks
            key = (cases[0].send_mode, cases[0].bytes)
            found[key] = max(found.get(key, 0), launches_needed(
                spread, run.plan.sampling.precision, past, ratio, run.pilot))
    return found


def _todo(run: Run, number: int, case_key, stored) -> dict[str | None, list[int]]:
    """Mode -> sizes of the run's launch `number`: the plan's cases (or the pending ones),
    less those a resumed sweep already stored."""
    p = run.plan
    wanted = run.todo if run.todo is not None and number > run.pilot \
        else {m: list(p.sizes) for m in p.modes}
    if case_key:
        wanted = {m: [b for b in sizes if case_key(run.index, number, m, b) not in stored]
                  for m, sizes in wanted.items()}
    return {m: sizes for m, sizes in wanted.items() if sizes}


def _step(run: Run, number: int, cases: int) -> Step:
    """Launch `number`'s share of the run's time. The launches every case gets (the pilot
    of auto, or all K of a fixed count) each get the same share, fixed before the first:
    what is left after the start-up of the launches planned, over those launches, over
    the cases. Launches are then alike (a later launch's median no noisier than the
    first's for want of time), at the cost of running past max_time when a launch starts
    up slower than planned, or than half the budget allows; the launches auto adds after
    them share what is left."""
    s = run.plan.sampling
    first_round = (s.launches or run.pilot) + run.replaced
    if number <= first_round and run.share_s is not None:
        return Step(number, run.share_s, s.precision / 2)
    planned = max((s.launches or run.pilot + 1) - run.launches, 1)
    left = max(s.max_time - run.spent_s - planned * run.launch_cost_s, 0.0)
    if number <= first_round:  # start-ups that take the budget leave the cases half of it
        left = max(left, (1 - START_UP_SHARE) * s.max_time)
    share = left / (planned * cases)
    if number <= first_round:
        run.share_s = share
    return Step(number, share, s.precision / 2)


def _facts(store, mpi, p) -> dict:
    """The launching host's facts, with the Slurm allocation it ran in (and srun's PMI)."""
    facts = host.recent(store.latest_host_facts())
    allocation = slurm.allocation()
    if allocation is None:
        return facts
    allocation["launcher"] = p.placement.launcher
    if p.placement.launcher == "srun":
        allocation["pmi"] = slurm.pmi(mpi.family, mpi.version_text)
    return {**facts, "slurm": allocation}


def _launch(store, mpi, run: Run, todo, number: int, command, sweep_id, progress,
            case_key) -> Outcome:
    stopping.check()
    p = run.plan
    if run.run_id is None:
        pilot = {} if p.sampling.launches or not p.sampling.adaptive else {"pilot": run.pilot}
        run.run_id = store.begin_run(command, p.kernel.name, p.ranks, False,
                                     {**p.settings(), "point": run.index, **pilot}, sweep_id,
                                     kernel_facts=p.kernel.described,
                                     host_facts=_facts(store, mpi, p))
    launch_plan = p.measuring(todo)
    step = _step(run, number, launch_plan.cases)
    key = None if case_key is None else \
        (lambda rec: case_key(run.index, number, rec.get("send_mode"), rec["bytes"]))
    started = time.monotonic()
    outcome = measure(store, mpi, launch_plan, run.run_id, step, key, progress)
    took = time.monotonic() - started
    run.spent_s += took
    cost = max(took - outcome.ingest.sampling_s, MIN_LAUNCH_COST_S)
    run.launch_cost_s = min(run.launch_cost_s if run.launches else float("inf"), cost)
    if outcome.status == "complete" and p.sampling.adaptive:
        store.note_launch(outcome.launch_id, start_up_key=run.key, start_up_s=cost)
    run.outcomes.append(outcome)
    return outcome


def _finish_all(store: Store, runs: list[Run]) -> None:
    """Each run's warnings over all its launches' cases, then its end."""
    for run in runs:
        if run.run_id is None:
            continue
        context = next((o.ingest.context for o in run.outcomes if o.ingest.context), None) or {}
        resolution = (context.get("timer") or {}).get("resolution_s")
        oversubscribed = any(o.oversubscribed for o in run.outcomes)
        found = measured(store, [run.run_id])
        advice = run_advice(oversubscribed, run.plan.ranks, [s for _, s in found],
                            run.plan.settings().get("precision"))
        effects = launch_effects([s for _, s in found])
        for cases, summary in found:
            mine = case_advice(cases, summary, resolution)
            cause = broad(cases[0].id, summary, effects)
            if cause:  # it names the launches that differed, which `wide` would repeat
                mine = [a for a in mine if a.kind != "wide"] + [cause]
            advice += mine
        store.add_warnings(run.run_id, advice)
        failed = [o for o in run.outcomes if o.status != "complete"]
        store.finish_run(run.run_id, run.status, failed[-1].message if failed else None)
