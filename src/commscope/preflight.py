"""`commscope health --screen`'s launches, in screen.py's design: each planned by
screen.next_launch (a random matching of every node, then each unresolved node with a
cleared one), one round in the launch's host order, measured as a launch of one stored
run, read back from the store as directed log bandwidths between the check's nodes, and
judged after each (screen.run_screen); a launch that does not finish traced to the node
or pair behind it (diagnose)."""

from __future__ import annotations

import dataclasses
import json
import time

import numpy as np

from .errors import UserError
from .health import PHASES, _middle, node_names
from .launcher.hosts import parse_hosts
from .measure import measure
from .plan import Plan, Step
from .screen import Faults, Launch, Observations, Screen, judge, run_screen
from .store import Store


FIRST_DEADLINE_S = 60.0  # --deadline's default before any launch has finished
DEADLINE_FACTOR = 5  # then: this many times the slowest finished launch
MIN_DEADLINE_S = 10.0


def screen_hosts(store: Store, mpi, base: Plan, names: list[str], ppn: int,
                 command: list[str], threshold: float, deadline: float | None = None,
                 groups: np.ndarray | None = None, group_names: list[str] = (),
                 seed: int | None = None, progress=None) -> tuple[Screen, int]:
    """The screen of these nodes (base: the pairs plan over all of them, in this order),
    stored as one run; its id. A launch that does not finish within the deadline (no
    record for that long), or fails, is traced to its pair and node (diagnose), and the
    round runs again in a fresh launch without them."""
    state: dict = {"run": None, "stored": 0, "slowest": 0.0, "ids": {}, "faults": []}

    def launched(order: tuple[int, ...]) -> int | None:
        """One launch of these nodes in this order: its stored number, None if it did
        not complete."""
        plan = _plan(base, order, names, ppn)
        wait = deadline or (max(DEADLINE_FACTOR * state["slowest"], MIN_DEADLINE_S)
                            if state["slowest"] else FIRST_DEADLINE_S)
        plan = dataclasses.replace(plan, sampling=dataclasses.replace(plan.sampling,
                                                                       timeout=wait))
        if state["run"] is None:
            state["run"] = store.begin_run(command, "pairs", base.ranks, False,
                                           {**base.settings(), "point": 0, "screen": True,
                                            "screen_nodes": names,
                                            "screen_groups": None if groups is None else
                                            {"names": list(group_names),
                                             "of": groups.tolist()}},
                                           kernel_facts=base.kernel.described)
        state["stored"] += 1
        started = time.monotonic()
        outcome = measure(store, mpi, plan, state["run"], Step(state["stored"]),
                          progress=progress)
        if outcome.status != "complete":
            return None
        state["slowest"] = max(state["slowest"], time.monotonic() - started)
        state["ids"][state["stored"]] = outcome.launch_id
        return state["stored"]

    def launch_of(launch: Launch) -> Observations:
        for _ in range(2):
            stored = launched(launch.order)
            if stored is not None:  # a round: what replay reads back
                store.note_launch(state["ids"][stored], screen_round=launch.number)
                return observations(store, state["run"], stored, ppn, base.sizes[-1], names,
                                    launch.number)
            found = diagnose(launched, list(launch.order), found_with(launch))
            if found:
                state["faults"] += [{**f, "launch": launch.number} for f in found]
                store.note_run(state["run"], screen_faults=state["faults"])
                raise Faults(found)
        store.finish_run(state["run"], "failed", f"round {launch.number} failed twice")
        raise UserError(f"health --screen: round {launch.number} did not finish twice, and "
                        "each of its pairs did alone; the hosts are unsteady: check them with "
                        "the full matrix (drop --screen)")

    def found_with(launch: Launch) -> list[int]:
        """Partners to try a pair's sides with: the round's other nodes first (they are
        answering: not hung before), then the rest."""
        return list(launch.order) + [x for x in range(len(names)) if x not in launch.order]

    try:
        found = run_screen(len(names), launch_of, threshold, np.random.default_rng(seed),
                           groups=groups, group_names=group_names)
    except BaseException:
        if state["run"] is not None:
            store.end_running(state["run"], "interrupted", "the screen stopped")
        raise
    store.finish_run(state["run"], "complete")
    return found, state["run"]


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

    def fails(part: list[int]) -> bool:
        if len(part) == 1:  # a node alone makes no pair: with one that finished
            part = part + [next(x for x in good + spare if x not in part)]
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
        if fails(a_half):
            failing = a_half
        elif fails(b_half):
            failing = b_half
        else:
            a = needed(a_half, b_half)
            failing = [a, needed(b_half, [a])]
    if len(failing) < 2 or not fails(failing):
        return []
    a, b = failing
    others = [x for x in good + spare if x not in (a, b)]
    alone = {x: not fails([x, other]) for x, other in zip((a, b), dict.fromkeys(others))}
    if len(alone) < 2:
        return [{"kind": "unreachable", "nodes": (a, b),
                 "evidence": "no launch that held both finished; no other node to try each "
                             "with"}]
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
    hosts = parse_hosts(",".join(f"{names[x]}:{ppn}" for x in order), None)
    return dataclasses.replace(
        base, ranks=len(order) * ppn, params={**base.params, "schedule": "adjacent",
                                                   "touch": "all"},
        placement=dataclasses.replace(base.placement, hosts=hosts))


def observations(store: Store, run_id: int, number: int, ppn: int, size: int,
                 names: list[str], label: int | None = None) -> Observations:
    """Stored launch `number`'s directed bandwidths at `size`, as the check's node indices,
    labelled the screen's launch `label` (default `number`): x's sent stream to its peer
    moves ppn W n bytes in its slowest rank's time (health's matrices read the same
    phase)."""
    row = next(r for r in store.launches(run_id) if r["number"] == number)
    local = node_names(json.loads(row["context"]), ppn)
    index = np.array([names.index(h) for h in local])
    source, dest, log_bw = [], [], []
    for nbytes, window, _, peers, phases in store.case_phases(run_id, (size,), number):
        if not nbytes:
            continue
        times = _middle(phases[PHASES["pairs"]["bandwidth"]]).reshape(-1, ppn).max(axis=1)
        peer = np.array(json.loads(peers), dtype=np.int64).reshape(-1, ppn)[:, 0]
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
    settings = json.loads(store.run(run_id)["settings"])
    names, sizes = settings["screen_nodes"], settings["sizes"]
    ppn = int(settings["params"].get("ppn", 1))
    faults = [{**f, "nodes": tuple(f["nodes"])} for f in settings.get("screen_faults", [])]
    grouped = settings.get("screen_groups")
    s = Screen(len(names), float(settings["verdict"]["threshold"]),
               groups=None if not grouped else np.array(grouped["of"]),
               group_names=grouped["names"] if grouped else [])
    rounds = {json.loads(r["settings"] or "{}").get("screen_round"): r["number"]
              for r in store.launches(run_id) if r["status"] == "complete"}
    rounds.pop(None, None)  # the launches that traced a fault
    for k, number in sorted(rounds.items()):
        s.faults = [f for f in faults if f["launch"] <= k]
        s.launches.append(Launch(k, ()))
        s.obs = s.obs.add(observations(store, run_id, number, ppn, sizes[-1], names, k))
        judge(s)
    s.faults = faults
    return s, names, sizes
