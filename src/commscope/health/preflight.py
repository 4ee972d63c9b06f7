"""`commscope health`'s launches that trace what stops them: the screen's, in screen.py's
design (each planned by screen.next_launch: a random matching of every node, then each
unresolved node with a cleared one; one round in the launch's host order, measured as a
launch of one stored run, read back from the store as directed log bandwidths between the
check's nodes, and judged after each: screen.run_screen), and the full matrix's where one
of its launches does not finish (check_hosts). A launch that does not finish is traced to
the node or pair behind it (diagnose).

A round's launch that shows no progress for STALL_SHARE of its deadline is looked at while
it waits: the launcher in use is asked which of its ranks are not running (stopped_ranks),
so that a stall is named by host and rank whether or not it comes back (issue 50). One that
went on, or was stopped at its deadline and ran clean when launched again, is `stalled`
(transient); one that stops every launch that holds its node is `hung`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..system.errors import UserError, to_run
from ..stats.verdict.health import tournament_rounds
from .health import PHASES, _middle, node_names
from ..system.launcher import launch as launch_argv
from ..system.launcher.hosts import Hosts, parse_hosts
from ..system.launcher.job import current, using
from ..system.launcher.placement import one_rank_each
from ..measure.measure import measure
from ..measure.plan import Plan, Step, on_hosts
from ..stats.replication import PILOT
from ..stats.verdict.spec import VerdictSpec
from .screen import Faults, Launch, Observations, Screen, judge, run_screen
from ..store.store import Store


FIRST_DEADLINE_S = 60.0  # --deadline's default before any launch has finished
DEADLINE_FACTOR = 5  # then: this many times the slowest finished launch
MIN_DEADLINE_S = 10.0
# A round's launch without a record for this share of its deadline has its ranks looked
# at: early enough that a stall the watchdog would end is seen while it lasts
STALL_SHARE = 0.5
PROBE_TIMEOUT_S = 20.0  # the look itself: one short launch of a process on each host
# /proc/PID/stat states of a rank that is not running: what a stall is traced to
NOT_RUNNING = {"T": "stopped (SIGSTOP, job control or a debugger)",
               "t": "stopped by a tracer (a debugger)",
               "D": "in uninterruptible sleep (a kernel or driver wait, a hung file system)",
               "Z": "exited, its launcher not yet told"}
# The look, run on each host: every rank of the launch whose records file it names
# (`--output PATH` in its argv: no other launch's) that is not running, with its rank and
# state
PROBE = """import os, sys
want = [b"--output", sys.argv[1].encode()]
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
        if not any(argv[i:i + 2] == want for i in range(len(argv) - 1)):
            continue
        env = dict(x.split(b"=", 1) for x in open(f"/proc/{pid}/environ", "rb").read()
                   .split(b"\\0") if b"=" in x)
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        continue
    for key in (b"OMPI_COMM_WORLD_RANK", b"PMIX_RANK", b"PMI_RANK", b"SLURM_PROCID"):
        if key in env and state in %r:
            print(f"<probe {int(env[key])} {state}>", flush=True)
            break
""" % "".join(NOT_RUNNING)
# A probe's answer: launchers may join the lines of several processes
ANSWER = re.compile(r"<probe (\d+) ([A-Za-z])>")


@dataclass
class Stall:
    """What a watched launch showed: the ranks not running when it had gone STALL_SHARE
    of its deadline without a record (rank -> state), each rank's node, and the longest
    it went without a record (to the next, or to its end)."""
    ranks: dict[int, str]
    nodes: dict[int, int]
    quiet_s: float

    def of(self, node: int) -> list[int]:
        """The node's ranks not running, else all its ranks in the launch."""
        mine = [r for r, x in sorted(self.nodes.items()) if x == node]
        return [r for r in mine if r in self.ranks] or mine


