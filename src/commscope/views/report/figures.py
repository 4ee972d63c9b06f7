"""Figure helpers: matplotlib's object API on the Agg canvas, rendered to PNG bytes.

No pyplot: figures are plain objects, nothing global is switched and nothing
needs a display. Sizes on log axes are labelled in binary units (format_bytes).
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, Locator, MaxNLocator, NullLocator

from ...system.sizes import format_bytes

DPI = 90
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf", "#7f7f7f", "#bcbd22")


def new(rows: int = 1, cols: int = 1, width: float = 10.0, row_height: float = 3.6,
        bottom: float = 0.55, left: float = 1.0, right: float = 0.2,
        x_labels_last_row_only: bool = False):
    """A figure of rows x cols axes; margins in inches, fixed rather than computed, since
    matplotlib's layout engines draw every figure twice to measure it. The left margin
    holds a tick label of seven characters ("100,000") beside the axis label."""
    height = row_height * rows
    fig = Figure(figsize=(width, height), dpi=DPI)
    axes = fig.subplots(rows, cols, squeeze=False)
    gap = 0.35 if x_labels_last_row_only else bottom + 0.35
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height,
                        top=1 - 0.3 / height, wspace=0.25, hspace=gap / row_height)
    return fig, axes


def png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    out = io.BytesIO()
    # zlib level 3: PNG files ~10% larger than at PIL's default 6, encoded in half the time
    fig.savefig(out, format="png", dpi=DPI, pil_kwargs={"compress_level": 3})
    return out.getvalue()


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def mode_colors(send_modes) -> dict[str | None, str]:
    """One colour per send mode, in order of first appearance (runs measure them in the
    native side's order), so a mode has the same colour in every figure of a page."""
    return {mode: color(i) for i, mode in enumerate(dict.fromkeys(send_modes))}


def _size_label(x: float, _pos) -> str:
    n = int(round(x))
    return format_bytes(n) if n >= 1 and n & (n - 1) == 0 and abs(x - n) < 1e-6 * n else ""


MAX_SIZE_TICKS = 10


def size_axis(ax) -> None:
    """A log2 x axis of message sizes, at most MAX_SIZE_TICKS ticks at powers of two
    (every 2nd, 4th, ... when the data span more) labelled 1 KiB, 1 MiB, ...; call it after
    plotting, since the ticks follow the data."""
    ax.set_xscale("log", base=2)
    low, high = ax.dataLim.intervalx
    if np.isfinite(low) and np.isfinite(high) and 0 < low <= high:
        first, last = int(np.floor(np.log2(low))), int(np.ceil(np.log2(high)))
        # Side-by-side panels have room for fewer labels ("256 B" and "1 KiB" collide).
        columns = ax.get_subplotspec().get_gridspec().ncols if ax.get_subplotspec() else 1
        room = max(4, MAX_SIZE_TICKS * 2 // (columns + 1))
        step = max(1, -(-(last - first) // room))
        ax.xaxis.set_major_locator(FixedLocator(2.0 ** np.arange(first, last + 1, step)))
    ax.xaxis.set_major_formatter(FuncFormatter(_size_label))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("message size")


def plain(value: float, _pos=None) -> str:
    """A tick label as a number is written: 0.01, 1, 10,000."""
    if value >= 1 and value == round(value):
        return f"{value:,.0f}"
    return f"{value:g}"


# Tick marks tried in turn on a log axis: decades; then 1, 2, 5 and 1..9 of each decade
# where the axis spans too few decades for three labels.
SUBS = ((1.0,), (1.0, 2.0, 5.0), tuple(float(k) for k in range(1, 10)))


class Decades(Locator):
    """A label on every decade in view, however many (matplotlib's LogLocator drops
    decades to keep its count of ticks down: one label over four decades); more marks per
    decade where it spans too few; with `zero` (a symlog axis), a tick at 0 too."""

    def __init__(self, zero: bool = False):
        self.zero = zero

    def __call__(self):
        return self.tick_values(*self.axis.get_view_interval())

    def tick_values(self, vmin, vmax):
        low, high = sorted((vmin, vmax))
        zero = [0.0] if self.zero and low <= 0 <= high else []
        if self.zero:  # the decades above symlog's linear part
            low = max(low, self.axis.get_transform().linthresh)
        if not (np.isfinite(low) and np.isfinite(high) and 0 < low < high):
            return np.array(zero)
        span = 1e-9 * (high - low)
        decades = 10.0 ** np.arange(np.floor(np.log10(low)), np.ceil(np.log10(high)) + 1)
        for subs in SUBS:
            ticks = np.outer(decades, subs).ravel()
            ticks = ticks[(ticks >= low - span) & (ticks <= high + span)]
            if ticks.size >= 3 or subs is SUBS[-1] and ticks.size >= 2:
                return np.concatenate([zero, ticks])
        # under a factor of about 2: evenly spaced values, as on a linear axis
        return np.concatenate([zero, MaxNLocator(4).tick_values(low, high)])


def log_axis(ax, label: str, axis: str = "y") -> None:
    """A log10 axis labelled on every decade (Decades), with plain labels (1, 10, 0.1) and
    no minor ticks: mathtext labels and the minor ticks' artists cost more than the rest of
    a figure."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    target.set_major_locator(Decades())
    target.set_major_formatter(FuncFormatter(plain))
    target.set_minor_locator(NullLocator())
    (ax.set_ylabel if axis == "y" else ax.set_xlabel)(label)
    ax.grid(True, which="major", alpha=0.3)


def zero_log_axis(ax, label: str, values) -> None:
    """A y axis that shows 0 as 0 and positive values on a log scale (symlog): linear from
    0 to the decade at or below the smallest positive of `values` (those drawn), log above."""
    values = np.asarray(values, dtype=float)
    positive = values[np.isfinite(values) & (values > 0)]
    floor = 10.0 ** np.floor(np.log10(positive.min())) if positive.size else 1.0
    ax.set_yscale("symlog", linthresh=floor, linscale=0.4)
    ax.set_ylim(0, 1.5 * positive.max() if positive.size else 10 * floor)
    ax.yaxis.set_major_locator(Decades(zero=True))
    ax.yaxis.set_major_formatter(FuncFormatter(plain))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_ylabel(label)
    ax.grid(True, which="major", alpha=0.3)


def nan_none(values) -> np.ndarray:
    """Floats with None as NaN, so a missing CI leaves a gap instead of failing."""
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def per_size(bytes_: np.ndarray, median, low, high):
    """One point per distinct size where repeated launches measured it more than once:
    the median of the medians, the band from the lowest CI end to the highest."""
    sizes, where = np.unique(bytes_, return_inverse=True)
    if sizes.size == bytes_.size:
        return sizes, median[np.argsort(bytes_)], low[np.argsort(bytes_)], high[np.argsort(bytes_)]
    mid = np.array([np.median(median[where == i]) for i in range(sizes.size)])
    lo = np.array([np.nanmin(low[where == i]) if np.isfinite(low[where == i]).any() else np.nan
                   for i in range(sizes.size)])
    hi = np.array([np.nanmax(high[where == i]) if np.isfinite(high[where == i]).any() else np.nan
                   for i in range(sizes.size)])
    return sizes, mid, lo, hi
