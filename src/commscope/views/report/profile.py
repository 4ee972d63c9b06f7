"""Profiled programs (`commscope profile`, an imported mpisee or mpiP file): each priced on
every measured run of the results file as `predict --profile` prices it: the dominance
table as bars of predicted against profiled time, the efficiency per row, and the
what-if of twice the bandwidth (docs/profile.md)."""

from __future__ import annotations

import numpy as np

from ...store import names
from ..profile import prediction_table, row_label, what_if_line
from . import figures
from .html import Section, el, figure, section
from .html import table as html_table

CAPTION = ("Each row's time over all ranks: predicted (its calls x the cost of one call "
           "measured here) and profiled. A predicted bar well short of the profiled one is "
           "time the network does not explain: waits for late ranks, imbalance.")


def draw(done) -> bytes:
    done = sorted(done, key=lambda x: x.predicted_s)
    fig, axes = figures.new(1, 1, width=9, row_height=max(2.0, 0.35 * len(done) + 1))
    ax = axes[0][0]
    y = np.arange(len(done))
    ax.barh(y + 0.2, [x.predicted_s * 1e3 for x in done], 0.4, color=figures.color(0),
            label="predicted")
    ax.barh(y - 0.2, [x.row.time_s * 1e3 for x in done], 0.4, color=figures.color(1),
            label="profiled")
    ax.set_yticks(y, [" ".join(row_label(x.row)).strip() for x in done], fontsize=7)
    ax.set_xscale("log")  # rows apart by orders of magnitude
    ax.set_xlabel("ms, over all ranks")
    ax.legend(fontsize=7)
    fig.subplots_adjust(left=0.34)  # room for the rows' labels
    return figures.png(fig)


def render(found: list) -> Section | None:
    """Each profile as cli/report.py priced it: (row, profile, priced rows, the what-if of
    twice the bandwidth, the line said where it recorded no call)."""
    if not found:
        return None
    body = []
    for row, p, priced, doubled, none in found:
        if none:
            body.append(el("p", none))
            continue
        done = [x for x in priced if x.cost_s is not None]
        body.append(el("p", f"Profile {row.id}: ", el("code", " ".join(p.program)),
                       f", {names.ranks(p.ranks)}; {len(priced) - len(done)} of "
                       f"{len(priced)} rows not priced here (`commscope predict --profile` "
                       "says what to run)."))
        if not done:
            continue
        now = sum(x.predicted_s for x in done)
        body += [figure(draw(done), "predicted and profiled time per row", CAPTION),
                 html_table(prediction_table(done, now)),
                 el("p", what_if_line(p, "bandwidth x2", doubled, now))]
    return section("profiles", "Profiled programs", *body)
