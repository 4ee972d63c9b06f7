"""The guidelines `commscope check` measured: per guideline, the ratio of its left side
over its right against message size, with its 95% interval as a band and the violated
sizes marked (judge/checks.py; docs/guidelines.md), judged as the command that measured
them (cli/report.py judges them so)."""

from __future__ import annotations

import numpy as np

from . import figures
from .data import ReportData
from .html import Section, el, figure, section

CAPTION = ("The ratio of the left side's time over the right's on launch medians (monotony: "
           "t(m) over t at the next size; split: t(m) over k t(m/k)), with its interval; "
           "the dotted line is the threshold the check was made at, {threshold}. Red "
           "crosses: violated (the test that the ratio is above the line, at a false "
           "discovery rate of 0.05 over the guideline's sizes).")


def _figure(found, threshold) -> bytes:
    fig, axes = figures.new(1, 1, width=6.5)
    ax = axes[0][0]
    for i, case in enumerate(dict.fromkeys(c.evidence["case"] for c in found)):
        mine = sorted((c for c in found if c.evidence["case"] == case and c.evidence["bytes"]),
                      key=lambda c: c.evidence["bytes"])
        if not mine:
            continue
        size = np.array([c.evidence["bytes"] for c in mine], dtype=float)
        ax.plot(size, [c.ratio for c in mine], "o-", color=figures.color(i), ms=3, lw=1,
                label=case)
        low = figures.nan_none([c.interval[0] if c.interval else None for c in mine])
        high = figures.nan_none([c.interval[1] if c.interval else None for c in mine])
        ax.fill_between(size, low, high, color=figures.color(i), alpha=0.2, lw=0)
        bad = [c for c in mine if c.failing]
        ax.plot([c.evidence["bytes"] for c in bad], [c.ratio for c in bad], "x", color="red",
                ms=8, mew=2)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.axhline(threshold.time_ratio, color="grey", lw=0.8, ls=":")
    figures.size_axis(ax)
    figures.log_axis(ax, "left / right")
    ax.legend(fontsize=7)
    return figures.png(fig)


def render(data: ReportData) -> Section | None:
    """Only for runs `commscope check` made: the guidelines on their kernel."""
    kernels = {r.row.kernel for r in data.runs}
    commands = [(t, [c for c in found if c.evidence["case"].split()[0] in kernels])
                for t, found in data.checks]
    commands = [(t, found) for t, found in commands if found]
    if not commands:
        return None
    body = [el("p", "Each guideline compares two ways to do one job, measured in the same "
               "launches: the left side should be no slower than the right.")]
    for threshold, found in commands:
        for gid in dict.fromkeys(c.family for c in found):
            mine = [c for c in found if c.family == gid]
            bad = sum(c.failing for c in mine)
            body.append(figure(_figure(mine, threshold), f"guideline {gid}",
                               f"{gid}: {bad} of {len(mine)} sizes violated. "
                               + CAPTION.format(threshold=threshold)))
    return section("guidelines", "Performance guidelines", *body)
