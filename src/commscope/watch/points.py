"""A watch's probes as stored: each probe is the ordinary runs of one measuring of the
watch's plan (watch/probe.py), every one labelled with the plan's info labels
`watch=NAME` and `probe=N` (Plan.info, stored in the run's settings). Written by
`commscope watch`, read here by everything that reads a watch's history.

An old probe is folded: each case's figure, kept launch medians and provenance go to the
watch_points table (schema 10) and its runs are deleted, so a long watch grows by bytes a
probe, not by its raw samples (docs/watch.md, "What a watch keeps")."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..store.cases import REPETITION_LABELS
from ..store.rows import RunRow
from ..store.store import Store

WATCH, PROBE = "watch", REPETITION_LABELS[0]  # the info labels a watch's runs carry


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
    """The highest probe of watch `name` stored, whole or folded; 0 where it has none."""
    found = watch_runs(store, name)
    folded_last = store.db.execute("SELECT max(probe) FROM watch_points WHERE watch = ?",
                                   (name,)).fetchone()[0]
    return max(found[-1][0] if found else 0, folded_last or 0)


def watches(store: Store) -> list[str]:
    """Every watch in the file, whole or folded, in order of first appearance."""
    whole = ((row.settings.get("info") or {}).get(WATCH) for row in store.runs())
    folded = (r[0] for r in store.db.execute(
        "SELECT watch FROM watch_points GROUP BY watch ORDER BY min(rowid)"))
    return [w for w in dict.fromkeys([*folded, *whole]) if w is not None]


@dataclass(frozen=True)
class Folded:
    """A case of a folded probe: what watch/history.py reads of a probe's runs. `case` is the
    case's key (watch.history.case_key), `provenance` [mpi, library settings' key, hosts]
    (None where the probe measured nothing of it: `fault` says why)."""
    probe: int
    started_utc: str
    case: dict
    provenance: tuple | None
    median_s: float | None
    launches_s: tuple[float, ...]
    fault: str | None


def fold(store: Store, name: str, run_ids: list[int], points: list[Folded]) -> None:
    """Probe points of watch `name` in place of its runs `run_ids`, in one transaction."""
    def text_id(value) -> int:
        text = json.dumps(value, sort_keys=True)
        store.db.execute("INSERT OR IGNORE INTO watch_texts (text) VALUES (?)", (text,))
        return store.db.execute("SELECT id FROM watch_texts WHERE text = ?",
                                (text,)).fetchone()[0]

    def insert():
        store.db.executemany(
            "INSERT INTO watch_points (watch, probe, started_utc, case_text, provenance, "
            "median_s, launches, fault) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(name, p.probe, p.started_utc, text_id(p.case),
              None if p.provenance is None else text_id(list(p.provenance)), p.median_s,
              np.asarray(p.launches_s, dtype="<f8").tobytes(), p.fault) for p in points])
    store.replace_runs(run_ids, insert)


def folded(store: Store, name: str) -> list[Folded]:
    """The folded probes' points of watch `name`, in probe order."""
    rows = store.db.execute(
        "SELECT probe, started_utc, c.text AS case_text, p.text AS provenance, median_s, "
        "launches, fault FROM watch_points LEFT JOIN watch_texts c ON c.id = case_text "
        "LEFT JOIN watch_texts p ON p.id = provenance WHERE watch = ? ORDER BY probe, "
        "watch_points.rowid", (name,))
    return [Folded(r["probe"], r["started_utc"], json.loads(r["case_text"]),
                   None if r["provenance"] is None else _provenance(r["provenance"]),
                   r["median_s"], tuple(np.frombuffer(r["launches"] or b"", dtype="<f8")
                                        .tolist()), r["fault"]) for r in rows]


def _provenance(text: str) -> tuple:
    mpi, library, hosts = json.loads(text)
    return mpi, library, tuple(hosts)
