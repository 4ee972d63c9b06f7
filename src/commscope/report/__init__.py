"""The HTML report: pure functions from stored runs to one self-contained page.

Each section is a module with `render(data, ...) -> Section | None` (None: the
runs have nothing for it). Figures are PNGs embedded as data URIs and the CSS
is inline, so the file opens anywhere without network access. See
docs/report.md for what each section shows.
"""

from __future__ import annotations

from datetime import datetime, timezone

from ..store import Store
from . import advection, distributions, launches, memcpy, provenance, ranks, scaling, size
from .data import load
from .html import Section, contents, el, page


def build(store: Store, run_ids: list[int], chosen: str,
          first: tuple[Section, ...] = ()) -> str:
    """The report of `run_ids`; `chosen` says how they were chosen; `first`: sections to
    put before the rest (a study's own figure). It reads stored data only."""
    data = load(store, run_ids)
    found = size.fits(size.size_cases(data))  # the p2p fits also give the ring's model
    parts = [size.render(data, found), launches.render(data), distributions.render(data),
             ranks.render(data),
             scaling.render(data, found), advection.render(data), memcpy.render(data),
             provenance.render(data)]
    sections = [*first, *(p for p in parts if p is not None)]
    made = datetime.now(timezone.utc).isoformat(timespec="seconds")
    intro = el("p", f"Runs {', '.join(str(r.id) for r in data.runs)} ({chosen}) from ",
               el("code", str(store.path)), f"; made {made}. Times are seconds inside and "
               "shown in µs or ms; MB = 10^6 bytes. How to read each section: docs/report.md.")
    return page("commscope report", [intro, provenance.overview(data), contents(sections),
                                     *(s.html() for s in sections)])
