"""Many-rank studies: collectives against point-to-point (seed 000), the ring model (seed 001)."""

from __future__ import annotations

import itertools

import numpy as np

from ...system.errors import UserError
from ...models.collectives import ring_serial
from ...models.groups import fit_group, group_cases
from ..report import figures
from ...system.sizes import format_bytes
from ...system.units import US_PER_S
from . import Study
from .common import cases, figures_of, once, plan, study_section, where

DISTRIBUTE = ("p2p", "bcast", "scatter")
COMBINE = ("p2p", "gather", "reduce", "reduce_user")
RING_BYTES = 1024
MAPPINGS = ("core", "socket", "node")


def _vector_sum_plans(counts, mpi, hosts=None, max_time=None):
    return [plan(mpi, "vector_sum", ranks, "8000000", params={"distribute": d, "combine": c},
                 max_time=max_time, hosts=hosts)
            for ranks in counts for d, c in itertools.product(DISTRIBUTE, COMBINE)]


def _vector_sum_section(store, run_ids):
    """Seed 000's comparison: each way to distribute and to combine, phase by phase."""
    found = cases(store, run_ids, "vector_sum")
    figure = figures_of(store, run_ids)
    counts = sorted({c.ranks for c in found})
    fig, axes = figures.new(1, 2)
    for ax, phase, methods, key in ((axes[0][0], "distribute", DISTRIBUTE, "distribute"),
                                    (axes[0][1], "combine", COMBINE, "combine")):
        width = 0.8 / len(counts)
        for j, ranks in enumerate(counts):
            heights = []
            for m in methods:
                mine = [s.phase_median_s[phase] for s in once(found, figure)
                        if s.ranks == ranks and s.params.get(key) == m]
                heights.append(np.median(mine) * US_PER_S if mine else np.nan)
            ax.bar(np.arange(len(methods)) + j * width, heights, width, label=f"{ranks} ranks",
                   color=figures.color(j))
        ax.set_xticks(np.arange(len(methods)) + width * (len(counts) - 1) / 2, methods)
        ax.set_yscale("log")  # phases of one study span orders of magnitude
        ax.set_ylabel(f"{phase} phase, median (us)")
        ax.legend(fontsize=8)
    return study_section(
        "collectives vs point-to-point", fig, "vector sum: distribute and combine methods",
        f"Seed 000's vector sum of {found[0].bytes // 8:,} integers: the median time of the "
        "distribute phase (p2p sends, MPI_Bcast, MPI_Scatter) and of the combine phase (p2p, "
        "MPI_Gather, MPI_Reduce with MPI_SUM, and with a user-defined MPI_Op) for each "
        "process count; every total was checked against N(N+1)/2." + where(found))


def _ring_plans(counts, mpi, hosts=None, max_time=None):
    if hosts:  # ranks fill the hosts in order, each up to its slots (docs/cluster.md)
        return [plan(mpi, "pingping", 2, "1:1MiB", max_time=max_time, hosts=hosts)] + \
            [plan(mpi, "ring", ranks, str(RING_BYTES), max_time=max_time, hosts=hosts)
             for ranks in counts if ranks >= 2]
    launches = []
    for m in MAPPINGS:
        try:
            launches += [plan(mpi, "pingping", 2, "1:1MiB", max_time=max_time, map_by=m)]
            launches += [plan(mpi, "ring", ranks, str(RING_BYTES), max_time=max_time, map_by=m)
                         for ranks in counts if ranks >= 2]
        except UserError:  # this MPI cannot map so (e.g. MPICH by node): left out
            launches = [p for p in launches if p.placement.map_by != m]
    return launches


def _ring_section(store, run_ids):
    """Seed 001's figure: ring time against P per mapping, the ping-ping-fitted model over it."""
    found = cases(store, run_ids)
    figure = figures_of(store, run_ids)
    oversubscribed = {r: store.run(r).oversubscribed for r in run_ids}
    fig, axes = figures.new(1, 1)
    ax = axes[0][0]
    for i, m in enumerate(dict.fromkeys(c.settings.get("map_by") for c in found)):
        colour = figures.color(i)
        mapping = f"map-by {m}" if m else "the hosts in order"
        rings = sorted((c for c in found if c.kernel == "ring" and c.settings.get("map_by") == m),
                       key=lambda c: c.ranks)
        for over in (False, True):  # hollow: more ranks than cores, time-sliced
            mine = once([c for c in rings if oversubscribed[c.run_id] == over], figure)
            if not mine:
                continue
            ax.plot([s.ranks for s in mine], [s.median_s * US_PER_S for s in mine],
                    "o", color=colour, fillstyle="none" if over else "full",
                    label=f"ring, {mapping}" + (", oversubscribed" if over else ""))
        pingping = [c for c in found if c.kernel == "pingping" and c.settings.get("map_by") == m]
        fitted = [fit_group(g, resamples=0) for g in group_cases(pingping)]
        if rings and fitted and fitted[0].fit:
            p = np.arange(2, max(c.ranks for c in rings) + 1)
            model = [ring_serial(fitted[0].fit.time_s, int(r), RING_BYTES) * US_PER_S for r in p]
            ax.plot(p, model, "-", color=colour, label=f"2P(alpha + n/B), {mapping}")
    ax.set_xticks(sorted({c.ranks for c in found if c.kernel == "ring"}))
    ax.set_xlabel("processes P")
    ax.set_ylabel(f"ring iteration, {format_bytes(RING_BYTES)} (us)")
    ax.legend(fontsize=8)
    return study_section(
        "ring model", fig, "ring time against process count with the model",
        "Seed 001: one iteration of the both-ways ring (max over ranks, median) against P for "
        "each mapping, and the model t(P) = 2P(alpha + n/B) with alpha and B fitted to ping-ping "
        "under the same mapping (segmented Hockney fit, docs/models.md). Where points leave "
        "their line, the mapping changes what a message costs; hollow points ran on fewer "
        "cores than ranks, where time-slicing, not the network, sets the time." + where(found))


STUDIES = [
    Study("collectives-vs-p2p", "000", "vector sum: p2p vs Bcast vs Scatter, p2p vs Gather vs "
          "Reduce vs a user MPI_Op", "4", _vector_sum_plans, _vector_sum_section,
          across_hosts=True),
    Study("ring-model", "001", "ring time against P per mapping, with the ping-ping-fitted "
          "2P(alpha + n/B) model", "2,3,4", _ring_plans, _ring_section, across_hosts=True),
]
