"""`commscope health --screen`'s launches, in screen.py's design: each planned by
screen.next_launch (a random matching of every node, then each unresolved node with a
cleared one), one round in the launch's host order, measured as a launch of one stored run, read back from the store as directed log
bandwidths between the check's nodes, and judged after each (screen.run_screen)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from .errors import UserError
from .health import PHASES, _middle, node_names
from .launcher.hosts import parse_hosts
from .measure import measure
from .plan import Plan, Step
from .screen import Launch, Observations, Screen, run_screen
from .store import Store


def screen_hosts(store: Store, mpi, base: Plan, names: list[str], ppn: int,
                 command: list[str], threshold: float, seed: int | None = None,
                 progress=None) -> tuple[Screen, int]:
    """The screen of these nodes (base: the pairs plan over all of them, in this order),
    stored as one run; its id. A launch that does not complete ends it: nothing is judged
    from a partial round."""
    run: dict = {}

    def launch_of(launch: Launch) -> Observations:
        plan = _plan(base, launch, names, ppn)
        if "id" not in run:
            run["id"] = store.begin_run(command, "pairs", base.ranks, False,
                                        {**base.settings(), "point": 0, "screen": True},
                                        kernel_facts=base.kernel.described)
        outcome = measure(store, mpi, plan, run["id"], Step(launch.number), progress=progress)
        if outcome.status != "complete":
            store.finish_run(run["id"], outcome.status, outcome.message)
            raise UserError(f"health --screen: launch {launch.number} of run {run['id']} "
                            f"{outcome.message}; no verdict is given")
        return observations(store, run["id"], launch.number, ppn, plan.sizes[-1], names)

    found = run_screen(len(names), launch_of, threshold, np.random.default_rng(seed))
    store.finish_run(run["id"], "complete")
    return found, run["id"]


def _plan(base: Plan, launch: Launch, names: list[str], ppn: int) -> Plan:
    """The launch's plan: its nodes in its order, 2i with 2i+1 (schedule adjacent)."""
    hosts = parse_hosts(",".join(f"{names[x]}:{ppn}" for x in launch.order), None)
    return dataclasses.replace(
        base, ranks=len(launch.order) * ppn, params={**base.params, "schedule": "adjacent"},
        placement=dataclasses.replace(base.placement, hosts=hosts))


def observations(store: Store, run_id: int, number: int, ppn: int, size: int,
                 names: list[str]) -> Observations:
    """Launch `number`'s directed bandwidths at `size`, as the check's node indices: x's
    sent stream to its peer moves ppn W n bytes in its slowest rank's time (health's
    matrices read the same phase)."""
    row = next(r for r in store.launches(run_id) if r["number"] == number)
    local = node_names(json.loads(row["context"]), ppn)
    index = np.array([names.index(h) for h in local])
    source, dest, log_bw = [], [], []
    for nbytes, window, launch, peers, phases in store.case_phases(run_id, (size,)):
        if launch != number or not nbytes:
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
    return Observations(np.full(source_a.size, number), source_a, np.concatenate(dest),
                        np.concatenate(log_bw))
