"""The algorithms `commscope tune` measured: per collective and process count, time
against size for the library's default and each of its algorithms, the choice marked,
and the default's regret, its time over the fastest measured (tune.py; docs/tune.md)."""

from __future__ import annotations

from ...system import units
from ...system.sizes import format_bytes
from ..tables import Table
from . import figures
from .data import ReportData
from .html import Section, el, figure, section, table

CAPTION = ("Each time as `commscope results show` gives it (the geometric mean of the "
           "kept launches' medians). Black: the library's own choice (the default); "
           "a circle marks the algorithm chosen where it is faster beyond doubt "
           "(BH-adjusted one-sided p < 0.05, the whole interval of its time over the "
           "default's below 1); elsewhere the default is kept.")


def _figure(mine) -> bytes:
    fig, axes = figures.new(1, 1, width=6.5)
    ax = axes[0][0]
    ax.plot([p.bytes for p in mine], [p.default_s * 1e6 for p in mine], "o-", color="black",
            lw=2, ms=3, label="default")
    names = sorted({o.algorithm for p in mine for o in p.options})
    for i, name in enumerate(names):
        at = [(p.bytes, o.time_s) for p in mine for o in p.options if o.algorithm == name]
        ax.plot([b for b, _ in at], [t * 1e6 for _, t in at], ".-", color=figures.color(i),
                lw=1, ms=3, label=name)
    chosen = [(p.bytes, p.chosen.time_s) for p in mine if p.chosen]
    ax.plot([b for b, _ in chosen], [t * 1e6 for _, t in chosen], "o", mfc="none",
            mec="red", ms=10, mew=1.5, label="chosen")
    figures.size_axis(ax)
    figures.log_axis(ax, "time (µs)")
    ax.legend(fontsize=6, ncol=2)
    return figures.png(fig)


def _regret(mine) -> Table:
    rows = []
    for p in mine:
        best = min(p.options, key=lambda o: o.time_s)
        rows.append((format_bytes(p.bytes), units.us(p.default_s), best.algorithm,
                     units.us(best.time_s), units.ratio(p.regret), p.choice or "(default)",
                     units.percent(p.gain)))
    return Table(("size", "default us", "fastest", "its us", "regret", "choice", "gain"),
                 rows, align="lrlrrlr")


def render(data: ReportData) -> Section | None:
    """Only for runs `commscope tune` made: their collective's algorithms."""
    kernels = {r.row.kernel for r in data.runs}
    chosen = [p for p in data.tunes if p.kernel in kernels]
    if not chosen:
        return None
    body = [el("p", "The library's default against each algorithm it offers, measured in "
               "the same launches. Regret: the default's time over the fastest measured.")]
    for kernel, np_ in dict.fromkeys((p.kernel, p.np) for p in chosen):
        mine = [p for p in chosen if (p.kernel, p.np) == (kernel, np_)]
        changed = sum(p.choice is not None for p in mine)
        body += [figure(_figure(mine), f"{kernel} algorithms at {np_} ranks",
                        f"{kernel} at {np_} ranks: an algorithm chosen at {changed} of "
                        f"{len(mine)} sizes. {CAPTION}"), table(_regret(mine))]
    return section("tune", "Algorithms (commscope tune)", *body)
