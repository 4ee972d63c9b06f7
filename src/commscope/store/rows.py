"""The results file's rows as values, read from their sqlite rows and their JSON columns
decoded here, so that no reader parses the file's text. A case row is cases.Case."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from .cases import Case


class _Decoding:
    """A row's JSON columns, each decoded on its first read and kept (cached_property):
    a listing reads few of them, and a large run's placement and rounds are long
    (of 2000 runs of 10 KB each, reading the rows took 0.03 s, decoding them all 0.3 to
    0.5 s more)."""
    text: dict[str, str | None]  # column -> its JSON as stored

    def _decoded(self, column: str):
        return _json(self.text[column])


@dataclass(frozen=True)
class RunRow(_Decoding):
    """A run: one kernel at one process count measured by a command over one or more
    launches, or a program profiled, or another tool's output imported."""
    id: int
    started_utc: str
    finished_utc: str | None
    status: str  # running, complete, interrupted or failed (names.status: as shown)
    message: str | None  # why it stopped early
    kernel: str
    ranks: int
    oversubscribed: bool  # more ranks than cores on some host, in some launch
    mpi_library: str | None
    mpi_version: str | None  # MPI_Get_library_version's text
    sweep_id: int | None
    launch: int | None  # 1..K of an old sweep, whose launches were runs
    n_cases: int
    n_launches: int
    text: dict[str, str | None] = field(repr=False, compare=False)

    @cached_property
    def command(self) -> list[str]:
        """The commscope command line."""
        return self._decoded("command")

    @cached_property
    def context(self) -> dict:
        """The first launch's native context record; {} before one came."""
        return self._decoded("context") or {}

    @cached_property
    def in_flight(self) -> dict | None:
        """The case being measured when the run stopped."""
        return self._decoded("in_flight")

    @cached_property
    def settings(self) -> dict:
        """What the command asked for, with what it noted as it went."""
        return self._decoded("settings") or {}

    @cached_property
    def kernel_facts(self) -> dict:
        """The kernel as the native binary described it."""
        return self._decoded("kernel_facts") or {}

    @property
    def family(self) -> str | None:
        """The kernel's family as the run described it."""
        return self.kernel_facts.get("family")

    @cached_property
    def host_facts(self) -> dict:
        """The launching host, measured with the run; {} before schema 4."""
        return self._decoded("host_facts") or {}

    @cached_property
    def source(self) -> dict | None:
        """An imported run's tool, version and file; None: measured by commscope."""
        return self._decoded("source")

    @cached_property
    def owner(self) -> dict | None:
        """The process measuring it (owner.py)."""
        return self._decoded("owner")


@dataclass(frozen=True)
class LaunchRow(_Decoding):
    """One mpirun of a run."""
    id: int
    run_id: int
    number: int  # 1..K within the run: also the seed of its case order
    started_utc: str
    finished_utc: str | None
    status: str
    oversubscribed: bool
    message: str | None
    text: dict[str, str | None] = field(repr=False, compare=False)

    @cached_property
    def settings(self) -> dict:
        """What it was asked for, with facts noted once it ended."""
        return self._decoded("settings") or {}

    @cached_property
    def context(self) -> dict:
        """Its native context record (placement, timer, ...); {} before one came."""
        return self._decoded("context") or {}

    @cached_property
    def in_flight(self) -> dict | None:
        return self._decoded("in_flight")


@dataclass(frozen=True)
class WarningRow:
    """A quality flag of a run (advice.Advice as stored)."""
    case_id: int | None  # None: about the whole run
    kind: str
    message: str  # what was seen and the remedy
    severity: float | None  # the kind's own measure: the worst cases first


@dataclass(frozen=True)
class SkipRow:
    """A case the native side declined to measure, and why."""
    kernel: str
    send_mode: str | None
    bytes: int
    reason: str


@dataclass(frozen=True)
class SweepRow:
    id: int
    name: str
    plan_path: str
    plan_text: str
    plan_hash: str
    created_utc: str


class PairCase(NamedTuple):
    """What the health matrices read of a stored case (Store.case_phases)."""
    bytes: int
    window: int | None
    launch: int | None
    peers: np.ndarray  # each rank's peer (-1: none), as the record's `peers`
    phases: dict  # name -> [rank][sample] seconds


def _json(text: str | None):
    return json.loads(text) if text else None


RUN_JSON = ("command", "context", "in_flight", "settings", "kernel_facts", "host_facts",
            "source", "owner")
LAUNCH_JSON = ("settings", "context", "in_flight")


