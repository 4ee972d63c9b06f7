"""What the report reads from the store, loaded once: runs, their cases, summaries and warnings."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..kernels import kernel
from ..models.groups import configuration
from ..store import Case, Store
from ..summary import case_summary
from ..views.table import library_label

# The kernels of docs/kernels-collectives.md: each measured over sizes and process counts.
COLLECTIVES = ("barrier", "bcast", "scatter", "gather", "reduce", "allreduce", "allgather",
               "alltoall", "reduce_scatter", "scan")
# Kernels shown against P (ring and the collectives); the others against size at fixed P.
OVER_RANKS = ("ring",) + COLLECTIVES


@dataclass(frozen=True)
class RunData:
    row: sqlite3.Row
    context: dict  # the native context record; empty when the run stopped before it
    settings: dict
    command: list[str]
    cases: list[Case]
    warnings: list[sqlite3.Row]
    skips: list[sqlite3.Row]
    sweep: sqlite3.Row | None  # the sweep the run belongs to: name, plan path, ...

    @property
    def id(self) -> int:
        return self.row["id"]


@dataclass
class ReportData:
    runs: list[RunData]
    summaries: dict[int, dict]  # case id -> summary.case_summary
    rank_samples: Callable[[int], np.ndarray]  # case id -> ranks x n, as store.rank_samples
    mpi: dict[int, str | None] = field(default_factory=dict)  # run id -> MPI library version

    @property
    def cases(self) -> list[Case]:
        return [c for r in self.runs for c in r.cases]

    def latency_s(self, case: Case) -> np.ndarray:
        """The case's valid samples as the kernel's latency (half round trip, ...), seconds."""
        return case.valid_samples * kernel(case.kernel).latency(1.0, case)


def load(store: Store, run_ids: list[int]) -> ReportData:
    runs = []
    for run_id in dict.fromkeys(run_ids):
        row = store.run(run_id)
        runs.append(RunData(row, json.loads(row["context"]) if row["context"] else {},
                            json.loads(row["settings"]) if row["settings"] else {},
                            json.loads(row["command"]), store.cases(run_id),
                            store.warnings(run_id), store.skips(run_id),
                            None if row["sweep_id"] is None else store.sweep(row["sweep_id"])))
    summaries = {c.id: case_summary(c) for r in runs for c in r.cases}
    return ReportData(runs, summaries, store.rank_samples,
                      {r.id: r.row["mpi_version"] for r in runs})


def grouped(data: ReportData, cases: list[Case], without: tuple[str, ...] = ()
            ) -> list[tuple[dict, list[Case]]]:
    """Cases grouped by configuration (models.groups) less the fields in `without`,
    in order of first appearance, each group's cases by size."""
    groups: dict[str, tuple[dict, list[Case]]] = {}
    for case in cases:
        config = {k: v for k, v in configuration(case, data.mpi.get(case.run_id)).items()
                  if k not in without}
        key = json.dumps(config, sort_keys=True)
        groups.setdefault(key, (config, []))[1].append(case)
    return [(config, sorted(found, key=lambda c: (c.bytes, c.ranks, c.id)))
            for config, found in groups.values()]


def short_label(config: dict) -> str:
    """What was measured: kernel, send mode, parameters, window and ranks, for legends."""
    parts = [config["kernel"]]
    if config.get("send_mode"):
        parts.append(config["send_mode"])
    parts += [f"{k}={v}" for k, v in sorted(config.get("params", {}).items())]
    if "window" in config:
        parts.append(f"window={config['window']}")
    return " ".join(parts) + (f", {config['ranks']} ranks" if "ranks" in config else "")


def label(config: dict) -> str:
    """A group's configuration in words, for titles; fields a grouping left out are skipped."""
    words = [short_label(config)]
    words += [f"transport {config['transport']}",
              f"map-by {config['map_by'] or 'default'}, bind-to {config['bind_to'] or 'default'}",
              f"sync {config['sync']}", library_label(config.get("mpi"))]
    return ", ".join(words)