class _Watched:
    """A job in flight whose records are timed: the longest gap, and one look at its
    ranks (`look`) once it has gone `after_s` without a record."""

    def __init__(self, job, look, after_s: float):
        self.job, self.look, self.after_s = job, look, after_s
        self.oversubscribed = job.oversubscribed
        self.last = time.monotonic()
        self.quiet_s = 0.0
        self.seen: dict[int, str] | None = None

    def lines(self) -> list[str]:
        out = self.job.lines()
        if out:
            now = time.monotonic()
            self.quiet_s, self.last = max(self.quiet_s, now - self.last), now
        return out

    def poll(self) -> int | None:
        code = self.job.poll()
        if code is None and self.seen is None and time.monotonic() - self.last > self.after_s:
            self.seen = self.look()
        return code

    def stop(self) -> None:
        self.quiet_s = max(self.quiet_s, time.monotonic() - self.last)
        self.job.stop()

    def output(self):
        return self.job.output()

    def close(self) -> None:
        self.job.close()


class _Watching:
    """The launcher in use, its launch watched (_Watched)."""

    def __init__(self, inner, after_s: float):
        self.inner, self.after_s, self.job = inner, after_s, None

    def start(self, mpi, ranks: int, args: list[str], placement, records: Path) -> _Watched:
        job = self.inner.start(mpi, ranks, args, placement, records)
        self.job = _Watched(job, lambda: stopped_ranks(self.inner, mpi, ranks, placement,
                                                       records), self.after_s)
        return self.job


