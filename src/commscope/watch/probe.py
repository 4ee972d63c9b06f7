"""A watch: one sweep plan measured again and again into one results file, a probe at a
time (docs/watch.md, "Running a watch").

A probe is the plan's runs measured as `commscope sweep` measures them (measure_runs),
each run labelled `watch=NAME` and `probe=N` (watch/points.py). It stays within its budget:
its plans share half of it for sampling (plan.for_probe), a case or a launch's start that
shows no progress for half of it is hung, and a launch still running when the budget
ends is stopped (_Budgeted). A probe that cannot run is stored all the same: its run ends
failed or interrupted as any run does, with a warning row naming, in health's words, what
stopped it: `unreachable` (a launch that ended in an error: a host down, ranks that cannot
talk), `hung` (no progress within the timeout) or `over budget`.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..stats.advice import Advice
from ..stats.replication import PILOT
from ..store import names
from ..store.store import Store
from ..system import stopping
from ..system.errors import UserError
from ..system.launcher.job import current, using
from ..system.mpi import Mpi
from ..measure.launches import MIN_LAUNCH_COST_S, Run, measure_runs
from ..measure.plan import MIN_CASE_TIME, Plan, for_probe
from ..measure.sweep import SweepPlan
from . import points as stored

NAP_S = 0.1  # between probes, a stop signal is seen within this
SAMPLING_SHARE = 0.5  # of the budget, shared by the plans' launches; the rest: start-ups
HANG_SHARE = 0.5  # of the budget: a case or a launch's start without progress this long
DEFAULT_BUDGET_S = 30.0

# The default probe set: a few small cases, a few launches each, so a probe takes seconds
DEFAULT_TOP = """\
# commscope watch's default probe set (docs/watch.md): a few small cases in a few
# launches each, so that a probe takes seconds. Edit it before the first probe: a watch
# keeps one set of cases.
launches = 3
max_time = 0.5
"""
ON_THIS_HOST = """
[[experiment]]
kernel = "pingpong"
sizes = "8,1MiB"

[[experiment]]
kernel = "allreduce"
sizes = "8"
"""
# Over hosts: every pair of them in the pairs kernel's tournament rounds (native/kernels/
# pairs.c: N hosts play N-1 rounds, N odd: N), one rank each, and an allreduce over all
ON_HOSTS = """
[[experiment]]
kernel = "pairs"
sizes = "8,1MiB"
np = {n}
hosts = [{hosts}]
params = {{ ppn = 1, round = [{rounds}] }}

[[experiment]]
kernel = "allreduce"
sizes = "8"
np = {n}
hosts = [{hosts}]
"""


def default_plan(hosts: list[str] | None = None) -> str:
    """The default probe set's plan text: on this host, or over `hosts` (one rank each)."""
    if not hosts:
        return DEFAULT_TOP + ON_THIS_HOST
    n = len(hosts)
    rounds = range(1, (n - 1 if n % 2 == 0 else n) + 1)
    return DEFAULT_TOP + ON_HOSTS.format(
        n=n, hosts=", ".join(f'"{h.split(":")[0]}:1"' for h in hosts),
        rounds=", ".join(map(str, rounds)))


def write_default(path: str, hosts: list[str] | None) -> None:
    """The default probe set written to `path`, which must not exist (never overwritten)."""
    target = Path(path)
    if hosts is not None and len(hosts) < 2:
        raise UserError(f"--hosts {','.join(hosts)}: pairs need two hosts or more; give "
                        "more, or leave --hosts out for a probe on this host")
    if target.exists():
        raise UserError(f"--default {path}: exists; give a new file name (it is never "
                        "overwritten)")
    try:
        target.write_text(default_plan(hosts))
    except OSError as exc:
        raise UserError(f"--default {path}: cannot write it ({exc.strerror}); choose "
                        "another path") from None


def floor_s(points: list[Plan]) -> float:
    """The least a probe of these plans can take, counted low so that only a budget that
    surely cannot hold a probe is refused: each launch (a fixed count, or auto's pilot) at
    least MIN_LAUNCH_COST_S to start and MIN_CASE_TIME (or min_time) a case."""
    return sum((p.sampling.launches or PILOT)
               * (MIN_LAUNCH_COST_S + p.cases * (p.sampling.min_time or MIN_CASE_TIME))
               for p in points)


def check_budget(plan: SweepPlan, budget_s: float) -> None:
    """Refuse, before anything runs, a budget that no probe of the plan fits in."""
    launches = sum(p.sampling.launches or PILOT for p in plan.points)
    least = floor_s(plan.points)
    case_s = max(p.sampling.min_time or MIN_CASE_TIME for p in plan.points)
    least = max(least, case_s / HANG_SHARE)  # a case must fit in the hang timeout
    if budget_s < least:
        raise UserError(f"--budget {budget_s:g}s: a probe of {plan.path} takes at least "
                        f"{least:.2g} s ({launches} launches of {plan.cases} cases, each "
                        f"launch {MIN_LAUNCH_COST_S:g} s to start and each case "
                        f"{case_s:g} s, at least); give --budget {_rounded_up(4 * least)}s "
                        "or more, or fewer cases in the plan")


def _rounded_up(seconds: float) -> str:
    """A budget to suggest: whole seconds (one at least)."""
    return str(max(1, int(seconds) + (seconds % 1 > 0)))


def case_names(p: Plan) -> set[tuple]:
    """What a watch's plan measures, case by case: kernel, mode, size, process count and
    parameters (where and with what it ran is its provenance, not its cases)."""
    params = tuple(sorted(p.params.items()))
    return {(p.kernel.name, m, b, p.ranks, params) for m in p.modes for b in p.sizes}


