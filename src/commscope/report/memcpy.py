"""Shared-memory bandwidth as a fraction of this machine's memcpy rate.

Within one host an MPI message is at best one copy from the sender's buffer
to the receiver's (single-copy: CMA, XPMEM), at worst two through a shared
segment (copy-in/copy-out), so the rate at which one core copies a buffer
far larger than the caches bounds what one message stream can reach.

The ceiling is measured when the report is made, not at run time: the store
keeps no machine benchmark, and measuring here needs no change to how runs
are stored. It is therefore only set against runs whose one host is the
host making the report; other runs are named, not compared.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass

import numpy as np

from ..kernels import kernel
from ..sizes import format_bytes
from . import figures
from .data import ReportData, grouped, label, short_label
from .html import Section, el, figure, section, table

BUFFER_BYTES = 64 * 2**20  # well beyond any last-level cache, so memory, not cache, is timed
REPEATS = 7
MB = 1e6


@dataclass(frozen=True)
class Ceiling:
    bytes_per_s: float  # bytes copied per second (each byte read once and written once)
    buffer_bytes: int
    repeats: int
    host: str
    spread: tuple[float, float]  # slowest and fastest copy's rate, bytes per second


def measure(buffer_bytes: int = BUFFER_BYTES, repeats: int = REPEATS) -> Ceiling:
    """Median rate of numpy copies of one buffer into another, after one untimed copy
    that faults both buffers' pages in."""
    source = np.ones(buffer_bytes // 8)
    target = np.empty_like(source)
    np.copyto(target, source)
    seconds = np.empty(repeats)
    for i in range(repeats):
        start = time.perf_counter()
        np.copyto(target, source)
        seconds[i] = time.perf_counter() - start
    rates = source.nbytes / seconds
    return Ceiling(float(np.median(rates)), source.nbytes, repeats, socket.gethostname(),
                   (float(rates.min()), float(rates.max())))


def _on_this_host(run, host: str) -> bool:
    return run.context.get("hosts") == [host] and run.settings.get("transport", "auto") != "tcp"


def render(data: ReportData, ceiling: Ceiling | None = None) -> Section | None:
    """The section, measuring the ceiling unless given; None when no case has a bandwidth."""
    with_rate = [c for c in data.cases if c.bytes > 0 and kernel(c.kernel).bandwidth is not None
                 and c.valid_samples.size]
    if not with_rate:
        return None
    ceiling = ceiling or measure()
    local = {r.id for r in data.runs if _on_this_host(r, ceiling.host)}
    cases = [c for c in with_rate if c.run_id in local]
    how = el("p", f"memcpy ceiling on {ceiling.host}: {ceiling.bytes_per_s / MB:,.0f} MB/s "
             f"(MB = 10^6 bytes): the median of {ceiling.repeats} numpy copies of a "
             f"{format_bytes(ceiling.buffer_bytes)} buffer into another, timed with "
             f"time.perf_counter when this report was made, after one untimed copy; copies "
             f"ranged {ceiling.spread[0] / MB:,.0f} to {ceiling.spread[1] / MB:,.0f} MB/s. It "
             "counts bytes copied (each read once and written once), as a message's payload "
             "is counted. One message stream within a host moves at most this rate with one "
             "copy and about half of it with two, once the message outgrows the caches (smaller "
             "ones are copied within the caches and can exceed it); bibw counts both "
             "directions and fanin all senders, which can exceed it too.")
    others = [r.id for r in data.runs if r.id not in local]
    body = [how]
    if others:
        body.append(el("p", f"Not compared: run {', '.join(map(str, others))} (another host, "
                       "several hosts, TCP, or no context recorded).", class_="note"))
    if not cases:
        return section("memcpy", "Bandwidth vs the memcpy ceiling", *body)
    fig, axes = figures.new(1, 1, width=9, row_height=4)
    ax = axes[0][0]
    rows = []
    for i, (config, group) in enumerate(grouped(data, cases)):
        size = np.array([c.bytes for c in group], dtype=float)
        fraction = figures.nan_none([data.summaries[c.id]["bandwidth_MBps"] for c in group]) \
            * MB / ceiling.bytes_per_s
        x, mid, _, _ = figures.per_size(size, fraction, fraction, fraction)
        ax.plot(x, mid, "o-", ms=3, lw=1, color=figures.color(i), label=short_label(config))
        best = int(np.nanargmax(fraction))
        rows.append((label(config), format_bytes(int(size[best])), f"{fraction[best]:.2f}"))
    ax.axhline(1.0, color="black", lw=0.8)
    figures.size_axis(ax)
    figures.log_axis(ax, "bandwidth / memcpy rate")
    ax.legend(fontsize=7)
    body += [figure(figures.png(fig), "bandwidth as a fraction of memcpy",
                    "Median bandwidth of each case over the memcpy ceiling; the line at 1 is "
                    "the ceiling."),
             table(("configuration", "size at the highest fraction", "fraction"), rows)]
    return section("memcpy", "Bandwidth vs the memcpy ceiling", *body)