def stopped_ranks(launcher, mpi, ranks: int, placement, records: Path) -> dict[int, str]:
    """Rank -> state of the launch's ranks that are not running (NOT_RUNNING). A launcher
    may answer itself (the tests' fake does); the real one's answer is a launch of PROBE on
    each host, where the ranks' records file names them; {} where none could be asked (an
    allocation's nodes unnamed, a probe that did not finish in PROBE_TIMEOUT_S)."""
    asked = getattr(launcher, "stopped_ranks", None)
    if asked is not None:
        return asked(ranks, placement, records)
    from ..system.launcher.process import MpiLauncher

    if not isinstance(launcher, MpiLauncher) or placement.hosts is None:
        return {}
    hosts = list(dict.fromkeys(placement.hosts.names))
    how = launch_argv(mpi, len(hosts), Path(sys.executable), ["-c", PROBE, str(records)],
                      one_rank_each(placement, hosts))
    with subprocess.Popen(how.argv, env=how.env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          start_new_session=True) as probe:
        try:
            out, _ = probe.communicate(timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(probe.pid, signal.SIGKILL)
            probe.communicate()
            return {}
    return {int(rank): state for rank, state in ANSWER.findall(out) if state in NOT_RUNNING}


class Launches:
    """Launches of one stored run (made by `begin` at the first where `run` is None),
    numbered on from `number`, each a node order's plan; the deadline's default follows the
    slowest finished (FIRST_DEADLINE_S, then DEADLINE_FACTOR times it, MIN_DEADLINE_S at
    least)."""

    def __init__(self, store: Store, mpi, ppn: int, deadline: float | None, progress=None,
                 run: int | None = None, number: int = 0, begin=None):
        self.store, self.mpi, self.ppn = store, mpi, ppn
        self.deadline, self.progress, self.run, self.begin = deadline, progress, run, begin
        self.number, self.slowest, self.ids = number, 0.0, {}

    def wait_s(self) -> float:
        return self.deadline or (max(DEADLINE_FACTOR * self.slowest, MIN_DEADLINE_S)
                                 if self.slowest else FIRST_DEADLINE_S)

    def launch(self, plan: Plan, order: tuple[int, ...], watch: bool = False,
               wait_s: float | None = None) -> tuple[int | None, Stall | None]:
        """One launch of `plan` (its nodes `order`): its stored number (None if it did not
        complete) and, `watch`ed, what it showed of a stall. `wait_s`: the seconds it may
        go without a record (default wait_s(); 0: the plan's own)."""
        wait = self.wait_s() if wait_s is None else wait_s
        if self.run is None:
            self.run = self.begin()
        self.number += 1
        watching = _Watching(current(), STALL_SHARE * (wait or 0) or np.inf) if watch \
            else None
        started = time.monotonic()
        with using(watching) if watching else nullcontext():
            outcome = measure(self.store, self.mpi, plan, self.run,
                              Step(self.number, timeout_s=wait or None), progress=self.progress)
        seen = None if watching is None else Stall(
            watching.job.seen or {}, {r: order[r // self.ppn] for r in range(plan.ranks)},
            watching.job.quiet_s)
        if outcome.status != "complete":
            return None, seen
        self.slowest = max(self.slowest, time.monotonic() - started)
        self.ids[self.number] = outcome.launch_id
        return self.number, seen


def stalled(seen: Stall, launch: int, went_on: bool) -> list[dict]:
    """A round's launch that stalled and then ran clean (it went on and finished, or was
    stopped at its deadline, its trace found nothing and the round ran clean launched
    again): one transient `stalled` fault per node with a rank not running, or one naming
    no node where none was seen."""
    how = ("then went on, and the launch finished" if went_on else
           "the launch was stopped at its deadline; launches of its parts all finished, "
           "and the round ran clean launched again")
    nodes = sorted({seen.nodes[r] for r in seen.ranks})
    quiet = f"no record for {seen.quiet_s:.1f} s"
    if not nodes:
        return [{"kind": "stalled", "transient": True, "nodes": (), "ranks": [],
                 "stalled_s": round(seen.quiet_s, 1), "launch": launch,
                 "evidence": f"{quiet}, no rank seen not running; {how}"}]
    return [{"kind": "stalled", "transient": True, "nodes": (x,), "ranks": seen.of(x),
             "state": seen.ranks[seen.of(x)[0]], "stalled_s": round(seen.quiet_s, 1),
             "launch": launch, "evidence": f"{_ranks(seen.of(x))} "
             f"{NOT_RUNNING[seen.ranks[seen.of(x)[0]]]}, {quiet}; {how}"} for x in nodes]


def _ranks(ranks: list[int]) -> str:
    return f"rank{'s' * (len(ranks) > 1)} {', '.join(map(str, ranks))}"


def _named(fault: dict, seen: Stall | None) -> dict:
    """A hung node's fault with its ranks in the round's launch that stalled (those seen
    not running, else all its ranks there) and how long that launch went without a
    record."""
    if fault["kind"] != "hung" or seen is None:
        return fault
    ranks = seen.of(fault["nodes"][0])
    out = {**fault, "ranks": ranks, "stalled_s": round(seen.quiet_s, 1)}
    if ranks[0] in seen.ranks:
        out["state"] = seen.ranks[ranks[0]]
        out["evidence"] += f"; in the round's launch {_ranks(ranks)} {NOT_RUNNING[out['state']]}"
    return out


def screen_hosts(store: Store, mpi, base: Plan, names: list[str], ppn: int,
                 command: list[str], threshold: float, deadline: float | None = None,
                 groups: np.ndarray | None = None, group_names: list[str] = (),
                 seed: int | None = None, progress=None) -> tuple[Screen, int]:
    """The screen of these nodes (base: the pairs plan over all of them, in this order),
    stored as one run; its id. A launch that does not finish within the deadline (no
    record for that long), or fails, is traced to its pair and node (diagnose), and the
    round runs again in a fresh launch without them; one that stalled and then ran clean
    is kept, its stall named (stalled)."""
    faults: list[dict] = []

    def begin() -> int:
        return store.begin_run(command, "pairs", base.ranks, False,
                               {**base.settings(), "point": 0, "screen": True,
                                "screen_nodes": names,
                                "screen_groups": None if groups is None else
                                {"names": list(group_names), "of": groups.tolist()}},
                               kernel_facts=base.kernel.described)

    runs = Launches(store, mpi, ppn, deadline, progress, begin=begin)

    def launched(order: tuple[int, ...]) -> int | None:
        return runs.launch(_plan(base, order, names, ppn), order)[0]

    def found(new: list[dict], number: int) -> None:
        faults.extend({**f, "launch": number} for f in new)
        store.note_run(runs.run, screen_faults=faults)

    def launch_of(launch: Launch) -> Observations:
        missed = None  # the round's launch stopped at its deadline, its trace finding nothing
        for _ in range(2):
            stored, seen = runs.launch(_plan(base, launch.order, names, ppn), launch.order,
                                       watch=True)
            if stored is not None:  # a round: what replay reads back
                stalls = (stalled(missed, launch.number, False) if missed else []) + \
                    (stalled(seen, launch.number, True) if seen.ranks else [])
                if stalls:
                    found(stalls, launch.number)
                store.note_launch(runs.ids[stored], screen_round=launch.number)
                return observations(store, runs.run, stored, ppn, base.sizes[-1], names,
                                    launch.number)
            traced = [_named(f, seen) for f in
                      diagnose(launched, list(launch.order), found_with(launch))]
            if traced:
                found(traced, launch.number)
                raise Faults(traced)
            missed = seen
        store.finish_run(runs.run, "failed", f"round {launch.number} failed twice")
        stopped = f" ({_ranks(sorted(missed.ranks))} not running)" if missed.ranks else ""
        raise UserError(f"health --screen: round {launch.number} did not finish twice"
                        f"{stopped}, and each of its pairs did alone; the hosts are unsteady: "
                        "check them with the full matrix (drop --screen)")

    def found_with(launch: Launch) -> list[int]:
        """Partners to try a pair's sides with: the round's other nodes first (they are
        answering: not hung before), then the rest."""
        return list(launch.order) + [x for x in range(len(names)) if x not in launch.order]

    try:
        screened = run_screen(len(names), launch_of, threshold, np.random.default_rng(seed),
                              groups=groups, group_names=group_names, names=names)
    except BaseException:
        if runs.run is not None:
            store.end_running(runs.run, "interrupted", "the screen stopped")
        raise
    screened.faults = faults  # the transient stalls with those run_screen left out
    store.finish_run(runs.run, "complete")
    return screened, runs.run


def check_hosts(store: Store, mpi, plan: Plan, trace: Plan, names: list[str], ppn: int,
                command: list[str], run: int | None, message: str,
                deadline: float | None = None, progress=None) -> tuple[int, list[dict]]:
    """The full matrix where a launch of it did not finish (`message`; run None: none was
    stored, its nodes not all starting together): the fault traced by launches of `trace`
    (the pairs kernel, every pair touched) of parts of the nodes (diagnose), then the
    launches `plan` has left measured without it, each launch of the nodes but a hung one
    and, for a pair that cannot talk, one without either end (every other pair measured;
    judge takes a launch's missing node as missing). Stored in run `run` (else a new one),
    the trace's launches marked; its id and the faults. UserError where the trace finds
    nothing, or a later launch does not finish."""
    if run is None:
        run = store.begin_run(command, plan.kernel.name, plan.ranks, False,
                              {**plan.settings(), "point": 0},
                              kernel_facts=plan.kernel.described)
    before = store.launches(run)
    kept = [r.number for r in before if r.status == "complete"]
    runs = Launches(store, mpi, ppn, deadline, progress, run,
                    max([r.number for r in before], default=0))
    first = runs.number

    def launched(order: tuple[int, ...]) -> int | None:
        return runs.launch(_plan(trace, order, names, ppn), order)[0]

    faults = diagnose(launched, list(range(len(names))), list(range(len(names))))
    for row in store.launches(run):  # the trace's, finished or not
        if row.number > first:
            store.note_launch(row.id, health_trace=True)
    incomplete = f"health: run {run} {message}; the matrix is incomplete and no verdict is given"
    if not faults:
        store.finish_run(run, "failed", message)
        raise UserError(f"{incomplete} (launches of its parts all finished: the failure did "
                        "not come back); run the check again")
    store.note_run(run, health_nodes=names, health_faults=faults)
    for _ in range((plan.sampling.launches or PILOT) - len(kept)):
        for part in _without(len(names), faults):
            stored, _ = runs.launch(_part(plan, part, names, ppn), part, wait_s=0)
            if stored is not None:  # what health_of reads its nodes by
                store.note_launch(runs.ids[stored], health_part=list(part))
            else:
                store.finish_run(run, "failed", f"a launch without {_faults(faults, names)} "
                                 "did not finish")
                screen = to_run("health", "--screen", "--hosts", ",".join(names), db=store.path)
                raise UserError(f"{incomplete}: a launch without {_faults(faults, names)} did "
                                f"not finish either; check the hosts with {screen}")
    store.finish_run(run, "complete")
    return run, faults


def _faults(faults: list[dict], names: list[str]) -> str:
    return ", ".join(f"{f['kind']} {' -> '.join(names[x] for x in f['nodes'])}" for f in faults)


def _without(n: int, faults: list[dict]) -> list[tuple[int, ...]]:
    """The node sets that measure every pair but the faults': all but the hung nodes, each
    set holding both ends of a pair that cannot talk split in two (one without each end);
    sets of fewer than 2 nodes left out."""
    hung = {f["nodes"][0] for f in faults if f["kind"] == "hung"}
    sets = [tuple(x for x in range(n) if x not in hung)]
    for a, b in (f["nodes"] for f in faults if f["kind"] == "unreachable"):
        sets = [half for s in sets for half in
                ([tuple(x for x in s if x != b), tuple(x for x in s if x != a)]
                 if a in s and b in s else [s])]
    return [s for s in dict.fromkeys(sets) if len(s) >= 2]


def _part(plan: Plan, part: tuple[int, ...], names: list[str], ppn: int) -> Plan:
    """The full matrix's plan over these nodes: every round (pairs) or distance (shift)
    of them in one launch."""
    name = plan.each[0]
    count = tournament_rounds(len(part)) if name == "round" else len(part) - 1
    return on_hosts(plan, _hosts(part, names, ppn),
                    each=(name, tuple(str(v) for v in range(1, count + 1))))


def diagnose(launched, nodes: list[int], spare: list[int]) -> list[dict]:
    """The fault behind a launch of `nodes` that did not finish, by launches of parts of
    them (adaptive group testing): a hung node stops every launch that holds it, a pair
    that cannot talk every launch that holds both (the collectives reach every rank).
    Halve the failing set while a half fails alone; where both halves finish, the fault
    is a pair across them: halve one side, keeping the other, down to its node, then the
    other side keeping that node. A set of two is told apart by trying each with a node
    that finished (or one of `spare`): fine both, the pair cannot talk (unreachable); a
    side that fails with another node too answers no one (hung). About 2 log2 N
    launches; [] where every part finished: the failure did not come back."""
    good: list[int] = []

    def paired(part: list[int]) -> list[int]:
        """A node alone makes no pair: with one that finished, else one outside the
        failing set (a partner from inside it may be the fault)."""
        if len(part) > 1:
            return part
        outside = [x for x in spare if x not in failing]
        return part + [next(x for x in good + outside + spare if x not in part)]

    def fails(part: list[int]) -> bool:
        if launched(tuple(part)) is None:
            return True
        good.extend(x for x in part if x not in good)
        return False

    def needed(side: list[int], rest: list[int]) -> int:
        while len(side) > 1:
            half = side[: len(side) // 2]
            side = half if fails(half + rest) else side[len(side) // 2:]
        return side[0]

    failing = list(nodes)
    while len(failing) > 2:
        a_half, b_half = failing[: len(failing) // 2], failing[len(failing) // 2:]
        # each half with its partner, the second paired after the first was launched
        half = next((p for p in map(paired, (a_half, b_half)) if fails(p)), None)
        if half is not None:
            failing = half
        else:
            a = needed(a_half, b_half)
            failing = [a, needed(b_half, [a])]
    if len(failing) < 2 or not fails(failing):
        return []
    a, b = failing
    others = [x for x in dict.fromkeys(good + spare) if x not in (a, b)]
    if not others:
        return [{"kind": "unreachable", "nodes": (a, b),
                 "evidence": "no launch that held both finished; no other node to try each "
                             "with"}]
    alone = {x: not fails([x, others[i % len(others)]]) for i, x in enumerate((a, b))}
    if alone[a] and alone[b]:
        return [{"kind": "unreachable", "nodes": (a, b),
                 "evidence": "no launch that held both finished; each finished with other "
                             "nodes"}]
    return [{"kind": "hung", "nodes": (x,),
             "evidence": "no launch that held it finished, with two different partners"}
            for x in (a, b) if not alone[x]]


def _plan(base: Plan, order: tuple[int, ...], names: list[str], ppn: int) -> Plan:
    """A launch of these nodes in this order, 2i with 2i+1 (schedule adjacent), every
    pair of them touched first (touch all), so that a pair that cannot talk stops every
    launch that holds it, paired or not: what diagnose traces."""
    return on_hosts(base, _hosts(order, names, ppn), {"schedule": "adjacent", "touch": "all"})


def _hosts(order: tuple[int, ...], names: list[str], ppn: int) -> Hosts:
    """These nodes, in this order, `ppn` slots each."""
    return parse_hosts(",".join(f"{names[x]}:{ppn}" for x in order), None)


def observations(store: Store, run_id: int, number: int, ppn: int, size: int,
                 names: list[str], label: int | None = None) -> Observations:
    """Stored launch `number`'s directed bandwidths at `size`, as the check's node indices,
    labelled the screen's launch `label` (default `number`): x's sent stream to its peer
    moves ppn W n bytes in its slowest rank's time (health's matrices read the same
    phase)."""
    row = next(r for r in store.launches(run_id) if r.number == number)
    local = node_names(row.context, ppn)
    index = np.array([names.index(h) for h in local])
    source, dest, log_bw = [], [], []
    for nbytes, window, _, peers, phases in store.case_phases(run_id, (size,), number):
        if not nbytes:
            continue
        times = _middle(phases[PHASES["pairs"]["bandwidth"]]).reshape(-1, ppn).max(axis=1)
        peer = peers.reshape(-1, ppn)[:, 0]
        node = np.nonzero(peer >= 0)[0]
        source.append(index[node])
        dest.append(index[peer[node] // ppn])
        log_bw.append(np.log(ppn * (window or 1) * nbytes / times[node]))
    if not source:
        return Observations()
    source_a = np.concatenate(source)
    return Observations(np.full(source_a.size, label or number), source_a, np.concatenate(dest),
                        np.concatenate(log_bw))


def replay(store: Store, run_id: int) -> tuple[Screen, list[str], list[int]]:
    """A stored screen judged again as it was run, round by round (its faults from the
    round they were found): the Screen, its nodes and sizes (the report's read)."""
    settings = store.run(run_id).settings
    names, sizes = settings["screen_nodes"], settings["sizes"]
    ppn = int(settings["params"].get("ppn", 1))
    faults = [{**f, "nodes": tuple(f["nodes"])} for f in settings.get("screen_faults", [])]
    grouped = settings.get("screen_groups")
    s = Screen(len(names), VerdictSpec.of(settings["verdict"]).limit.fraction,
               groups=None if not grouped else np.array(grouped["of"]),
               group_names=grouped["names"] if grouped else [], names=names)
    rounds = {r.settings.get("screen_round"): r.number
              for r in store.launches(run_id) if r.status == "complete"}
    rounds.pop(None, None)  # the launches that traced a fault
    for k, number in sorted(rounds.items()):
        s.faults = [f for f in faults if f["launch"] <= k]
        s.launches.append(Launch(k, ()))
        s.obs = s.obs.add(observations(store, run_id, number, ppn, sizes[-1], names, k))
        judge(s)
    s.faults = faults
    return s, names, sizes
