"""Bandwidth against the copy ceiling measured beside it, size by size.

Within one host an MPI message is at least one copy from the sender's buffer to
the receiver's (single-copy CMA or XPMEM; two through a shared segment), and a
rank receives its messages one copy at a time. So the rate at which one core
copies a buffer of the case's size bounds what a rank can receive. The native
binary measures that copy in the same launch, after each case's samples, on the
ranks' own cores and in the case's cache state (docs/native.md, "Copy
ceilings"); summary.py turns it into the bytes the kernel's bandwidth counts
(bibw both directions: twice). A fraction above 1 is a finding the quality
block explains, never a plain number. Kernels without a ceiling (collectives),
and runs stored before ceilings were measured, are named, not compared.
"""

from __future__ import annotations

import numpy as np

from ...store import names
from ...system import units
from ...system.sizes import format_bytes
from ..tables import Table
from . import figures
from .data import ReportData, grouped
from .html import Section, el, figure, section, table

TITLE = "Bandwidth vs the copy ceiling"


def render(data: ReportData) -> Section | None:
    """The section; None when no case has a bandwidth."""
    s = data.figure
    with_rate = [c for c in data.cases if c.bytes > 0 and s[c.id].bandwidth_MBps is not None]
    if not with_rate:
        return None
    cases = [c for c in with_rate if s[c.id].ceiling_MBps]
    without = sorted({c.run_id for c in with_rate if not s[c.id].ceiling_MBps})
    body = [el("p", "Each case's median bandwidth (solid) and the copy ceiling measured in "
                    "the same launch (dashed): the rate one core copies a buffer of that "
                    "size on the ranks' own cores, in the case's cache state, counted as "
                    "the kernel counts its bytes (docs/native.md, 'Copy ceilings').")]
    if without:
        body.append(el("p", f"No ceiling: run {', '.join(map(str, without))} (a collective, "
                       "whose bytes depend on the algorithm, or stored before ceilings were "
                       "measured).", class_="note"))
    if not cases:
        return section("ceiling", TITLE, *body)
    fig, axes = figures.new(1, 2, width=12, row_height=4)
    rate_ax, fraction_ax = axes[0]
    rows = []
    for i, (config, group) in enumerate(grouped(cases)):
        size = np.array([c.bytes for c in group], dtype=float)
        rate = figures.nan_none([s[c.id].bandwidth_MBps for c in group])
        ceiling = figures.nan_none([s[c.id].ceiling_MBps for c in group])
        x, mid, _, _ = figures.per_size(size, rate, rate, rate)
        _, top, _, _ = figures.per_size(size, ceiling, ceiling, ceiling)
        colour = figures.color(i)
        rate_ax.plot(x, mid, "o-", ms=3, lw=1, color=colour, label=names.what(config))
        rate_ax.plot(x, top, "--", lw=1, color=colour)
        fraction_ax.plot(x, mid / top, "o-", ms=3, lw=1, color=colour)
        best = int(np.nanargmax(mid / top))
        rows.append((names.configuration(config), format_bytes(int(x[best])),
                     units.rate(mid[best]), units.rate(top[best]),
                     units.ratio(mid[best] / top[best])))
    fraction_ax.axhline(1.0, color="black", lw=0.8)
    for ax, label in ((rate_ax, "MB/s"), (fraction_ax, "bandwidth / ceiling")):
        figures.size_axis(ax)
        figures.log_axis(ax, label)
    rate_ax.legend(fontsize=7)
    body += [figure(figures.png(fig), "bandwidth and its copy ceiling",
                    "Left: median bandwidth (points) and the copy ceiling (dashed) per size; "
                    "right: their ratio, the line at 1 the ceiling."),
             table(Table(("configuration", "size nearest the ceiling", "MB/s", "ceiling MB/s",
                          "fraction"), rows, align="l"))]
    return section("ceiling", TITLE, *body)