def run(row: sqlite3.Row) -> RunRow:
    return RunRow(row["id"], row["started_utc"], row["finished_utc"], row["status"],
                  row["message"], row["kernel"], row["ranks"], bool(row["oversubscribed"]),
                  row["mpi_library"], row["mpi_version"], row["sweep_id"], row["launch"],
                  row["n_cases"], row["n_launches"], {k: row[k] for k in RUN_JSON})


def launch(row: sqlite3.Row) -> LaunchRow:
    return LaunchRow(row["id"], row["run_id"], row["number"], row["started_utc"],
                     row["finished_utc"], row["status"], bool(row["oversubscribed"]),
                     row["message"], {k: row[k] for k in LAUNCH_JSON})


def as_stored(run_row: sqlite3.Row, launch_rows: list[sqlite3.Row]) -> dict:
    """The run as `results export --format json` has always written it (export:3): its
    columns with their JSON as the text stored, beside its command and first context
    decoded, and its launches with their JSON decoded."""
    return {"run": {k: run_row[k] for k in run_row.keys() if k not in ("context", "command")},
            "command": json.loads(run_row["command"]),
            "context": _json(run_row["context"]),
            "launches": [{k: _json(r[k]) if k in LAUNCH_JSON else r[k] for k in r.keys()}
                         for r in launch_rows]}


@functools.lru_cache(maxsize=32)
def _shared_json(text: str | None):
    """A run's or launch's JSON, read once for all its cases (a health check has thousands:
    its settings list every round). Shared between them: read, never changed."""
    return json.loads(text) if text else None


def _params(settings: dict, extra: dict) -> dict:
    """The case's kernel parameters: the run's, with the value --each gave this case (its
    `variant`; None: the parameter not given), so each side is the case it would be in a
    run of its own."""
    params = dict(settings.get("params", {}))
    for name, value in extra.get("variant", {}).items():
        if value is None:
            params.pop(name, None)
        else:
            params[name] = value
    return params


def case(row: sqlite3.Row) -> Case:
    """A case row (store.CASES: the case with its run's and launch's fields)."""
    settings = _shared_json(row["settings"]) or {}
    facts = _shared_json(row["kernel_facts"]) or {}
    extra = _extra(row)
    return Case(row["id"], row["run_id"], row["kernel"], row["send_mode"], row["bytes"],
                row["ranks"], row["window"], row["batch"], row["warmup_iterations"],
                bool(row["validated"]), row["timed_by"],
                np.frombuffer(row["samples"], dtype="<f8"), settings,
                _params(settings, extra), extra,
                row["case_key"], row["launched_ranks"], bool(row["oversubscribed"]),
                row["mpi_version"], row["launch"], facts.get("family"),
                tuple(_shared_json(row["hosts"]) or ()), row["sweep_id"],
                _rank_mean(row))


def _extra(row: sqlite3.Row) -> dict:
    """The record's own fields, each phase's [rank][sample] times among them (from their
    blob: as JSON they took 48 ms a case to write and 7 ms to read at 1024 ranks)."""
    extra = json.loads(row["extra"]) if row["extra"] else {}
    if row["phase_samples"] is not None:
        extra["phase_samples_s"] = _phases(row, extra.pop("phase_names"))
    return extra


def _phases(row: sqlite3.Row, names: list[str]) -> dict[str, np.ndarray]:
    """Each phase's [rank][sample] seconds, from the case's phase_samples blob."""
    times = np.frombuffer(row["phase_samples"], dtype="<f8").reshape(
        len(names), row["ranks"], row["n"])
    return dict(zip(names, times))


def _rank_mean(row: sqlite3.Row) -> np.ndarray | None:
    """The per-sample mean over ranks, for a case whose samples are the slowest rank's."""
    ranks, n = row["ranks"], row["n"]
    if row["timed_by"] != "max" or not n or len(row["rank_samples"]) != 8 * ranks * n:
        return None
    return np.frombuffer(row["rank_samples"], dtype="<f8").reshape(ranks, n).mean(axis=0)


def pair_cases(rows: Iterable[sqlite3.Row]) -> Iterator[PairCase]:
    """Store.case_phases' rows as PairCases. A round's peers are the same text in every
    case of it, so each is parsed once (the record's whole JSON, parsed 6138 times, was a
    third of a 1024-node read) and the array shared: read, never changed."""
    peers: dict[str, np.ndarray] = {}
    for row in rows:
        text = row["peers"]
        if text not in peers:
            peers[text] = np.array(json.loads(text), dtype=np.int64)
            peers[text].flags.writeable = False
        yield PairCase(row["bytes"], row["window"], row["number"], peers[text],
                       _phases(row, _shared_json(row["names"])))
