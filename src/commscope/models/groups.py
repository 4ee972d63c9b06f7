"""Cases grouped by everything but size, and each group's Hockney and segmented fits.

A fit is only meaningful over cases that differ in size alone: the identity of
cases.identity without the size (and without --validate), with the MPI library
and the window as asked. Cases of the same size in one group (repeated launches
of a sweep) are separate points of the same fit.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..store.cases import Case, grouped, identity
from ..system.errors import UserError, to_run
from ..system.kernels import meaning
from ..stats.replication import History
from ..figures.read import case_history, measured
from ..stats.summary import CaseSummary
from ..store.store import Store
from . import segmented
from .hockney import HockneyFit
from .resample import bootstrap_medians, launch_shocks, point

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
    ci_basis: str | None = "launches"  # "one launch": CIs within it; None: printed, none


# What a fit's cases share: the identity less the size and --validate, with the MPI and the
# runs' labels (two builds are two configurations).
CONFIGURATION = {"size": False, "validated": False, "mpi": True, "window": "asked",
                 "labels": True}


def configuration(case: Case) -> dict:
    return identity(case, **CONFIGURATION)


def group_cases(cases: list[Case]) -> list[Group]:
    """Groups in order of first appearance; cases in each ordered by size."""
    return [Group(config, found) for config, found in grouped(cases, **CONFIGURATION)]


def fit_group(group: Group, resamples: int = RESAMPLES, max_segments: int = MAX_SEGMENTS,
              history: Callable[[list[Case]], History | None] | None = None) -> GroupFit:
    """The group's single line and segments, with CIs from `resamples` bootstrap replicates;
    `history` gives a case's other commands in the results file (figures.read.case_history)."""
    kept = [c for c in group.cases
            if c.valid_samples.size or c.imported and c.imported["median_s"]]
    points = [point(c) for c in kept]
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
    shocks = launch_shocks(kept, resamples, rng, history) if resamples else None
    if shocks is not None:
        y[:, 1:] *= np.exp(shocks)
    w = np.array([1 / p.se_s ** 2 for p in points])
    fit = segmented.fit(x, w, y, max_segments, np.array([_copy_s(c) for c in kept]))
    return GroupFit(group, sizes, fit, None, _rel_rms(y[:, 0], fit.single.line.time_s(x)),
                    _rel_rms(y[:, 0], fit.time_s(x)),
                    None if any(c.imported for c in kept)  # printed figures: no CIs at all
                    else "one launch" if shocks is None else "launches")


def _copy_s(case: Case) -> float:
    """One copy of the case's size, as its launch timed it (docs/native.md, "Copy
    ceilings"): no message of the kernel's is faster. NaN where not measured, or where
    the kernel has no ceiling (a collective's bytes depend on its algorithm)."""
    copy = case.extra.get("copy_s")
    return float(copy) if copy and meaning(case.kernel).ceiling else float("nan")


def _rng(config: dict) -> np.random.Generator:
    # Seeded by the group's own identity too: adding another group to a fit leaves this one's CIs.
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).digest()
    return np.random.default_rng([SEED, int.from_bytes(digest[:8], "little")])


def _rel_rms(measured: np.ndarray, model: np.ndarray) -> float:
    return float(np.sqrt(np.mean(((model - measured) / measured) ** 2)))


def kept_cases(store: Store, run_ids: list[int]) -> list[Case]:
    """The runs' cases (each run once), of the launches their figures keep: what every
    model of them is fitted to, so that fit and predict fit one model."""
    return kept([pair for run_id in dict.fromkeys(run_ids) for pair in measured(store, [run_id])])


def kept(found: list[tuple[list[Case], CaseSummary]]) -> list[Case]:
    """The launches of each case its figure keeps (figures.read.measured's): a launch
    left out of a case's figure in another state is left out of its fit."""
    return [c for cases, s in found for c in cases
            if s.imported or (c.run_id, c.launch) in s.kept]


