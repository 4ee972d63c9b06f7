"""The application study: seed 003's 2D advection, timed with and without communication."""

from __future__ import annotations

from ...measure.advection import Problem, app_summary, check, default_dt, default_grid, field_bytes
from ..report import figures
from ...system.units import MS_PER_S
from . import Study
from .common import cases, figures_of, plan, study_section

GRIDS = (128, 256, 512)
STEPS = 100
SOLVES = 6  # each solve is long; six are the fewest with a 95% CI of the median


def _plans(counts, mpi, max_time=None):
    launches = []
    for ranks in counts:
        for n in GRIDS:
            for comm in (True, False):
                p = Problem(n, 0.5, 0.5, default_dt(n, 0.5, 0.5), STEPS, "sin", "rma", comm,
                            default_grid(ranks))
                check(p)
                launches.append(plan(mpi, "advection2d", ranks, [field_bytes(n)], None,
                                     p.params(), iters=SOLVES, max_time=max_time, app=True))
    return launches


def _section(store, run_ids):
    """Seed 003's figure: solve time with and without communication against grid size."""
    found = cases(store, run_ids, "advection2d")
    figure = figures_of(store, run_ids)
    fig, axes = figures.new(1, 2)
    time_ax, error_ax = axes[0]
    for i, ranks in enumerate(sorted({c.ranks for c in found})):
        for comm, style in (("on", "o-"), ("off", "s--")):
            mine = sorted((c for c in found if c.ranks == ranks and c.params.get("comm") == comm),
                          key=lambda c: c.bytes)
            rows = [app_summary(c, s) for s, c in {id(figure[c.id]): (figure[c.id], c)
                                                   for c in mine}.values()]
            n = [r["points_per_side"] for r in rows]
            time_ax.plot(n, [r["median_s"] * MS_PER_S for r in rows], style,
                         color=figures.color(i), label=f"{ranks} ranks, communication {comm}")
            if comm == "on":
                error_ax.plot(n, [r.get("l2_error") for r in rows], style,
                              color=figures.color(i), label=f"{ranks} ranks, L2")
    for ax in (time_ax, error_ax):
        ax.set_xscale("log", base=2)
        ax.set_xticks(GRIDS, [str(n) for n in GRIDS])
        ax.set_xlabel("grid points per side")
        ax.legend(fontsize=8)
    figures.log_axis(time_ax, f"one solve of {STEPS} steps (ms)")
    figures.log_axis(error_ax, "L2 error at the final time")
    return study_section(
        "advection", fig, "advection solve time with and without communication",
        "Seed 003's comparison: the median time of one solve (halos by MPI_Put between fences, "
        "interior updated while they move) against the same solve with communication switched "
        "off (each tile periodic on its own: wrong on purpose), and the L2 error against the "
        "exact solution, which falls at the scheme's second order as the grid is refined.")


STUDIES = [
    Study("advection", "003", "2D advection solve time with and without communication, and "
          "its error, against grid size", "4", _plans, _section),
]
