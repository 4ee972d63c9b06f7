"""Shared-memory bandwidth as a fraction of this machine's memcpy rate.

Within one host an MPI message is at best one copy from the sender's buffer
to the receiver's (single-copy: CMA, XPMEM), at worst two through a shared
segment (copy-in/copy-out), so the rate at which one core copies a buffer
far larger than the caches bounds what one message stream can reach.

The ceiling is measured on the launching host when a run is launched and
stored with it (host.py); each case is set against its own run's ceiling.
Runs across hosts, over TCP, or stored before ceilings were (schema 4) are
named, not compared.
"""

from __future__ import annotations

import numpy as np

from .. import names
from ..sizes import format_bytes
from ..units import MB
from ..views.tables import Table
from . import figures
from .data import ReportData, RunData, grouped
from .html import Section, el, figure, section, table


def _ceiling(run: RunData) -> dict | None:
    """The run's stored memcpy ceiling, where its ranks all ran on the host it was measured on."""
    memcpy = run.host.get("memcpy")
    if not memcpy or run.context.get("hosts") != [run.host.get("host")] \
            or run.settings.get("transport", "auto") == "tcp":
        return None
    return memcpy


def _how(ceilings: dict[str, list[dict]]) -> list:
    out = []
    for host, stored in ceilings.items():
        rates = [c["bytes_per_s"] / MB for c in stored]
        first = stored[0]
        spread = "" if min(rates) == max(rates) else \
            f"; {len(rates)} runs measured {min(rates):,.0f} to {max(rates):,.0f} MB/s"
        out.append(el("p", f"memcpy ceiling on {host}: {np.median(rates):,.0f} MB/s "
                      f"(MB = 10^6 bytes): the median of {first['repeats']} numpy copies of a "
                      f"{format_bytes(first['buffer_bytes'])} buffer into another, timed with "
                      f"time.perf_counter on the launching host when the run started, after one "
                      f"untimed copy{spread}. It counts bytes copied (each read once and written "
                      "once), as a message's payload is counted. One message stream within a "
                      "host moves at most this rate with one copy and about half of it with two, "
                      "once the message outgrows the caches (smaller ones are copied within the "
                      "caches and can exceed it); bibw counts both directions and fanin all "
                      "senders, which can exceed it too. Each case is set against its own "
                      "run's ceiling."))
    return out


def render(data: ReportData) -> Section | None:
    """The section; None when no case has a bandwidth."""
    with_rate = [c for c in data.cases if c.bytes > 0
                 and data.summaries[c.id]["bandwidth_MBps"] is not None]
    if not with_rate:
        return None
    ceiling = {r.id: _ceiling(r) for r in data.runs}
    ceilings: dict[str, list[dict]] = {}
    for run in data.runs:
        if ceiling[run.id]:
            ceilings.setdefault(run.host["host"], []).append(ceiling[run.id])
    cases = [c for c in with_rate if ceiling[c.run_id]]
    body = _how(ceilings)
    others = [r.id for r in data.runs if not ceiling[r.id]]
    if others:
        body.append(el("p", f"Not compared: run {', '.join(map(str, others))} (several hosts, "
                       "TCP, no context recorded, or stored without a ceiling).",
                       class_="note"))
    if not cases:
        return section("memcpy", "Bandwidth vs the memcpy ceiling", *body)
    fig, axes = figures.new(1, 1, width=9, row_height=4)
    ax = axes[0][0]
    rows = []
    for i, (config, group) in enumerate(grouped(cases)):
        size = np.array([c.bytes for c in group], dtype=float)
        fraction = figures.nan_none([data.summaries[c.id]["bandwidth_MBps"] for c in group]) \
            * MB / np.array([ceiling[c.run_id]["bytes_per_s"] for c in group])
        x, mid, _, _ = figures.per_size(size, fraction, fraction, fraction)
        ax.plot(x, mid, "o-", ms=3, lw=1, color=figures.color(i), label=names.what(config))
        best = int(np.nanargmax(fraction))
        rows.append((names.configuration(config), format_bytes(int(size[best])),
                     f"{fraction[best]:.2f}"))
    ax.axhline(1.0, color="black", lw=0.8)
    figures.size_axis(ax)
    figures.log_axis(ax, "bandwidth / memcpy rate")
    ax.legend(fontsize=7)
    body += [figure(figures.png(fig), "bandwidth as a fraction of memcpy",
                    "Median bandwidth of each case over the memcpy ceiling; the line at 1 is "
                    "the ceiling."),
             table(Table(("configuration", "size at the highest fraction", "fraction"), rows,
                         align="l"))]
    return section("memcpy", "Bandwidth vs the memcpy ceiling", *body)
