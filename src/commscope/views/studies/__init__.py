"""One-command studies: each seed report's experiment, measured and drawn as the seed drew it.

A study is data: which launches to make (plans, built from the process counts
asked for) and the figure its seed report drew, from the stored runs. The
`commscope study` verb runs the plans, then writes the study's section above
the whole report of its runs. Seeds: ../shared/seeds/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...measure.plan import Plan
from ..report.html import Section
from ...store.store import Store


@dataclass(frozen=True)
class Study:
    name: str
    seeds: str  # which seed reports it reproduces
    summary: str  # one line for --list
    default_np: str
    # (process counts, mpi, max_time=seconds or None: the default) -> launches, each built
    # with plan.plans; with across_hosts, also hosts= (a --hosts spec or None)
    plans: Callable[..., list[Plan]]
    section: Callable[[Store, list[int]], Section]  # the seed's figure, from the stored runs
    across_hosts: bool = False  # a many-rank study, run over hosts where there are some


def studies() -> dict[str, Study]:
    from . import apps, many_rank, point_to_point  # each defines its studies
    found = point_to_point.STUDIES + many_rank.STUDIES + apps.STUDIES
    return {s.name: s for s in found}
