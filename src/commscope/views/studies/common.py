"""What the studies share: plans as `commscope run` would make them, and stored cases by run."""

from __future__ import annotations

import numpy as np

from ...store.cases import Case
from ...system.kernels import catalog
from ...measure.plan import Plan, plans, sampling
from ..report import figures
from ..report.html import Section, figure, section
from ...store.store import Store
from ...figures.read import measured
from ...stats.summary import CaseSummary


def plan(mpi, kernel: str, ranks: int, sizes=None, modes: str | None = None, params=None,
         iters: int | None = None, max_time: float | None = None, app: bool = False,
         **placement) -> Plan:
    """A checked plan with commscope's defaults (plan.DEFAULT_PRECISION and
    DEFAULT_MAX_TIME; max_time None: the default), as `commscope run` makes it from the
    same values (plan.plans)."""
    (found,) = plans(catalog(mpi), mpi, kernel=kernel, np=ranks, sizes=sizes, modes=modes,
                     params=params, sampling=sampling(iters=iters, max_time=max_time),
                     app=app, **placement)
    return found


def cases(store: Store, run_ids: list[int], kernel_name: str | None = None) -> list[Case]:
    """The runs' cases, each with its summary as `results show RUN` gives it (`summary`)."""
    found = [c for r in run_ids for c in store.cases(r)]
    return [c for c in found if kernel_name is None or c.kernel == kernel_name]


def figures_of(store: Store, run_ids: list[int]) -> dict[int, CaseSummary]:
    """Case id -> its case's summary, run by run, as `results show RUN` gives it."""
    return {c.id: s for r in run_ids for cases, s in measured(store, [r]) for c in cases}


def once(found: list[Case], figure: dict[int, CaseSummary]) -> list[CaseSummary]:
    """The summaries of these cases, one each, in order."""
    return list({id(figure[c.id]): figure[c.id] for c in found}.values())


def medians(found: list[Case], figure: dict[int, CaseSummary]) -> tuple[np.ndarray, ...]:
    """Bytes, time, its CI bounds (seconds) and bandwidth (MB/s) of each case, in size
    order, from `figure` (figures_of)."""
    rows = sorted(once(found, figure), key=lambda s: s.bytes)

    def column(name):
        return np.array([np.nan if getattr(s, name) is None else getattr(s, name)
                         for s in rows], dtype=float)

    return (np.array([s.bytes for s in rows], dtype=float), column("median_s"),
            column("ci_low_s"), column("ci_high_s"), column("bandwidth_MBps"))


def where(found: list[Case]) -> str:
    """Where the cases ran, for a caption: across which hosts, or on this one."""
    hosts = sorted({c.settings.get("hosts") or "" for c in found} - {""})
    if not hosts:
        return " All ranks ran on one host."
    return f" Ranks ran across the hosts {'; '.join(hosts)}: messages crossed their links."


def study_section(title: str, fig, alt: str, caption: str) -> Section:
    """The study's own part of the report: the seed's figure, first in the page."""
    return section("study", f"Study: {title}", figure(figures.png(fig), alt, caption))
