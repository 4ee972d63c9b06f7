"""Per-rank heatmaps for fanin and ring: who waits, at which size.

fanin: each rank's send-completion time (its `fanin` phase, measured from the
common barrier exit; rank 0's is the time to its last receive), as
docs/kernels-many-rank.md advises for per-rank times. ring: each rank's own
time per iteration (store.rank_samples). A cell is the rank's median at that
size; its colour is that median over the median of all ranks at the size, on
a log2 scale, so a rank twice as slow as the others is as red at 8 B as at
4 MiB.
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import Normalize
from matplotlib.ticker import FuncFormatter

from ...store import names
from ...store.cases import Case
from ...system.kernels import meaning
from ...system.sizes import format_bytes
from ...system.units import us_short
from ..run import rank_times
from . import figures
from .data import ReportData, grouped
from .html import Section, el, figure, section

ANNOTATE_MAX_CELLS = 160  # write the µs into each cell up to this many cells


def per_rank_s(data: ReportData, case: Case) -> np.ndarray:
    """ranks x valid samples: the per-rank times this section shows."""
    matrix = rank_times(case, data.rank_samples)
    invalid = case.extra.get("invalid")
    return np.delete(matrix, invalid, axis=1) if invalid else matrix


def medians(data: ReportData, cases: list[Case]) -> tuple[list[int], np.ndarray]:
    """Distinct sizes and the ranks x sizes matrix of per-rank medians (repeats pooled)."""
    sizes = sorted({c.bytes for c in cases})
    columns = [np.median(np.concatenate([per_rank_s(data, c) for c in cases if c.bytes == n],
                                        axis=1), axis=1) for n in sizes]
    return sizes, np.column_stack(columns)


def _heatmap(data: ReportData, config: dict, cases: list[Case]) -> bytes:
    sizes, median_s = medians(data, cases)
    ranks = median_s.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log2(median_s / np.median(median_s, axis=0))
    ratio = np.where(np.isfinite(ratio), ratio, 0.0)
    reach = max(float(np.abs(ratio).max()), 0.1)
    fig, axes = figures.new(1, 1, width=min(14.0, 5.0 + 0.7 * len(sizes)),
                            row_height=min(10.0, 1.6 + 0.35 * ranks), bottom=0.9, right=0.3)
    ax = axes[0][0]
    image = ax.imshow(ratio, aspect="auto", cmap="RdBu_r", norm=Normalize(-reach, reach),
                      interpolation="nearest")
    bar = fig.colorbar(image, ax=ax, pad=0.02,
                       format=FuncFormatter(lambda v, _pos: f"{2 ** v:.3g}x"))
    bar.set_label("rank / all ranks")
    ax.set_xticks(range(len(sizes)), [format_bytes(n) for n in sizes], rotation=45, ha="right",
                  fontsize=7)
    ax.set_yticks(range(ranks), [str(r) for r in range(ranks)], fontsize=7)
    ax.set_xlabel("message size")
    ax.set_ylabel("rank")
    if ratio.size <= ANNOTATE_MAX_CELLS:
        for (r, s), value in np.ndenumerate(median_s):  # cells, not samples
            dark = abs(ratio[r, s]) > 0.6 * reach
            ax.text(s, r, us_short(value), ha="center", va="center", fontsize=7,
                    color="white" if dark else "black")
    return figures.png(fig)


CAPTION = ("Rows: ranks; columns: sizes. Numbers: each rank's median time in µs; colour: that "
           "median relative to the median over all ranks at the size (red slower, blue "
           "faster). fanin: send-completion time from the common barrier exit (rank 0: until "
           "its last receive); ring: each rank's own time per iteration.")


def render(data: ReportData) -> Section | None:
    cases = [c for c in data.cases if meaning(c.kernel).rank_times and c.valid_samples.size]
    if not cases:
        return None
    body = [el("p", CAPTION)]
    for config, group in grouped(cases):
        title = names.configuration(config)
        body.append(figure(_heatmap(data, config, group), f"per-rank heatmap: {title}", title))
    return section("ranks", "Per-rank times: fanin and ring", *body)
