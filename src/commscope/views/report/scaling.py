"""The ring and the collectives against size and against the process count P.

Runs of one kernel and configuration at several P (`--np 2:8`, or separate
runs) are one figure: latency vs size with a line per P, and latency vs P
with a line per size (at most SIZES_VS_P sizes, spread over those measured).
For the ring with seed 001's pattern, the models of models.collectives are
drawn from the point-to-point fit of these runs (as `commscope predict ring`
does): t(P) = 2P t(n), one message after the other, and P t(2n), a step's
messages in flight together.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from ...store import names
from ...models.collectives import ALGORITHMS
from ...models.groups import GroupFit
from ...system.sizes import format_bytes
from ...system.units import US_PER_S
from . import figures
from .data import RING, ReportData, combined, grouped, over_ranks
from .html import Section, el, figure, section

SIZES_VS_P = 4
# Which point-to-point fit gives t(m) for the ring: pingping sends both ways at once, as a ring
# step does; else pingpong's standard mode, else any pingpong mode.
SOURCE_PREFERENCE = (("pingping", None), ("pingpong", "standard"), ("pingpong", None))
MODEL_STYLES = {"serial": "--", "concurrent": ":"}


def source_fit(found: dict[str, GroupFit], config: dict) -> GroupFit | None:
    """A fitted point-to-point group of the same MPI library and transport, by preference."""
    for kernel_name, mode in SOURCE_PREFERENCE:
        for g in found.values():
            c = g.group.config
            if (g.fit is not None and c["kernel"] == kernel_name and c["mpi"] == config["mpi"]
                    and c["transport"] == config["transport"]
                    and mode in (None, c["send_mode"])):
                return g
    return None


def oversubscribed(data: ReportData, cases) -> list[int]:
    runs = {c.run_id for c in cases}
    return [r.id for r in data.runs if r.id in runs and r.row.oversubscribed]


def _columns(data: ReportData, cases):
    """Ranks, size, median and launch-aware CI of each case, its launches combined."""
    s = combined(data, cases)
    return (np.array([x.ranks for x in s]), np.array([x.bytes for x in s], dtype=float),
            *(figures.nan_none([getattr(x, k) for x in s])
              for k in ("median_s", "ci_low_s", "ci_high_s")))


def _spread(sizes: np.ndarray) -> np.ndarray:
    picks = np.unique(np.linspace(0, sizes.size - 1, min(SIZES_VS_P, sizes.size)).round())
    return sizes[picks.astype(int)]


def _vs_size(ax, ranks, size, median, low, high) -> None:
    for i, p in enumerate(np.unique(ranks)):
        on = (ranks == p) & (size > 0) & np.isfinite(median)
        x, mid, lo, hi = figures.per_size(size[on], median[on], low[on], high[on])
        ax.plot(x, mid * US_PER_S, "o-", color=figures.color(i), ms=3, lw=1, label=f"P = {p}")
        ax.fill_between(x, lo * US_PER_S, hi * US_PER_S, color=figures.color(i), alpha=0.25, lw=0)
    figures.size_axis(ax)
    figures.log_axis(ax, "latency (µs)")
    ax.legend(fontsize=8)


def _vs_ranks(ax, ranks, size, median, low, high, model: GroupFit | None) -> None:
    for i, nbytes in enumerate(_spread(np.unique(size))):
        at = (size == nbytes) & np.isfinite(median)
        order = np.argsort(ranks[at], kind="stable")
        p, mid = ranks[at][order], median[at][order]
        err = np.abs(np.vstack([low[at][order], high[at][order]]) - mid)
        ax.errorbar(p, mid * US_PER_S, yerr=np.nan_to_num(err) * US_PER_S, fmt="o-", ms=3, lw=1,
                    capsize=2, color=figures.color(i), label=format_bytes(int(nbytes)))
        if model is not None and p.size:
            grid = np.arange(max(2, p.min()), p.max() + 1)
            for name, predict in ALGORITHMS["ring"].items():
                t = [predict(model.fit.time_s, int(q), int(nbytes)) for q in grid]
                ax.plot(grid, np.array(t) * US_PER_S, MODEL_STYLES[name], color=figures.color(i),
                        lw=1)
    ax.set_xlabel("ranks P")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    figures.log_axis(ax, "latency (µs)")
    ax.legend(fontsize=8)


def _caption(config: dict, model: GroupFit | None, ranks: np.ndarray,
             oversubscribed: list[int]) -> str:
    text = ("Left: median latency (one iteration of the slowest rank) per case with its 95% CI "
            "band, a line per P; right: the same against P for a few sizes, CI as error bars.")
    if np.unique(ranks).size < 2:
        text += " One process count only: measure several (--np 2:8) to see the trend."
    if oversubscribed:
        text += (f" Run {', '.join(map(str, oversubscribed))} ran more ranks than cores: its "
                 "times include time-slicing, which no model describes.")
    if config["kernel"] != RING:
        return text
    if config["params"]["pattern"] != "ring":
        return text + " The ring models describe pattern=ring only."
    if model is None:
        return text + (" No pingping or pingpong run of the same MPI library and transport with "
                       "a fit is in this report: add one to draw the ring models.")
    runs = ", ".join(str(r) for r in sorted({c.run_id for c in model.group.cases}))
    return text + (f" Dashed: 2P t(n), steps one message after the other; dotted: P t(2n), a "
                   f"step's messages in flight together; t(m) from the fit of run {runs} "
                   f"({names.configuration(model.group.config)}), as `commscope predict ring`.")


def render(data: ReportData) -> Section | None:
    found = data.fits
    cases = [c for c in data.cases if over_ranks(c) and c.valid_samples.size]
    if not cases:
        return None
    body = []
    for config, group in grouped(cases, ranks=False):
        columns = _columns(data, group)
        model = None
        if config["kernel"] == RING and config["params"]["pattern"] == "ring":
            model = source_fit(found, config)
        has_sizes = bool((columns[1] > 0).any())
        fig, axes = figures.new(1, 2 if has_sizes else 1, width=11 if has_sizes else 6)
        if has_sizes:
            _vs_size(axes[0][0], *columns)
        _vs_ranks(axes[0][-1], *columns, model)
        title = names.configuration(config)
        body += [el("h3", title),
                 figure(figures.png(fig), f"latency vs size and P: {title}",
                        _caption(config, model, columns[0], oversubscribed(data, group)))]
    return section("scaling", "Ring and collectives vs size and process count", *body)
