"""Latency and bandwidth against message size, per send mode, with the fitted models.

One figure per configuration less the send mode: every mode of a run on the
same axes. The points are each launch's median; the line and the band are each
case's median and launch-aware 95% interval over its launches
(summary.combined_summary, as `results show` prints them); the lines are the fits of
`commscope fit` (models.groups.fit_group): the Hockney line t(n) = alpha + n/B
dotted, the segments chosen by BIC dashed, each breakpoint a tick on its curve
(its bootstrap CI in the table and the figure's hover title). Under each figure's table,
the strip plot of its launch medians (report/strip.py).
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ...store import names
from ...system import units
from ...store.cases import Case, key
from ...system.kernels import meaning
from ...models.groups import GroupFit, configuration, fit_group, group_cases, summary
from ...system.sizes import format_bytes
from ...system.units import MB, US_PER_S
from ..models import breakpoint_kind, line_cells
from ..tables import Table
from . import figures, strip
from .data import ReportData, application, combined, grouped, over_ranks
from .html import Section, el, figure, section, table

MODEL_POINTS = 200  # points on each drawn model curve
BREAKPOINT = "breakpoint"  # the gid of a breakpoint's marker


def size_cases(data: ReportData) -> list[Case]:
    """Cases shown against size: everything but the kernels shown against P and the apps."""
    return [c for c in data.cases if not over_ranks(c) and not application(c)]


def fits(cases: list[Case], history=None) -> dict[str, GroupFit]:
    """Each configuration's fit, keyed by its configuration (cases.key); `history` as
    ReportData's. Not loggp's: its sample is a whole iteration of LogGP's parts, and its
    model is LogGP (`commscope fit`)."""
    return {key(g.config): fit_group(g, history=history) for g in group_cases(cases)
            if g.config["kernel"] != "loggp"}


def fit_of(found: dict[str, GroupFit], case: Case) -> GroupFit | None:
    return found.get(key(configuration(case)))


def _columns(data: ReportData, cases: list[Case]):
    """Sizes, median latency and its launch-aware CI, and bandwidth, one entry per case
    over its launches, by size; and every launch's (size, median latency)."""
    s = sorted(combined(data, cases), key=lambda x: x.bytes)
    size = np.array([x.bytes for x in s], dtype=float)
    median, low, high = (figures.nan_none([getattr(x, k) for x in s])
                         for k in ("median_s", "ci_low_s", "ci_high_s"))
    bandwidth = figures.nan_none([x.bandwidth_MBps for x in s])
    launches = np.array([(x.bytes, m) for x in s for m in x.launch_medians_s],
                        dtype=float).reshape(-1, 2)
    return size, median, low, high, bandwidth, launches


def bytes_per_latency(size, median, bandwidth) -> float | None:
    """bandwidth x latency / size, one constant per kernel (1; 2 for bibw; P-1 for fanin, ...)."""
    sized = size > 0
    ratio = bandwidth[sized] * MB * median[sized] / size[sized]
    ratio = ratio[np.isfinite(ratio)]
    return float(np.median(ratio)) if ratio.size else None


def _draw_mode(ax_lat, ax_bw, data, cases, fit: GroupFit | None, colour, name) -> None:
    size, median, low, high, bandwidth, launches = _columns(data, cases)
    keep = (size > 0) & np.isfinite(median)
    x, mid, lo, hi = size[keep], median[keep], low[keep], high[keep]
    dots = launches[launches[:, 0] > 0]
    ax_lat.plot(x, mid * US_PER_S, "-", color=colour, lw=1, label=name)
    ax_lat.plot(dots[:, 0], dots[:, 1] * US_PER_S, ".", color=colour, ms=3, alpha=0.6)
    ax_lat.fill_between(x, lo * US_PER_S, hi * US_PER_S, color=colour, alpha=0.25, lw=0)
    factor = bytes_per_latency(size, median, bandwidth) if ax_bw is not None else None
    if factor is not None:
        ax_bw.plot(x, factor * x / mid / MB, "-", color=colour, lw=1, label=name)
        ax_bw.plot(dots[:, 0], factor * dots[:, 0] / dots[:, 1] / MB, ".", color=colour,
                   ms=3, alpha=0.6)
        ax_bw.fill_between(x, factor * x / hi / MB, factor * x / lo / MB, color=colour,
                           alpha=0.25, lw=0)
    if fit is None or fit.fit is None or x.size == 0:
        return
    grid = np.geomspace(x[0], x[-1], MODEL_POINTS)
    for model, style in ((fit.fit.single.line.time_s, ":"), (fit.fit.time_s, "--")):
        t = model(grid)
        ok = t > 0  # a fitted line may cross zero below the smallest size it was fitted to
        ax_lat.plot(grid[ok], t[ok] * US_PER_S, style, color=colour, lw=1.2)
        if factor is not None:
            ax_bw.plot(grid[ok], factor * grid[ok] / t[ok] / MB, style, color=colour, lw=1.2)
    for b in fit.fit.breakpoints:
        # One tick on the curve at each breakpoint's estimate; its interval is in the
        # table and the figure's title, since shaded intervals hid the curves.
        at = np.flatnonzero(x == b.bytes)
        t = mid[at[0]] if at.size else float(fit.fit.time_s(np.array([float(b.bytes)]))[0])
        if not t > 0:
            continue
        ax_lat.plot([b.bytes], [t * US_PER_S], "|", color=colour, ms=16, mew=1.6,
                    gid=BREAKPOINT)
        if factor is not None:
            ax_bw.plot([b.bytes], [factor * b.bytes / t / MB], "|", color=colour, ms=16,
                       mew=1.6, gid=BREAKPOINT)


