"""A watch's cases over time (docs/watch.md, "Reading a watch"): per case its probes'
figures in order, the band its level is expected in, where a step began, the slow stays
of a flapping case and the probes that could not measure it; then each case's verdicts in
the verdict core's table."""

from __future__ import annotations

from matplotlib.figure import Figure

from ...system.units import US_PER_S
from ..watch import VERDICT_HEADER
from ..tables import Table
from . import figures
from .html import Section, figure, section
from .html import table as html_table

CAPTION = ("Each probe's figure (the mean log median of the launches it kept) in µs. "
           "Shaded green: the band 95% of probes at the level now fall in, drawn over the "
           "probes of that level; red line: where a step began (Page's estimate); shaded "
           "orange: a flapping case's slow stays; x on the axis: a probe that measured "
           "nothing of the case. A dotted line starts each provenance segment (MPI, library "
           "settings, hosts).")


def draw(s) -> Figure:
    fig, axes = figures.new(1, 1, width=8.0, row_height=2.8)
    ax = axes[0][0]
    kept = s.measured
    ax.plot([p.probe for p in kept], [p.median_s * US_PER_S for p in kept], "o-", ms=3,
            lw=1, color=figures.color(0))
    e = s.expected
    if e is not None and e.band_s is not None and kept:
        since = max([st.began for st in s.steps] + [s.segments[-1].first_probe])
        ax.fill_between([since, kept[-1].probe], e.band_s[0] * US_PER_S,
                        e.band_s[1] * US_PER_S, color="#2ca02c", alpha=0.2, lw=0)
        ax.hlines(e.level_s * US_PER_S, since, kept[-1].probe, color="#2ca02c", lw=1)
    for st in s.steps:
        ax.axvline(st.began - 0.5, color="#d62728", lw=1.2)
    for g in s.segments[1:]:
        ax.axvline(g.first_probe - 0.5, color="#7f7f7f", lw=1, ls=":")
    if s.flapping is not None:
        for first, last in s.flapping.slow:
            ax.axvspan(first - 0.5, last + 0.5, color="#ff7f0e", alpha=0.2, lw=0)
    missed = [p.probe for p in s.points if p.median_s is None]
    if missed:
        ax.plot(missed, [0] * len(missed), "x", color="#d62728",
                transform=ax.get_xaxis_transform(), clip_on=False)
    ax.set_xlabel("probe")
    ax.set_ylabel("µs")
    return fig


def render(found: list) -> Section | None:
    """Each watch case's series (watch.history.history, worked out by cli/report.py)."""
    if not found:
        return None
    body = []
    for s in found:
        body.append(figure(figures.png(draw(s)), f"watch {s.watch}: {s.name} over its probes",
                           f"watch {s.watch}: {s.name}. {CAPTION}"))
        body.append(html_table(Table(VERDICT_HEADER, [(c.family, *c.cells())
                                                      for c in s.claims()], align="lrrrl")))
    return section("history", "A watch over time", *body)