def fit_runs(store: Store, run_ids: list[int], kernel_name: str | None, max_segments: int,
         resamples: int = RESAMPLES, flag: str = "run") -> list[GroupFit]:
    """Each configuration's fit, of the launches its cases' figures keep (kept); `flag`
    names where the runs came from, for messages."""
    cases = kept_cases(store, run_ids)
    runs = ", ".join(map(str, run_ids))
    if not cases:
        raise UserError(f"{flag} {runs}: no cases stored; "
                        f"{to_run('results', 'list', db=store.path)} shows the runs")
    if kernel_name:
        cases = [c for c in cases if c.kernel == kernel_name]
        if not cases:
            raise UserError(f"--kernel {kernel_name}: {flag} {runs} has no {kernel_name} cases; "
                            f"{to_run('results', 'list', db=store.path)} shows each run's kernel")
    return [fit_group(g, resamples, max_segments, lambda found: case_history(store, found))
            for g in group_cases(cases)]


def _line(fit: HockneyFit) -> dict:
    """A line's figures; where its sizes cannot tell a bandwidth, None for it and n_half
    (bandwidth_identifiable false): alpha alone is the result."""
    line, known = fit.line, fit.identifiable
    return {"alpha_s": line.alpha_s, "alpha_ci_s": _pair(fit.alpha_ci_s),
            "bandwidth_Bps": line.bandwidth_Bps if known else None,
            "bandwidth_bound_Bps": fit.bound_Bps, "at_bound": fit.at_bound,
            "bandwidth_ci_Bps": _pair(fit.bandwidth_ci_Bps), "bandwidth_identifiable": known,
            "n_half_bytes": line.n_half_bytes if known else None,
            "n_half_ci_bytes": _pair(fit.n_half_ci_bytes)}


IMPORTED_NOTE = ("imported figures: no raw samples, so no bootstrap and no confidence "
                 "intervals; the lines are least squares on the printed figures")


def _without_cis(fit: dict) -> dict:
    """A fit's figures with every interval dropped (a printed figure has no samples)."""
    def strip(d: dict) -> dict:
        return {k: None if "_ci_" in k else v for k, v in d.items()}
    return {**strip(fit), "segments": [strip(s) for s in fit["segments"]]}


def _pair(interval):
    return None if interval is None else list(interval)


def summary(g: GroupFit) -> dict:
    """The group's fit as plain data, seconds and bytes: the configuration, the runs, the
    single line and each segment (alpha, B, n_half with CIs), the breakpoints, residuals
    and BIC. None of a bandwidth or CI end: unbounded (no bandwidth limit seen)."""
    out = {**g.group.config, "runs": sorted({c.run_id for c in g.group.cases}),
           "sizes": g.sizes, "note": g.note}
    if g.fit is None:
        return out
    f = g.fit
    if any(c.imported for c in g.group.cases):
        return _without_cis({**out, **_line(f.single), "rel_rms_residual": g.rel_rms_residual,
                             "note": IMPORTED_NOTE,
                             "segments": [{"from_bytes": s.from_bytes, "to_bytes": s.to_bytes,
                                           **_line(s.fit)} for s in f.segments],
                             "breakpoints": [{"bytes": b.bytes, "ci_bytes": None,
                                              "kind": b.kind, "meets_at_bytes": b.meets_bytes}
                                             for b in f.breakpoints],
                             "rel_rms_residual_segmented": g.rel_rms_residual_segmented,
                             "bic": [{"segments": k, "bic": v} for k, v in f.bic.items()]})
    return {**out, **_line(f.single), "rel_rms_residual": g.rel_rms_residual,
            "segments": [{"from_bytes": s.from_bytes, "to_bytes": s.to_bytes, **_line(s.fit)}
                         for s in f.segments],
            "breakpoints": [{"bytes": b.bytes, "ci_bytes": _pair(b.ci_bytes), "kind": b.kind,
                             "meets_at_bytes": b.meets_bytes} for b in f.breakpoints],
            "rel_rms_residual_segmented": g.rel_rms_residual_segmented,
            "bic": [{"segments": k, "bic": v} for k, v in f.bic.items()],
            "resamples": RESAMPLES, "seed": SEED, "ci_basis": g.ci_basis}
