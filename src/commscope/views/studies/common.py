"""What the studies share: plans as `commscope run` would make them, and stored cases by run."""

from __future__ import annotations

import numpy as np

from ...store.cases import Case
from ...system.kernels import catalog
from ...measure.plan import Plan, plans, sampling
from ..report import figures
from ..report.html import Section, figure, section
from ...store.store import Store
from ...stats.summary import case_summary


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
    found = [c for r in run_ids for c in store.cases(r)]
    return [c for c in found if kernel_name is None or c.kernel == kernel_name]


def medians(found: list[Case]) -> tuple[np.ndarray, ...]:
    """Bytes, median latency, its CI bounds (seconds) and bandwidth (MB/s), in size order."""
    rows = sorted(((c.bytes, case_summary(c)) for c in found), key=lambda r: r[0])

    def column(name):
        return np.array([np.nan if s[name] is None else s[name] for _, s in rows], dtype=float)

    return (np.array([b for b, _ in rows], dtype=float), column("median_s"), column("ci_low_s"),
            column("ci_high_s"), column("bandwidth_MBps"))


def where(found: list[Case]) -> str:
    """Where the cases ran, for a caption: across which hosts, or on this one."""
    hosts = sorted({c.settings.get("hosts") or "" for c in found} - {""})
    if not hosts:
        return " All ranks ran on one host."
    return f" Ranks ran across the hosts {'; '.join(hosts)}: messages crossed their links."


def study_section(title: str, fig, alt: str, caption: str) -> Section:
    """The study's own part of the report: the seed's figure, first in the page."""
    return section("study", f"Study: {title}", figure(figures.png(fig), alt, caption))
