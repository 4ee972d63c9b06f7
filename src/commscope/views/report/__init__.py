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
from ...store.store import Store
from . import (advection, ceiling, congestion, distributions, findings, guidelines, health,
               history, imported, launches, message_models, profile, provenance, ranks,
               scaling, screen, size, skew, tune)
from ...health.health import PATTERNS as HEALTH, health_of
from ...health.preflight import replay
from ...stats.results import measured, quality, summaries
from .data import ReportData, load
from .html import Section, contents, el, join, page


def build(store: Store, run_ids: list[int], chosen: str,
          first: tuple[Section, ...] = ()) -> str:
    """The report of `run_ids`: the findings, then one group of sections per kernel, then
    provenance and warnings for all; `chosen` says how the runs were chosen; `first`:
    sections to put before everything (a study's own figure). It reads stored data only."""
    data = load(store, run_ids, HEALTH)
    found = size.fits(size.size_cases(data), data.history)  # p2p fits also give the ring's model
    checks = [r.id for r in data.runs if r.row.kernel in HEALTH]
    # runs a section reads whole, not as a kernel's cases
    loads = [r.id for r in data.runs if r.row.kernel in ("congestion", "profile")]
    screened = {r.id for r in data.runs if r.id in checks
                and r.settings.get("screen")}
    screens = {run_id: replay(store, run_id) for run_id in checks if run_id in screened}
    healths = {run_id: health_of(store, run_id) for run_id in checks if run_id not in screened}
    # the figures `results show` prints, computed as it computes them
    shown = measured(store, [r.id for r in data.runs if r.id not in checks + loads])
    # each run's variance line as `results show` prints it, from that run's cases alone; a
    # health check's matrix, never loaded whole, has none (health prints no such block)
    of_run = {r.id: summaries(store, [r.id]) for r in data.runs if r.id not in checks + loads}
    data = dataclasses.replace(data, quality=quality(store, [r.id for r in data.runs], of_run))
    kernels = dict.fromkeys(r.row.kernel for r in data.runs
                            if r.id not in checks and r.id not in loads)
    groups = [_kernel(kernel, dataclasses.replace(
        data, runs=[r for r in data.runs if r.row.kernel == kernel]), found)
        for kernel in kernels]
    sections = [*filter(None, [health.render_runs(healths), screen.render_runs(screens),
                               congestion.render(store, [r.row for r in data.runs
                                                         if r.id in loads]),
                               profile.render(store, [r.row for r in data.runs
                                                      if r.id in loads]),
                               history.render(store, [r.row for r in data.runs])]),
                *(g for g in groups if g.parts or g.body), provenance.render(data)]
    made = datetime.now(timezone.utc).isoformat(timespec="seconds")
    intro = el("p", f"Runs {', '.join(str(r.id) for r in data.runs)} ({chosen}) from ",
               el("code", str(store.path)), f"; made {made}. Times are seconds inside and "
               "shown in µs or ms; MB = 10^6 bytes. How to read each section: docs/report.md.")
    box = findings.render(data, shown, found, healths)
    # a study's own figure answers its question: it opens the page, the findings next
    return page("commscope report", [*(s.html() for s in first), *([box.html()] if box else []),
                                     intro, provenance.overview(data),
                                     contents([*first, *sections]),
                                     *(s.html() for s in sections)])


def _kernel(kernel: str, data: ReportData, found) -> Section:
    """One kernel's sections, from its runs only."""
    runs = ", ".join(str(r.id) for r in data.runs)
    title = f"{kernel} (run{'s' if len(data.runs) > 1 else ''} {runs})"
    if kernel not in MEANINGS:  # imported from a tool whose operation commscope lacks
        return Section(f"kernel-{kernel}", title, el("p", "Imported figures of an operation "
                       "commscope does not measure."), (imported.render(data).within(kernel),))
    parts = [size.render(data, found), launches.render(data), distributions.render(data),
             ranks.render(data), scaling.render(data, found), advection.render(data),
             ceiling.render(data), message_models.render(data), imported.render(data),
             guidelines.render(data), tune.render(data), skew.render(data)]
    return Section(f"kernel-{kernel}", title, join(()),
                   tuple(p.within(kernel) for p in parts if p))
