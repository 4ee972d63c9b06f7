"""The advection2d application: accuracy, and where a solve's time goes.

A case is one problem (docs/app-advection2d.md): its samples are whole
solves, its record carries the L2 and max error against the exact solution,
and its phases split each solve into compute and communicate (slowest rank
per sample, then the median, as summary.case_summary gives them).
"""

from __future__ import annotations

import numpy as np

from ...system import units
from ...measure.advection import app_summary
from ...system.units import MS_PER_S
from ..tables import Table
from . import figures
from .data import ReportData
from .html import Section, figure, section, table

KERNEL = "advection2d"


def _name(s: dict) -> str:
    grid = s.get("process_grid")
    grid_text = f"{grid[0]}x{grid[1]}" if grid else "?"
    return (f"run {s['run']}: n={s['points_per_side']}, {s['params'].get('method')}, "
            f"comm={s['params'].get('comm')}, {grid_text}")


def _times_figure(rows: list[dict]) -> bytes:
    """Stacked bars: median compute and communicate time per case, the solve's median beside."""
    names = [_name(s) for s in rows]
    phase = {k: np.array([(s.get("phase_median_s") or {}).get(k) or 0.0 for s in rows]) * MS_PER_S
             for k in ("compute", "communicate")}
    fig, axes = figures.new(1, 1, width=10, row_height=1.3 + 0.35 * len(rows), left=3.2,
                            right=1.6)
    ax = axes[0][0]
    y = np.arange(len(rows))
    ax.barh(y, phase["compute"], color=figures.color(0), label="compute")
    ax.barh(y, phase["communicate"], left=phase["compute"], color=figures.color(1),
            label="communicate")
    ax.plot([s["median_s"] * MS_PER_S for s in rows], y, "k|", ms=14, label="solve (median)")
    ax.set_yticks(y, names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time per solve (ms)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return figures.png(fig)


def _error_figure(rows: list[dict]) -> bytes | None:
    """L2 error against n, one line per method and comm setting; None with a single n."""
    if len({s["points_per_side"] for s in rows}) < 2:
        return None
    fig, axes = figures.new(1, 1, width=6, row_height=3.6)
    ax = axes[0][0]
    keys = sorted({(s["params"].get("method"), s["params"].get("comm")) for s in rows})
    for i, (method, comm) in enumerate(keys):
        mine = sorted((s["points_per_side"], s["l2_error"]) for s in rows
                      if (s["params"].get("method"), s["params"].get("comm")) == (method, comm)
                      and s.get("l2_error"))
        if mine:
            n, err = zip(*mine)
            ax.plot(n, err, "o-", color=figures.color(i), label=f"{method}, comm={comm}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("grid points per side n")
    figures.log_axis(ax, "L2 error")
    ax.legend(fontsize=8)
    return figures.png(fig)


HEADER = ("case", "steps", "CFL", "samples", "solve ms (95% CI)", "compute ms",
          "communicate ms", "L2 error", "max error")


def render(data: ReportData) -> Section | None:
    cases = [c for c in data.cases if c.kernel == KERNEL and c.valid_samples.size]
    if not cases:
        return None
    rows = [app_summary(c, s) for s, c in {id(data.figure[c.id]): (data.figure[c.id], c)
                                           for c in cases}.values()]
    lines = []
    for s in rows:
        phases = s.get("phase_median_s") or {}
        ci = "" if s["ci_low_s"] is None else \
            f" ({units.ms(s['ci_low_s'])} to {units.ms(s['ci_high_s'])})"
        lines.append((_name(s), s["params"].get("steps"),
                      units.ratio(s.get("cfl"), 3), s["n"],
                      units.ms(s["median_s"]) + ci, units.ms(phases.get("compute")),
                      units.ms(phases.get("communicate")), units.scientific(s.get("l2_error")),
                      units.scientific(s.get("max_error"))))
    body = [table(Table(HEADER, lines, align="l")),
            figure(_times_figure(rows), "advection2d compute and communicate time",
                   "Median time of one whole solve split into its phases (slowest rank per "
                   "sample, then the median; the parts need not add up to the solve's median). "
                   "comm=off fills the ghosts from the tile itself: the solve without "
                   "communication, wrong on purpose.")]
    errors = _error_figure(rows)
    if errors is not None:
        body.append(figure(errors, "advection2d error vs n",
                           "RMS error against the exact solution at the final time over all "
                           "n^2 points; Beam-Warming is second order, so at a fixed CFL "
                           "number it falls 4x per doubling of n."))
    return section("advection", "advection2d: error and compute/communication time", *body)
