"""The HTML report: pure functions from stored runs to one self-contained page.

Each section is a module with `render(data, ...) -> Section | None` (None: the
runs have nothing for it). Figures are PNGs embedded as data URIs and the CSS
is inline, so the file opens anywhere without network access. See
docs/report.md for what each section shows.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone

from ...system.kernels import MEANINGS
from . import (advection, ceiling, congestion, distributions, findings, guidelines, health,
               imported, launches, message_models, profile, provenance, ranks, scaling,
               screen, size, skew, tune, watch)
from .data import ReportData
from .html import Section, contents, el, join, page as html_page


def page(data: ReportData, path, chosen: str, first: tuple[Section, ...] = ()) -> str:
    """The report of data's runs (cli/report.py works out every result it shows): the
    findings, then one group of sections per kernel, then provenance and warnings for all;
    `chosen` says how the runs were chosen; `first`: sections to put before everything (a
    study's own figure). It draws what it is given."""
    whole = set(data.healths) | set(data.screens) | {
        r.id for r in data.runs if r.row.kernel in ("congestion", "profile")}
    kernels = dict.fromkeys(r.row.kernel for r in data.runs if r.id not in whole)
    groups = [_kernel(kernel, dataclasses.replace(
        data, runs=[r for r in data.runs if r.row.kernel == kernel])) for kernel in kernels]
    sections = [*filter(None, [health.render_runs(data.healths),
                               screen.render_runs(data.screens),
                               congestion.render(data.congestion),
                               profile.render(data.profiles), watch.render(data.watches)]),
                *(g for g in groups if g.parts or g.body), provenance.render(data)]
    made = datetime.now(timezone.utc).isoformat(timespec="seconds")
    intro = el("p", f"Runs {', '.join(str(r.id) for r in data.runs)} ({chosen}) from ",
               el("code", str(path)), f"; made {made}. Times are seconds inside and "
               "shown in µs or ms; MB = 10^6 bytes. How to read each section: docs/report.md.")
    box = findings.render(data)
    # a study's own figure answers its question: it opens the page, the findings next
    return html_page("commscope report", [*(s.html() for s in first),
                                          *([box.html()] if box else []), intro,
                                          provenance.overview(data), contents([*first, *sections]),
                                          *(s.html() for s in sections)])


def _kernel(kernel: str, data: ReportData) -> Section:
    """One kernel's sections, from its runs only."""
    runs = ", ".join(str(r.id) for r in data.runs)
    title = f"{kernel} (run{'s' if len(data.runs) > 1 else ''} {runs})"
    if kernel not in MEANINGS:  # imported from a tool whose operation commscope lacks
        return Section(f"kernel-{kernel}", title, el("p", "Imported figures of an operation "
                       "commscope does not measure."), (imported.render(data).within(kernel),))
    parts = [size.render(data), launches.render(data), distributions.render(data),
             ranks.render(data), scaling.render(data), advection.render(data),
             ceiling.render(data), message_models.render(data), imported.render(data),
             guidelines.render(data), tune.render(data), skew.render(data)]
    return Section(f"kernel-{kernel}", title, join(()),
                   tuple(p.within(kernel) for p in parts if p))
