"""The models that are not a line through one kernel's times: LogGP and max-rate.

LogGP (models/loggp.py) comes from the loggp kernel's phases: the figure shows o_s(m),
o_r(m), g(m) and the round trip RTT(m) per size with the gap's line g(0) + m G. Max-rate
(models/maxrate.py) comes from mbw_mr at two rank counts or more: the figure shows the
node's aggregate rate k n / T against k senders, measured (points) and modelled (lines),
where R_N shows as the level the lines reach. Each model's table of constants is the one
`commscope fit` prints, built once in views/message_models.py.
"""

from __future__ import annotations

import numpy as np

from ...store import names
from ...models.groups import group_cases, kept
from ...models.loggp import fit_loggp
from ...models.maxrate import across_ranks, fit_maxrate
from ...system.sizes import format_bytes
from ...system.units import MB, US_PER_S
from ..message_models import (LOGGP_FOOTER, MAXRATE_FOOTER, loggp_constants, loggp_json,
                              maxrate_constants, maxrate_json)
from . import figures
from .data import ReportData, shown
from .html import Section, el, figure, section, table

TITLE = "LogGP and max-rate models"
US = "µs"  # the report writes the micro sign; the terminal keeps to ASCII


def render(data: ReportData) -> Section | None:
    """The section; None when the runs have no loggp and no mbw_mr cases. Fitted to the
    launches the figures keep, as `fit` fits them (models.groups.kept)."""
    groups = group_cases(kept(shown(data)))
    loggp = [g for g in groups if g.config["kernel"] == "loggp"]
    rates = across_ranks([g for g in groups if g.config["kernel"] == "mbw_mr"])
    if not loggp and not rates:
        return None
    body = [part for g in loggp for part in _loggp(g)]
    body += [part for cases in rates for part in _maxrate(cases)]
    return section("message-models", TITLE, *body)


def _loggp(group) -> list:
    model = fit_loggp(group.cases)
    s = loggp_json(group, model)
    title = f"LogGP: {names.configuration(group.config)} (run {', '.join(map(str, s['runs']))})"
    if model is None:
        return [el("h3", title), el("p", f"No model: {s['note']}.", class_="note")]
    fig, axes = figures.new(1, 1, width=9)
    ax = axes[0][0]
    size = np.array([p.bytes for p in model.parts], dtype=float)
    shown = size > 0  # log axes
    for i, (name, values) in enumerate((("o_s", [p.o_s for p in model.parts]),
                                        ("o_r", [p.o_r for p in model.parts]),
                                        ("g", [np.nan if p.g is None else p.g
                                               for p in model.parts]),
                                        ("RTT (m there, 0 back)", [p.rtt for p in model.parts]))):
        ax.plot(size[shown], np.array(values)[shown] * US_PER_S, "o-", ms=3, lw=1,
                color=figures.color(i), label=name)
    if model.G_s_per_byte and model.g_s is not None and shown.any():
        grid = np.geomspace(size[shown][0], size[shown][-1], 100)
        ax.plot(grid, (model.g_s + grid * model.G_s_per_byte) * US_PER_S, "--",
                color=figures.color(2), lw=1, label="g(0) + m G")
    figures.size_axis(ax)
    figures.log_axis(ax, "µs")
    ax.legend(fontsize=8)
    return [el("h3", title), figure(figures.png(fig), f"LogGP parts vs size: {title}",
                                    "Each part per size, the median over launches of each "
                                    "launch's median; dashed: the gap's line. " + LOGGP_FOOTER),
            table(loggp_constants(model, us=US))]


def _maxrate(cases) -> list:
    model = fit_maxrate(cases)
    s = maxrate_json(cases, model)
    title = (f"Max-rate: mbw_mr, {names.library(s['mpi'])} (runs "
             f"{', '.join(map(str, s['runs']))}), k = {', '.join(map(str, s['k']))}")
    if model is None:
        return [el("h3", title), el("p", f"No model: {s['note']}.", class_="note")]
    fig, axes = figures.new(1, 1, width=6.5)
    ax = axes[0][0]
    sizes = sorted({p.bytes for p in model.points})
    ks = np.array(s["k"], dtype=float)
    grid = np.linspace(ks[0], ks[-1], 100)  # the knee at R_N / R_C falls between the k
    for i, nbytes in enumerate(sizes):
        measured = [(p.k, p.k * p.bytes / p.time_s / MB) for p in model.points
                    if p.bytes == nbytes]
        colour = figures.color(i)
        ax.plot(*zip(*measured), "o", ms=4, color=colour, label=format_bytes(nbytes))
        ax.plot(grid, grid * nbytes / model.time_s(nbytes, grid) / MB, "-", lw=1,
                color=colour)
    ax.set_xlabel("k: senders on the node")
    ax.set_xticks(ks)
    figures.log_axis(ax, "aggregate MB/s (k n / T)")
    ax.legend(fontsize=8, title="size")
    return [el("h3", title), figure(figures.png(fig), f"aggregate rate vs senders: {title}",
                                    "Points: measured; lines: the model. " + MAXRATE_FOOTER),
            table(maxrate_constants(model, s, us=US))]
