"""Sample distributions per size: violins from log-binned histograms, or the samples themselves.

A violin's width at a latency is the number of samples in that log-spaced
bin, so two modes (an eager and a rendezvous path, a slow first sample)
show as two bulges the median alone would hide. Binning is numpy over the
whole case, no kernel density estimate and no per-sample Python. Below
MIN_VIOLIN samples a histogram is mostly empty bins, so each sample is a
dot instead, left to right in the order measured. Samples of repeated cases
(launches of a sweep) are pooled per size.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection, PolyCollection

from ...store import names
from ...system.sizes import format_bytes
from ...system.units import US_PER_S
from . import figures
from .data import ReportData, application, grouped
from .html import Section, el, figure, section

BINS = 30
MIN_VIOLIN = 50
HALF_WIDTH = 0.42  # of the space between two sizes
ROWS_PER_FIGURE = 6


def _outline(x: float, latency_us: np.ndarray) -> np.ndarray | None:
    """The violin as a polygon; None when every sample is equal."""
    low, high = latency_us.min(), latency_us.max()
    if high <= low:
        return None
    counts, edges = np.histogram(np.log10(latency_us), BINS, (np.log10(low), np.log10(high)))
    width = np.repeat(counts / counts.max() * HALF_WIDTH, 2)
    y = 10 ** np.repeat(edges, 2)[1:-1]
    return np.column_stack([np.concatenate([x - width, (x + width)[::-1]]),
                            np.concatenate([y, y[::-1]])])


class _Row:
    """What one axes draws, gathered over its sizes and drawn as four artists in all, so
    drawing does not grow with the number of cases or samples."""

    def __init__(self):
        self.outlines, self.whiskers, self.medians, self.dots = [], [], [], []

    def add(self, x: float, latency_s: np.ndarray) -> None:
        latency_us = latency_s[latency_s > 0] * US_PER_S  # log axes: a zero reading is left out
        if latency_us.size == 0:
            return
        p05, median, p95 = np.percentile(latency_us, (5, 50, 95))
        self.whiskers.append([(x, p05), (x, p95)])
        self.medians.append([(x - HALF_WIDTH / 2, median), (x + HALF_WIDTH / 2, median)])
        if latency_us.size < MIN_VIOLIN:
            spread = np.linspace(-HALF_WIDTH / 2, HALF_WIDTH / 2, latency_us.size)
            self.dots.append(np.column_stack([x + spread, latency_us]))
        else:
            outline = _outline(x, latency_us)
            self.outlines += [] if outline is None else [outline]

    def draw(self, ax, colour: str) -> None:
        ax.add_collection(PolyCollection(self.outlines, facecolors=colour, alpha=0.45,
                                         linewidths=0))
        ax.add_collection(LineCollection(self.whiskers, colors="black", linewidths=0.8))
        ax.add_collection(LineCollection(self.medians, colors="black", linewidths=1.6))
        if self.dots:
            dots = np.concatenate(self.dots)
            ax.plot(dots[:, 0], dots[:, 1], ".", color=colour, ms=3, alpha=0.7)
        ax.autoscale_view()


def _row(ax, data: ReportData, config: dict, cases, sizes: list[int]) -> None:
    """One axes of distributions at the positions of `sizes`."""
    row = _Row()
    for i, nbytes in enumerate(sizes):
        at_size = [c.latency_s for c in cases if c.bytes == nbytes]
        if at_size:
            row.add(i, np.concatenate(at_size))
    row.draw(ax, data.mode_color[config["send_mode"]])
    figures.log_axis(ax, "latency (µs)")
    # A label inside the axes, not a title: placing a title measures every tick label first.
    ax.text(0.005, 0.96, f"{config['send_mode'] or config['kernel']}, {config['ranks']} ranks",
            transform=ax.transAxes, va="top", fontsize=9,
            bbox={"facecolor": "white", "alpha": 0.8, "lw": 0})


def _figure(data: ReportData, rows) -> bytes:
    """Rows of violins over the sizes any of them measured, sharing the size axis."""
    sizes = sorted({c.bytes for _, cases in rows for c in cases})
    fig, axes = figures.new(len(rows), 1, width=min(14.0, 4 + 0.35 * len(sizes)),
                            row_height=2.3, bottom=0.8, x_labels_last_row_only=True)
    for ax, (config, cases) in zip(axes[:, 0], rows):
        _row(ax, data, config, cases, sizes)
        ax.set_xlim(-0.6, len(sizes) - 0.4)
        ax.set_xticks([])  # not shared: a shared axis would give every row its tick artists
    axes[-1, 0].set_xticks(range(len(sizes)), [format_bytes(n) for n in sizes], rotation=45,
                           fontsize=7, ha="right")
    return figures.png(fig)


CAPTION = ("Every valid sample of each case as latency (kernel definition), log scale. Violin "
           "width: the number of samples in each of 30 log-spaced bins between the case's "
           "fastest and slowest sample; with fewer than 50 samples, each sample a dot, left "
           "to right in the order measured. Black bar: median; whisker: 5th to 95th "
           "percentile. Outliers are kept.")


def render(data: ReportData) -> Section | None:
    cases = [c for c in data.cases if not application(c) and c.valid_samples.size]
    if not cases:
        return None
    body = []
    for config, panel in grouped(cases, send_mode=False, ranks=False):
        rows = grouped(panel)
        title = names.configuration(config)
        for start in range(0, len(rows), ROWS_PER_FIGURE):
            body.append(figure(_figure(data, rows[start:start + ROWS_PER_FIGURE]),
                               f"sample distributions: {title}", title))
    return section("distributions", "Sample distributions", el("p", CAPTION), *body)
