"""Launch medians against message size: one dot per launch (one mpirun) of every case,
coloured by the segment of the configuration's fit its size lies in, so that regimes show
at a glance; a launch far from the others at its size is drawn as a black cross and named
under the figure.

Far: its log median lies more than FAR robust SDs from the median of its size's launch
medians (at least MIN_LAUNCHES of them). The SD is that of the *other* launches, pooled
over the sizes of the fit's segment the size lies in: the median of their pairwise
differences of log medians, each size's pairs, over sqrt(2) Phi^-1(3/4) (the median of
|X - Y| for X, Y independent standard normals). Leaving the launch out keeps a launch
that is slow at every size out of its own yardstick (with 3 launches, a MAD pooled over
all three marked a launch 7 SDs slower at every size at 15% of its sizes); pairwise
differences need no centre, so their median is consistent for any number of launches;
and launches vary more in one protocol than in another (the golden store's pingpong
launches span 1.2% at 8 B and 14% at 1 KiB), which one pool over all sizes takes for far
launches (22% of dots marked where 8 sizes varied 25x as much as 8 others, 3% pooled by
segment). On simulated normal log medians (tests/test_report.py repeats it), of pools of
23 sizes: quiet launches' dots marked at 1.5% with 3 launches, 0.7% with 5, 0.4% with 10
(with 3 launches, 2.2% in pools of 12 sizes, 8% in pools of 3); a launch 7 SDs slower at
every size marked at 99% of its sizes with 3 launches.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ...store.cases import Case
from ...models.groups import GroupFit, summary
from ...system.sizes import format_bytes
from ...system.units import US_PER_S
from . import figures
from .html import Html, el, figure

FAR = 3.0  # robust SDs from the size's median launch
MIN_LAUNCHES = 3  # of two launches at a size, neither is the odd one
PAIR_MEDIAN = math.sqrt(2) * 0.6744897501960817  # median |X - Y|, X, Y iid N(0, 1)
FAR_GID = "far-launch"  # the gid of the crosses, for tests
SPREAD_OCTAVES = 0.3  # a size's launches side by side over this much of the size axis

Launch = tuple[int, "int | None"]  # (run, launch number; None before runs had launches)


def launch_medians(cases: list[Case]) -> dict[Launch, dict[int, float]]:
    """Each launch's median of the kernel's latency at each size (as summary computes a
    launch median); cases without valid samples, and zero medians (no log), left out."""
    out: dict[Launch, dict[int, float]] = {}
    for c in cases:
        if c.valid_samples.size:
            m = float(np.median(c.latency_s))
            if m > 0:
                out.setdefault((c.run_id, c.launch), {})[c.bytes] = m
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)))


def far(medians: dict[Launch, dict[int, float]],
        starts: list[int] | None = None) -> dict[tuple[Launch, int], float]:
    """(launch, size) -> its median over the size's median launch, for each launch median
    FAR robust SDs or more from it (the SD of the other launches at the sizes of its
    segment, module docstring); `starts`: each segment's first size (None: one pool)."""
    sizes = sorted({b for m in medians.values() for b in m})
    cut = np.searchsorted(np.array(starts or [0]), sizes, side="right")
    out = {}
    for segment in dict.fromkeys(cut):
        out.update(_far_within(medians, [b for b, c in zip(sizes, cut) if c == segment]))
    return out


def _far_within(medians: dict[Launch, dict[int, float]],
                sizes: list[int]) -> dict[tuple[Launch, int], float]:
    """far() over these sizes, their pairs the yardstick."""
    launches = list(medians)
    logs = np.array([[math.log(medians[k][b]) if b in medians[k] else np.nan
                      for k in launches] for b in sizes]).reshape(len(sizes), len(launches))
    out = {}
    for i, k in enumerate(launches):
        others = [j for j in range(len(launches)) if j != i]
        pairs = np.abs(np.concatenate([logs[:, a] - logs[:, b]
                                       for a, b in itertools.combinations(others, 2)]
                                      or [np.empty(0)]))
        pairs = pairs[np.isfinite(pairs)]
        sd = float(np.median(pairs)) / PAIR_MEDIAN if pairs.size else 0.0
        if sd <= 0:  # the others never differ here: no yardstick
            continue
        for row, b in enumerate(sizes):
            present = logs[row][np.isfinite(logs[row])]
            if present.size < MIN_LAUNCHES or not np.isfinite(logs[row, i]):
                continue
            off = logs[row, i] - float(np.median(present))
            if abs(off) > FAR * sd:
                out[(k, b)] = math.exp(off)
    return out


def _segments(fit: GroupFit | None) -> list[dict]:
    """The fit's segments (models.groups.summary), none without a fit."""
    return summary(fit)["segments"] if fit is not None and fit.fit is not None else []


