"""A watch's probes as stored: each probe is the ordinary runs of one measuring of the
watch's plan (measure/watch.py), every one labelled with the plan's info labels
`watch=NAME` and `probe=N` (Plan.info, stored in the run's settings). Written by
`commscope watch`, read here by everything that reads a watch's history."""

from __future__ import annotations

from .rows import RunRow
from .store import Store

WATCH, PROBE = "watch", "probe"  # the info labels a watch's runs carry


def labels(name: str, probe: int) -> dict[str, str]:
    """The info labels of probe `probe` of watch `name` (info values are text)."""
    return {WATCH: name, PROBE: str(probe)}


def probe_of(run: RunRow, name: str) -> int | None:
    """The probe of watch `name` that `run` belongs to; None: not one of its runs."""
    info = run.settings.get("info") or {}
    if info.get(WATCH) != name or not str(info.get(PROBE, "")).isdigit():
        return None
    return int(info[PROBE])


def watch_runs(store: Store, name: str) -> list[tuple[int, list[RunRow]]]:
    """The probes of watch `name` in order, each with its runs in the order they began. A
    probe that could not run is here too: its runs end failed or interrupted, with a
    warning naming what stopped it (unreachable, hung or over budget)."""
    probes: dict[int, list[RunRow]] = {}
    for run in store.runs():
        number = probe_of(run, name)
        if number is not None:
            probes.setdefault(number, []).append(run)
    return sorted(probes.items())


def last_probe(store: Store, name: str) -> int:
    """The highest probe of watch `name` stored; 0 where it has none."""
    found = watch_runs(store, name)
    return found[-1][0] if found else 0