def draw(data, config, cases, found) -> Figure:
    """The figure of one configuration: latency, and bandwidth where the kernel has one."""
    by_mode = grouped(cases)
    has_bandwidth = meaning(config["kernel"]).bandwidth is not None
    fig, axes = figures.new(1, 2 if has_bandwidth else 1, width=11 if has_bandwidth else 6.5)
    ax_lat, ax_bw = axes[0][0], axes[0][1] if has_bandwidth else None
    for mode_config, mode_cases in by_mode:
        _draw_mode(ax_lat, ax_bw, data, mode_cases, fit_of(found, mode_cases[0]),
                   data.mode_color[mode_config["send_mode"]],
                   mode_config["send_mode"] or config["kernel"])
    for ax, name in ((ax_lat, "latency (µs)"), (ax_bw, "bandwidth (MB/s, MB = 10^6 B)")):
        if ax is not None:
            figures.size_axis(ax)
            figures.log_axis(ax, name)
    ax_lat.legend(fontsize=8)
    return fig


def _breakpoints(named: list[tuple[str, GroupFit | None]]) -> str | None:
    """Each mode's breakpoints with their 95% bootstrap CIs, for the figure's title."""
    parts = [name + " " + ", ".join(format_bytes(b["bytes"]) + _ci(b["ci_bytes"], format_bytes)
                                    for b in summary(g)["breakpoints"])
             for name, g in named if g is not None and g.fit is not None and g.fit.breakpoints]
    return "breakpoints (95% bootstrap CI): " + "; ".join(parts) if parts else None


def _ci(ci, fmt) -> str:
    return "" if ci is None else f" ({fmt(ci[0])} to {fmt(ci[1])})"


def _fit_rows(name: str, g: GroupFit | None):
    if g is None:
        return [(name, "LogGP: see LogGP and max-rate models", "", "", "", "")]
    if g.fit is None:
        return [(name, "no fit", g.note, "", "", "")]
    j = summary(g)
    lines = [("one line", j)] + [(f"segment {i}", s) for i, s in enumerate(j["segments"], 1)
                                 if len(j["segments"]) > 1]
    first, last = j["segments"][0]["from_bytes"], j["segments"][-1]["to_bytes"]
    rows = []
    for model, line in lines:
        span = (format_bytes(line.get("from_bytes", first)) + " to "
                + format_bytes(line.get("to_bytes", last)))
        n_half = line["n_half_bytes"]
        alpha, bandwidth, _ = line_cells(line, between=" to ")
        rows.append((name, model, span, alpha, bandwidth,
                     "-" if n_half is None else format_bytes(int(round(n_half)))))
    breaks = ", ".join(f"{format_bytes(b['bytes'])} {breakpoint_kind(b)}"
                       + _ci(b["ci_bytes"], format_bytes) for b in j["breakpoints"]) or "none"
    rows.append((name, "breakpoints", breaks,
                 f"rms residual: one line {units.percent(g.rel_rms_residual)}",
                 f"segments {units.percent(g.rel_rms_residual_segmented)}", ""))
    return rows


CAPTION = ("Points: each launch's median latency (kernel definition, docs/native.md); line "
           "and band: the case's median over its launches and its launch-aware 95% interval "
           "(docs/statistics.md); bandwidth = bytes moved / latency, MB = 10^6 bytes. Dotted: "
           "the Hockney line t(n) = alpha + n/B; dashed: the segments chosen by BIC; a short "
           "vertical tick on a curve: a breakpoint (first size of the later segment), its 95% "
           "bootstrap CI in the table below and in the figure's hover title (docs/models.md). "
           "Sizes of 0 B are left off the log axes.")


def render(data: ReportData) -> Section | None:
    found = data.fits
    cases = size_cases(data)
    if not cases:
        return None
    body = []
    for config, panel in grouped(cases, send_mode=False):
        title = names.configuration(config)
        modes = [(mode_config["send_mode"] or config["kernel"], mode_cases,
                  fit_of(found, mode_cases[0])) for mode_config, mode_cases in grouped(panel)]
        named = [(name, fit) for name, _, fit in modes]
        png = figures.png(draw(data, config, panel, found))
        rows = [row for name, fit in named for row in _fit_rows(name, fit)]
        body += [el("h3", title), figure(png, f"latency and bandwidth vs size: {title}", CAPTION,
                                         title=_breakpoints(named)),
                 table(Table(("mode", "model", "sizes", "alpha µs (95% CI)", "B MB/s (95% CI)",
                              "n_half"), rows, align="lll")),
                 strip.render(title, modes)]
    return section("size", "Latency and bandwidth vs message size", *body)
