"""The guidelines `commscope check` measured: per guideline, the ratio of its left side
over its right against message size, with its 95% interval as a band and the violated
sizes marked (verdicts.py; docs/guidelines.md)."""

from __future__ import annotations

import numpy as np

from ..guidelines import catalogue
from ..verdicts import DEFAULT_THRESHOLD, judge
from . import figures
from .data import ReportData
from .html import Section, el, figure, section

CAPTION = ("The ratio of the left side's time over the right's on launch medians (monotony: "
           "t(m) over t at the next size; split: t(m) over k t(m/k)), with its 95% interval; "
           "the guideline holds below the dotted line at 1 + threshold "
           f"({DEFAULT_THRESHOLD:.0%}, check's default). Red crosses: violated (BH-adjusted "
           "one-sided p < 0.05 and the whole interval above the line).")


def _figure(verdicts) -> bytes:
    fig, axes = figures.new(1, 1, width=6.5)
    ax = axes[0][0]
    for i, case in enumerate(dict.fromkeys(v.case for v in verdicts)):
        mine = sorted((v for v in verdicts if v.case == case and v.bytes > 0),
                      key=lambda v: v.bytes)
        if not mine:
            continue
        size = np.array([v.bytes for v in mine], dtype=float)
        ax.plot(size, [v.ratio for v in mine], "o-", color=figures.color(i), ms=3, lw=1,
                label=case)
        low = figures.nan_none([v.ci[0] if v.ci else None for v in mine])
        high = figures.nan_none([v.ci[1] if v.ci else None for v in mine])
        ax.fill_between(size, low, high, color=figures.color(i), alpha=0.2, lw=0)
        bad = [v for v in mine if v.verdict == "violated"]
        ax.plot([v.bytes for v in bad], [v.ratio for v in bad], "x", color="red", ms=8, mew=2)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.axhline(1 + DEFAULT_THRESHOLD, color="grey", lw=0.8, ls=":")
    figures.size_axis(ax)
    figures.log_axis(ax, "left / right")
    ax.legend(fontsize=7)
    return figures.png(fig)


def judged(data: ReportData) -> list:
    """The verdicts on the guidelines of the kernels of the runs `commscope check` made
    (verdicts.judge), worked out again from the stored runs; [] without such runs."""
    checked = [r for r in data.runs if r.command[1:2] == ["check"]]
    if not checked:
        return []
    kernels = {r.row["kernel"] for r in checked}
    chosen = catalogue().on(sorted(kernels))
    barrier = max(((r.context.get("timer") or {}).get("barrier_s") or 0.0 for r in checked),
                  default=0.0)
    return judge(chosen, [c for r in checked for c in r.cases], DEFAULT_THRESHOLD,
                 lambda launches: barrier)


def render(data: ReportData) -> Section | None:
    """Only for runs `commscope check` made: the guidelines on their kernel."""
    verdicts = judged(data)
    if not verdicts:
        return None
    body = [el("p", "Each guideline compares two ways to do one job, measured in the same "
               "launches: the left side should be no slower than the right.")]
    for gid in dict.fromkeys(v.id for v in verdicts):
        mine = [v for v in verdicts if v.id == gid]
        bad = sum(v.verdict == "violated" for v in mine)
        body.append(figure(_figure(mine), f"guideline {gid}",
                           f"{gid}: {bad} of {len(mine)} sizes violated. {CAPTION}"))
    return section("guidelines", "Performance guidelines", *body)
