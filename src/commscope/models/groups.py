"""Cases grouped by everything but size, and each group's Hockney and segmented fits.

A fit is only meaningful over cases that differ in size alone: one kernel,
send mode, transport, placement, rank count, kernel parameters, sync method
and MPI library. Cases of the same size in one group (repeated launches of a
sweep) are separate points of the same fit.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from ..store import Case, Store
from . import segmented
from .resample import bootstrap_medians, point

RESAMPLES = 1000  # bootstrap replicates per group
SEED = 1979  # fixed, so the same stored samples always give the same CIs (Efron 1979)
MAX_SEGMENTS = 4
MIN_SIZES = segmented.MIN_SIZES_PER_SEGMENT


@dataclass(frozen=True)
class Group:
    config: dict  # what the cases share; the key of the group
    cases: list[Case]


@dataclass(frozen=True)
class GroupFit:
    group: Group
    sizes: int  # distinct sizes
    fit: segmented.SegmentedFit | None  # None when there are too few sizes
    note: str | None  # why there is no fit
    rel_rms_residual: float | None  # of the single line: how far the data are from a line
    rel_rms_residual_segmented: float | None


def configuration(case: Case, mpi: str | None) -> dict:
    s = case.settings
    config = {"kernel": case.kernel, "send_mode": case.send_mode, "ranks": case.ranks,
              "transport": s.get("transport", "auto"), "map_by": s.get("map_by"),
              "bind_to": s.get("bind_to"), "sync": s.get("sync", "barrier"),
              "params": case.params, "mpi": mpi}
    if s.get("hosts"):  # runs across hosts never pool with runs on one (or other hosts)
        config["hosts"] = s["hosts"]
    if case.window is not None:  # bw, bibw: the asked-for window (large sizes shrink it)
        config["window"] = s.get("window", case.window)
    return config


def group_cases(cases: list[Case], mpi_of_run: dict[int, str | None]) -> list[Group]:
    """Groups in order of first appearance; cases in each ordered by size."""
    groups: dict[str, Group] = {}
    for case in cases:
        config = configuration(case, mpi_of_run.get(case.run_id))
        key = json.dumps(config, sort_keys=True)
        groups.setdefault(key, Group(config, [])).cases.append(case)
    return [Group(g.config, sorted(g.cases, key=lambda c: (c.bytes, c.id)))
            for g in groups.values()]


def fit_group(group: Group, resamples: int = RESAMPLES,
              max_segments: int = MAX_SEGMENTS) -> GroupFit:
    """The group's single line and segments, with CIs from `resamples` bootstrap replicates."""
    points = [point(c) for c in group.cases if c.valid_samples.size]
    x = np.array([p.bytes for p in points], dtype=float)
    sizes = np.unique(x).size
    if sizes < MIN_SIZES:
        note = (f"{sizes} distinct size{'s' * (sizes != 1)}, a fit needs at least {MIN_SIZES}; "
                "measure more --sizes")
        return GroupFit(group, sizes, None, note, None, None)
    rng = _rng(group.config)
    y = np.empty((len(points), 1 + resamples))
    for row, p in enumerate(points):
        y[row, 0] = p.median_s
        y[row, 1:] = bootstrap_medians(p.latency_s, resamples, rng)
    w = np.array([1 / p.se_s ** 2 for p in points])
    fit = segmented.fit(x, w, y, max_segments)
    return GroupFit(group, sizes, fit, None, _rel_rms(y[:, 0], fit.single.line.time_s(x)),
                    _rel_rms(y[:, 0], fit.time_s(x)))


def _rng(config: dict) -> np.random.Generator:
    # Seeded by the group's own identity too: adding another group to a fit leaves this one's CIs.
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).digest()
    return np.random.default_rng([SEED, int.from_bytes(digest[:8], "little")])


def _rel_rms(measured: np.ndarray, model: np.ndarray) -> float:
    return float(np.sqrt(np.mean(((model - measured) / measured) ** 2)))


def load_cases(store: Store, run_ids: list[int]) -> tuple[list[Case], dict[int, str | None]]:
    """Every case of the runs, and each run's MPI library (fits never mix libraries)."""
    cases, mpi = [], {}
    for run_id in dict.fromkeys(run_ids):
        mpi[run_id] = store.run(run_id)["mpi_version"]
        cases += store.cases(run_id)
    return cases, mpi


def fit_runs(store: Store, run_ids: list[int], kernel_name: str | None, max_segments: int,
         resamples: int = RESAMPLES, flag: str = "run") -> list[GroupFit]:
    """Each configuration's fit; `flag` names where the runs came from, for messages."""
    cases, mpi = load_cases(store, run_ids)
    runs = ", ".join(map(str, run_ids))
    if not cases:
        raise UserError(f"{flag} {runs}: no cases stored; `commscope results list` shows the runs")
    if kernel_name:
        cases = [c for c in cases if c.kernel == kernel_name]
        if not cases:
            raise UserError(f"--kernel {kernel_name}: {flag} {runs} has no {kernel_name} cases; "
                            "`commscope results list` shows each run's kernel")
    return [fit_group(g, resamples, max_segments) for g in group_cases(cases, mpi)]
