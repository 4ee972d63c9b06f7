"""`commscope health --screen` runs: the faults and suspects with the drain list, and
each node's interval look by look against the rounds run, narrowing until the node is
named or cleared (docs/health.md, "The screen")."""

from __future__ import annotations

from ..screen import drain_line, render_suspects
from . import figures
from .html import Section, el, figure, section

MARK = "#d62728"
SHOWN = 24  # nodes drawn: the named, then those tested longest


def _intervals(s, names: list[str]) -> bytes:
    """Each shown node's interval (bandwidth ratio to the typical node) at each look, by
    the rounds run then; the threshold as a line; named nodes in red."""
    tested: dict[int, list[tuple[int, tuple[float, float]]]] = {}
    for look in s.history:
        for x, ci in look["ci"].items():
            tested.setdefault(x, []).append((look["rounds"], ci))
    order = sorted(tested, key=lambda x: (x not in s.named, -len(tested[x]), x))[:SHOWN]
    fig, axes = figures.new(1, 1, width=10.0, row_height=3.6)
    ax = axes[0][0]
    for i, x in enumerate(order):
        for rounds, (low, high) in tested[x]:
            offset = rounds + (i - len(order) / 2) * 0.02
            ax.plot([offset, offset], [low, min(high, 2.0)],
                    color=MARK if x in s.named else figures.color(i % 10), lw=1.5)
        last_rounds, (low, high) = tested[x][-1]
        ax.annotate(names[x], (last_rounds, min(high, 2.0)), fontsize=6)
    ax.axhline(1 - s.threshold, color="0.4", lw=0.8, ls="--")
    ax.set_xlabel("rounds run at the look")
    ax.set_ylabel("bandwidth over the typical node's")
    return figures.png(fig)


def _run(run_id: int, s, names: list[str]) -> list:
    looks = ", ".join(f"after {h['rounds']} rounds {h['family']} tested" for h in s.history)
    body = [el("h3", f"Run {run_id}: screen of {s.nodes} nodes, {s.rounds} rounds"),
            el("pre", "\n".join(render_suspects(s, names) + [drain_line(s, names)])),
            el("p", f"Looks: {looks or 'none (fewer than 3 rounds finished)'}.")]
    if s.history:
        body.append(figure(_intervals(s, names), "each node's interval by rounds run",
                           "Each tested node's 95% interval of its bandwidth over the typical "
                           "node's, at each look, by the rounds run then (named nodes red; "
                           f"the {SHOWN} named or tested longest); the dashed line is the "
                           "threshold. A node is named once its interval's adjusted test "
                           "puts it below the line, cleared once above."))
    return body


def render_runs(screens: dict[int, tuple]) -> Section | None:
    """The section of the screen runs (preflight.replay), by run id (None: none)."""
    body = []
    for run_id, (s, names, _) in screens.items():
        body += _run(run_id, s, names)
    return section("screen", "Node screen (faults, suspects, intervals by round)", *body) \
        if body else None
