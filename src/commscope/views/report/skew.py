"""A late rank's cost (`run --late`, skew.py): S(d) against the delay and against the
size, one line per configuration (an --algorithm is one), with each point's interval over
launches; the table of every delay beside them."""

from __future__ import annotations

import numpy as np

from ...store import cases as identities
from ...store import names
from ...system.sizes import format_bytes
from ...stats.skew import Skew, skews
from ..skew import table
from . import figures
from .data import ReportData, combined
from .html import Section, el, figure, section
from .html import table as html_table

CAPTION = ("S: the mean over the punctual ranks of (exit with the delay - exit on time) / "
           "delay, the delay as the late rank waited it; 0: the late rank is absorbed, 1: "
           "every rank waits the whole delay. Bars: 95% intervals over launches.")


def _line(ax, x, found: list[Skew], label: str, i: int) -> None:
    s = np.array([f.sensitivity for f in found])
    ci = [f.sensitivity_ci or (f.sensitivity, f.sensitivity) for f in found]
    err = np.array([[v - lo for v, (lo, _) in zip(s, ci)], [hi - v for v, (_, hi) in zip(s, ci)]])
    ax.errorbar(x, s, yerr=err, fmt="o-", ms=3, lw=1, capsize=2, color=figures.color(i),
                label=label)


def draw(groups: list[tuple[str, list[tuple[int, list[Skew]]]]]) -> bytes:
    """S against the delay (one line per configuration and size) and against the size (one
    per configuration and delay)."""
    fig, axes = figures.new(1, 2, width=11)
    by_delay, by_size = axes[0]
    i = 0
    for label, found in groups:
        for nbytes, delays in found:
            _line(by_delay, [f.waited_s * 1e3 for f in delays], delays,
                  f"{label} {format_bytes(nbytes)}", i)
            i += 1
        for k, delay in enumerate(found[0][1]):
            sizes = [(n, d[k]) for n, d in found if n > 0]
            if len(sizes) > 1:
                _line(by_size, [n for n, _ in sizes], [f for _, f in sizes],
                      f"{label} {delay.delay_s * 1e3:g} ms", i)
                i += 1
    by_delay.set_xscale("log")
    by_delay.set_xlabel("delay as waited (ms)")
    for ax in (by_delay, by_size):
        ax.set_ylabel("skew sensitivity S")
        if ax.lines:
            ax.axhline(1.0, color="grey", lw=0.6, ls=":")
            ax.axhline(0.0, color="grey", lw=0.6, ls=":")
            ax.legend(fontsize=7)
    if by_size.lines:
        figures.size_axis(by_size)
    else:  # one size: S against the size has no line to draw
        by_size.set_visible(False)
    return figures.png(fig)


def render(data: ReportData) -> Section | None:
    late = [c for c in data.cases if "late" in c.extra]
    if not late:
        return None
    groups, body = [], []
    for config, cases in identities.grouped(late, size=False, mpi=True):
        by_size = sorted(identities.grouped(cases), key=lambda g: g[1][0].bytes)
        found = [(same[0].bytes, skews(same, data.rank_samples)) for _, same in by_size]
        own = {same[0].bytes: combined(data, same)[0].median_s for _, same in by_size}
        label = " ".join(f"{k}={v}" for k, v in config["params"].items()) or config["kernel"]
        groups.append((label, found))
        body += [el("p", names.configuration(config)),
                 html_table(table(config["kernel"], cases[0].ranks, found, own))]
    return section("skew", "A late rank", figure(draw(groups), "skew sensitivity against "
                                                  "delay and size", CAPTION), *body)