def _segment_of(fit: GroupFit | None, nbytes: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Each size's segment index, and each segment's legend label."""
    segments = _segments(fit)
    if not segments:
        return np.zeros(nbytes.size, dtype=int), ["no fit" if fit else "launch medians"]
    starts = np.array([s["from_bytes"] for s in segments])
    which = np.clip(np.searchsorted(starts, nbytes, side="right") - 1, 0, None)
    labels = [("the Hockney line" if len(segments) == 1 else f"segment {i}")
              + f": {format_bytes(s['from_bytes'])} to {format_bytes(s['to_bytes'])}"
              for i, s in enumerate(segments, 1)]
    return which, labels


@dataclass(frozen=True)
class Mode:
    """One send mode's launches: its name, each launch's medians by size, those far from
    the others, and its fit."""
    name: str
    medians: dict[Launch, dict[int, float]]
    marked: dict[tuple[Launch, int], float]
    fit: GroupFit | None


def modes(named: list[tuple[str, list[Case], GroupFit | None]]) -> list[Mode]:
    """Each (name, cases, fit) of one configuration's send modes as a Mode."""
    out = []
    for name, cases, fit in named:
        medians = launch_medians(cases)
        starts = [s["from_bytes"] for s in _segments(fit)] or None
        out.append(Mode(name, medians, far(medians, starts), fit))
    return out


def _draw_mode(ax, mode: Mode) -> None:
    launches = list(mode.medians)
    offset = SPREAD_OCTAVES * (np.arange(len(launches)) / max(len(launches) - 1, 1) - 0.5)
    points = np.array([(b, m, offset[i], (k, b) in mode.marked)
                       for i, k in enumerate(launches) for b, m in mode.medians[k].items()
                       if b > 0], dtype=float).reshape(-1, 4)
    x = points[:, 0] * 2.0 ** points[:, 2]  # side by side, launch k always at the same offset
    y = points[:, 1] * US_PER_S
    cross = points[:, 3] > 0
    which, labels = _segment_of(mode.fit, points[:, 0])
    for s, label in enumerate(labels):
        at = (which == s) & ~cross
        ax.plot(x[at], y[at], "o", color=figures.color(s), ms=4, alpha=0.8, label=label)
    if cross.any():
        ax.plot(x[cross], y[cross], "x", color="black", ms=9, mew=2, gid=FAR_GID,
                label=f"over {FAR:g} robust SDs from its size's launches")
    figures.size_axis(ax)
    figures.log_axis(ax, "launch median (µs)")
    ax.legend(title=mode.name, fontsize=7, title_fontsize=8)


def draw(drawn: list[Mode]) -> Figure:
    """One row per send mode of a configuration."""
    fig, axes = figures.new(len(drawn), 1, width=6.5, row_height=3.0)
    for ax, mode in zip(axes[:, 0], drawn):
        _draw_mode(ax, mode)
    return fig


def _named(mode: str, launch: Launch, at: list[tuple[int, float]]) -> str:
    """One launch's far sizes in a few words."""
    who = f"run {launch[0]}" + (f" launch {launch[1]}" if launch[1] is not None else "")
    sizes = [format_bytes(b) for b, _ in at]
    where = ", ".join(sizes) if len(sizes) <= 4 else \
        f"{len(sizes)} sizes from {sizes[0]} to {sizes[-1]}"
    ratios = [r for _, r in at]
    times = f"{min(ratios):.2f}x" + (f" to {max(ratios):.2f}x" if len(ratios) > 1 else "")
    return f"{mode} {who} at {where}: {times} the median launch there"


def far_text(drawn: list[Mode]) -> str | None:
    """The launches drawn as crosses, by mode and launch; None where there are none."""
    parts = []
    for mode in drawn:
        by_launch: dict[Launch, list[tuple[int, float]]] = {}
        for (launch, nbytes), ratio in mode.marked.items():  # by launch, then size
            by_launch.setdefault(launch, []).append((nbytes, ratio))
        parts += [_named(mode.name, k, at) for k, at in by_launch.items()]
    return "Far from the other launches: " + "; ".join(parts) + "." if parts else None


CAPTION = ("Each launch's median of the kernel's latency (one dot per launch and size; a "
           "size's launches side by side, each launch at the same place at every size), "
           "coloured by the segment of the fit (commscope fit) the size lies in. A black "
           "cross: a launch whose median lies over 3 robust SDs from the median of its size's "
           "launches (3 or more), the SD that of the other launches' log medians, pooled over "
           "the sizes (docs/report.md). Sizes of 0 B are left off the log axes.")


def _several(mode: Mode) -> bool:
    """Some size measured in two launches or more: else the size figure's dots say it all."""
    return max(Counter(b for m in mode.medians.values() for b in m).values(), default=0) > 1


def render(title: str, named: list[tuple[str, list[Case], GroupFit | None]]) -> Html:
    """The strip plot of one configuration, `named` its send modes (name, cases, fit), and
    the launches it marks; nothing where every size was measured in one launch."""
    drawn = modes(named)
    if not any(_several(m) for m in drawn):
        return Html("")
    note = far_text(drawn)
    return Html(figure(figures.png(draw(drawn)), f"launch medians vs size: {title}", CAPTION)
                + (el("p", note, class_="caption") if note else ""))
