"""Imported runs (commscope import): each run's figures exactly as its tool printed them,
with where they came from. They have no samples, so the other sections draw nothing
for them (no band, no distribution)."""

from __future__ import annotations

from ...system.sizes import format_bytes
from ..tables import Table
from .data import ReportData
from .html import Section, el, section, table


def render(data: ReportData) -> Section | None:
    body = []
    for run in data.runs:
        source = run.row.source
        if not source:
            continue
        printed = [c.extra.get("printed", {}) for c in run.cases]
        names = list(dict.fromkeys(k for p in printed for k in p))
        body += [el("h4", f"Run {run.id}: {source['tool']} {source['version']} "
                          f"{source['benchmark']} from ", el("code", source["file"])),
                 el("p", f"{source['metric']}: {source['definition']}."),
                 table(Table(("size", *names), [(format_bytes(c.bytes),
                                                 *(p.get(n, "-") for n in names))
                                                for c, p in zip(run.cases, printed)]))]
    if not body:
        return None
    return section("imported", "Imported figures, as printed", el(
        "p", "No raw samples: no interval, spread or distribution is drawn for these."), *body)
