"""Launch to launch against within a launch: per kernel, how much the launches' medians
differ (between_launch_cv) and how uncertain one launch's median is (within_launch_cv),
against message size. Where the first lies above the second, more samples per launch
cannot narrow the interval; more launches can (docs/statistics.md)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ...store import names
from ...system.units import PERCENT
from . import figures
from .data import ReportData, combined, grouped
from .html import Section, el, figure, section

CAPTION = ("Solid: the CV of the launches' medians (between launches, from the one-way "
           "random-effects model on log time); dashed: the CV of one launch's median from its "
           "own samples (within). Only cases measured in two or more launches; 0-byte cases "
           "are left off the size axis. The CV axis is linear from 0 to its first decade and "
           "logarithmic above, so a between-launch CV of 0 (the launches differ no more than "
           "their samples say) is drawn at 0.")


def draw(data: ReportData, panel) -> Figure:
    fig, axes = figures.new(1, 1, width=6.5)
    ax = axes[0][0]
    drawn = [np.empty(0)]
    for i, (config, cases) in enumerate(grouped(panel, ranks=True)):
        s = sorted((x for x in combined(data, cases) if x.bytes > 0
                    and x.between_launch_cv is not None), key=lambda x: x.bytes)
        if not s:
            continue
        size = np.array([x.bytes for x in s], dtype=float)
        label = " ".join(filter(None, (config.get("send_mode"), f"np{s[0].ranks}")))
        between = figures.nan_none([x.between_launch_cv for x in s]) * PERCENT
        within = figures.nan_none([x.within_launch_cv for x in s]) * PERCENT
        ax.plot(size, between, "o-", color=figures.color(i), ms=3, lw=1,
                label=f"{label} between")
        ax.plot(size, within, "s--", color=figures.color(i), ms=3, lw=1,
                label=f"{label} within")
        drawn += [between, within]
    figures.size_axis(ax)
    figures.zero_log_axis(ax, "CV (%)", np.concatenate(drawn))
    ax.legend(fontsize=7)
    return fig


def render(data: ReportData) -> Section | None:
    several = [c for c in data.cases if c.bytes > 0]
    panels = [(config, cases) for config, cases in grouped(several, send_mode=False,
                                                           ranks=False)
              if any(x.launches >= 2 for x in combined(data, cases))]
    if not panels:
        return None
    body = [el("p", "Which variance sets each interval: above the dashed line, the launches "
               "differ more than a launch's own samples can tell, so the interval narrows with "
               "more launches, not with longer ones.")]
    for config, cases in panels:
        title = names.configuration(config)
        body.append(figure(figures.png(draw(data, cases)),
                           f"between- and within-launch spread: {title}", CAPTION))
    return section("launches", "Launch to launch against within a launch", *body)
