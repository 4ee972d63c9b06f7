"""`commscope health` runs: the suspects and drain list, N x N heat maps of bandwidth and
latency with the suspects marked, the distribution of pair bandwidths, and for shift the
matrix by distance (docs/health.md)."""

from __future__ import annotations

import warnings

import numpy as np
from matplotlib.patches import Rectangle

from ...system.sizes import format_bytes
from ..health import drain_line, suspects_table
from . import figures
from .html import Section, el, figure, section, table

LABELLED_MAX = 48  # hosts named on every tick up to this many; beyond, every k-th
MAX_CELLS = 256  # drawn a side; beyond, blocks (_blocks)
MARK = "#d62728"


def _ticks(ax, nodes: list[str], axis: str) -> None:
    step = max(1, -(-len(nodes) // LABELLED_MAX))
    where = list(range(0, len(nodes), step))
    (ax.set_xticks if axis == "x" else ax.set_yticks)(
        where, [nodes[i] for i in where], fontsize=6, **({"rotation": 90} if axis == "x" else {}))


def _blocks(values: np.ndarray, worst) -> np.ndarray:
    """values in blocks of k x k cells, each the worst of its cells, so that no more than
    MAX_CELLS a side are drawn: a slow pair among a thousand nodes stays visible, where a
    filtered image would average it away (and drawing a million cells took 0.9 s)."""
    k = -(-max(values.shape) // MAX_CELLS)
    if k == 1:
        return values
    rows, cols = -(-values.shape[0] // k) * k, -(-values.shape[1] // k) * k
    padded = np.full((rows, cols), np.nan)
    padded[:values.shape[0], :values.shape[1]] = values
    with warnings.catch_warnings():  # an all-NaN block (the diagonal's): NaN, blank
        warnings.simplefilter("ignore", RuntimeWarning)
        return worst(padded.reshape(rows // k, k, cols // k, k), axis=(1, 3))


def _heat(h, values: np.ndarray, label: str, columns: list[str] | None = None,
          cmap: str = "viridis", worst=np.nanmin) -> bytes:
    """values rows x columns (columns: nodes unless given), NaN blank; suspects marked.
    `worst` picks a block's cell where there are more than MAX_CELLS a side."""
    nodes = h.matrices.nodes
    side = min(8.0, 3.0 + 0.25 * len(nodes))
    fig, axes = figures.new(1, 1, width=side + 1.5, row_height=side, bottom=1.2, left=1.3,
                            right=0.2)
    ax = axes[0][0]
    rows, cols = values.shape  # the axes stay in cells, whatever the blocks
    image = ax.imshow(_blocks(values, worst), cmap=cmap, aspect="auto",
                      interpolation="nearest", extent=(-0.5, cols - 0.5, rows - 0.5, -0.5))
    fig.colorbar(image, ax=ax, pad=0.02).set_label(label)
    _ticks(ax, nodes, "y")
    if columns is None:
        _ticks(ax, nodes, "x")
        ax.set_xlabel("to (destination)")
        for s in h.suspects:
            if s.kind == "node":
                x = nodes.index(s.hosts[0])
                ax.add_patch(Rectangle((-0.5, x - 0.5), len(nodes), 1,
                                       fill=False, ec=MARK, lw=1.5))
                ax.add_patch(Rectangle((x - 0.5, -0.5), 1, len(nodes),
                                       fill=False, ec=MARK, lw=1.5))
            elif s.kind == "link":
                a, b = (nodes.index(n) for n in s.direction.split("->"))
                ax.add_patch(Rectangle((b - 0.5, a - 0.5), 1, 1, fill=False, ec=MARK, lw=2))
    else:
        ax.set_xticks(range(len(columns)), columns, fontsize=6)
        ax.set_xlabel("distance d (to node x + d)")
        for s in h.suspects:
            if s.kind == "step":
                ax.add_patch(Rectangle((s.distance - 1.5, -0.5), 1, len(nodes), fill=False,
                                       ec=MARK, lw=2))
    ax.set_ylabel("from (source)")
    return figures.png(fig)


def _distribution(h) -> bytes:
    m = h.matrices.median("bandwidth") / 1e6
    values = m[np.isfinite(m)]
    fig, axes = figures.new(1, 1, width=8.0, row_height=3.0)
    ax = axes[0][0]
    ax.hist(values, bins=min(60, max(10, values.size // 4)), color=figures.color(0))
    if h.fits:
        typical = float(np.exp(np.mean([f.mu for f in h.fits]))) / 1e6
        ax.axvline(typical, color=MARK, lw=1, label=f"typical pair {typical:.1f} MB/s")
        ax.legend(fontsize=7)
    ax.set_xlabel("pair bandwidth, MB/s (median over launches)")
    ax.set_ylabel("pairs")
    return figures.png(fig)


def _run(h, run_id: int) -> list:
    m = h.matrices
    body = [el("p", f"Run {run_id}: {m.pattern} over {len(m.nodes)} nodes in {m.launches} "
                    f"launches; bandwidth at {format_bytes(m.bandwidth_bytes)}, latency at "
                    f"{format_bytes(m.latency_bytes)}. ", el("strong", drain_line(h)))]
    if h.suspects:
        body.append(table(suspects_table(h)))
    elif h.note:
        body.append(el("p", f"No verdict: {h.note}"))
    else:
        body.append(el("p", "No suspect: nothing is slower than the model predicts by more "
                            f"than {h.threshold:.0%} beyond doubt."))
    body.append(figure(_heat(h, m.median("bandwidth") / 1e6, "MB/s"),
                       f"bandwidth heat map, run {run_id}",
                       "Bandwidth heat map: row sends, column receives; median over launches. "
                       "Suspects outlined in red (a node: its row and column; a link: its cell). "
                       f"Beyond {MAX_CELLS} nodes a cell is a block of nodes, its slowest pair."))
    body.append(figure(_heat(h, m.median("latency") * 1e6, "µs", cmap="viridis_r",
                             worst=np.nanmax),
                       f"latency heat map, run {run_id}",
                       "Latency heat map (µs; lighter is faster): pairs, half the round trip; "
                       "shift, the time per message with every node sending at once."))
    body.append(figure(_distribution(h), f"pair bandwidths, run {run_id}",
                       "Distribution of pair bandwidths; the line is the model's typical pair."))
    if m.pattern == "shift":
        distances = [str(d) for d in range(1, len(m.nodes))]
        body.append(figure(_heat(h, m.by_distance("bandwidth") / 1e6, "MB/s", distances),
                           f"bandwidth by distance, run {run_id}",
                           "Bandwidth by distance: row x, column d, from x to x + d; a step "
                           "(a distance slow for everyone) outlined in red."))
    return body


def render_runs(healths: dict) -> Section | None:
    """The section of the health runs, judged (health.health_of), by run id (None: none)."""
    body = []
    for run_id, h in healths.items():
        body += _run(h, run_id)
    return section("health", "Node and link health (heat map, suspects, drain list)", *body) \
        if body else None