def _stored_names(cases) -> set[tuple]:
    return {(c.kernel, c.send_mode, c.bytes, c.launched_ranks, tuple(sorted(c.params.items())))
            for c in cases}


def check_same_cases(store: Store, plan: SweepPlan, name: str) -> None:
    """Refuse a plan whose cases are not those the watch's latest probe measured: its
    history would mix two probe sets. A probe that stopped early may hold fewer."""
    planned = set().union(*map(case_names, plan.points))
    for number, runs in reversed(stored.watch_runs(store, name)):
        found = _stored_names(c for r in runs for c in store.cases(r.id))
        if not found:
            continue
        whole = all(r.status == "complete" for r in runs)
        extra = found - planned
        if extra or whole and found != planned:
            odd = min(extra or planned - found, key=str)
            held = "holds" if extra else "lacks"
            raise UserError(f"{plan.path}: watch {name} in {store.path} holds probes of "
                            f"another plan (probe {number} {held} "
                            f"{names.case(*odd[:3])} np{odd[3]}); give the plan another "
                            "name (name = \"...\") or another --db")
        return


class _Timed:
    """A launch in flight that the probe's budget ends: stopped at the deadline."""

    def __init__(self, job, deadline: float):
        self.job, self.deadline = job, deadline
        self.oversubscribed = job.oversubscribed
        self.over = False  # stopped at the deadline
        self.exited = False  # ended of itself (not stopped)

    def lines(self) -> list[str]:
        return self.job.lines()

    def poll(self) -> int | None:
        code = self.job.poll()
        if code is None and time.monotonic() > self.deadline:
            self.over = True
            self.job.stop()
            code = self.job.poll()
        self.exited = self.exited or (code is not None and not self.over)
        return code

    def stop(self) -> None:
        self.job.stop()

    def output(self):
        return self.job.output()

    def close(self) -> None:
        self.job.close()


class _Budgeted:
    """The launcher in use, its launches stopped at the probe's deadline."""

    def __init__(self, inner, deadline: float):
        self.inner, self.deadline = inner, deadline
        self.jobs: list[_Timed] = []

    def start(self, mpi, ranks: int, args: list[str], placement, records: Path) -> _Timed:
        job = _Timed(self.inner.start(mpi, ranks, args, placement, records), self.deadline)
        self.jobs.append(job)
        return job


@dataclass
class Probe:
    """One probe as measured: its number, its runs, how long it took, and the word for
    what stopped it (None: every launch complete)."""
    number: int
    runs: list[Run] = field(default_factory=list)
    took_s: float = 0.0
    word: str | None = None
    missed: int = 0  # slots of the schedule missed before it: the probe before overran


def probes(store: Store, mpi: Mpi, plan: SweepPlan, name: str, budget_s: float,
           every_s: float, count: int | None, command: list[str]) -> Iterator[Probe]:
    """The watch's probes, numbered on from the highest stored, `count` of them (None: until
    a stop signal), each begun on a fixed schedule: the first now, then at start + k *
    every_s, a slot missed by a probe that overran skipped (Probe.missed), never made up."""
    first = stored.last_probe(store, name) + 1
    start, slot, missed = time.monotonic(), 0, 0
    for n in range(count) if count is not None else itertools.count():
        probe = measure_probe(store, mpi, plan, name, first + n, budget_s, command)
        probe.missed = missed
        yield probe
        # a stop signal in a probe ends its launch in flight, which is stored interrupted
        # (measure.py): the watch ends with it
        if count is not None and n + 1 == count or stopping.requested():
            return
        now = time.monotonic()
        due = max(slot + 1, math.ceil((now - start) / every_s)) if every_s else slot + 1
        slot, missed = due, due - slot - 1
        _sleep_until(start + slot * every_s)


def _sleep_until(when: float) -> None:
    """Sleep until `when` (monotonic), ending at once at a stop signal (stopping.check)."""
    while True:
        stopping.check()
        left = when - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, NAP_S))


def measure_probe(store: Store, mpi: Mpi, plan: SweepPlan, name: str, number: int,
                  budget_s: float, command: list[str]) -> Probe:
    """Probe `number` of watch `name`: the plan's runs, labelled, within `budget_s`."""
    share = SAMPLING_SHARE * budget_s / len(plan.points)
    points = [for_probe(p, stored.labels(name, number), share, HANG_SHARE * budget_s)
              for p in plan.points]
    started = time.monotonic()
    budgeted = _Budgeted(current(), started + budget_s)
    with using(budgeted):
        runs = measure_runs(store, mpi, points, command)
    probe = Probe(number, runs, time.monotonic() - started)
    failed = [r for r in runs if r.status == "failed"]
    if failed and budgeted.jobs:
        job = budgeted.jobs[-1]  # the runs stop at the first launch that fails
        probe.word = "over budget" if job.over else "unreachable" if job.exited else "hung"
        _note(store, failed[-1], probe, budget_s)
    return probe


def _note(store: Store, run: Run, probe: Probe, budget_s: float) -> None:
    """The warning row naming what stopped the probe, beside the run's own warnings."""
    launch = run.outcomes[-1]
    seen = {"over budget": f"it passed its --budget of {budget_s:g} s, and launch "
                           f"{run.launches} was stopped",
            "hung": f"launch {run.launches} made no progress for "
                    f"{HANG_SHARE * budget_s:g} s",
            "unreachable": f"launch {run.launches} ended in an error"}[probe.word]
    message = f"probe {probe.number}: {seen} ({launch.message})"
    store.add_warnings(run.run_id, [*store.warnings(run.run_id),
                                    Advice(probe.word, message, None, 1.0)])
