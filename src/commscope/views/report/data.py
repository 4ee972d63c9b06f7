"""What the report reads from the store, loaded once: runs, their cases, summaries and warnings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...store import cases as identities
from ...store.cases import Case
from ...store.rows import RunRow, SkipRow, SweepRow, WarningRow
from ...models.groups import CONFIGURATION
from ...stats.replication import History
from ...figures.read import case_history, measured
from ...store.store import Store
from ...stats.summary import CaseSummary
from ...stats.verdict.spec import VerdictSpec, by_spec
from . import figures

# Shown against the process count P: the collectives, and the ring, whose time grows with P.
RING = "ring"


@dataclass(frozen=True)
class RunData:
    row: RunRow
    cases: list[Case]
    warnings: list[WarningRow]
    skips: list[SkipRow]
    sweep: SweepRow | None  # the sweep the run belongs to: name, plan path, ...
    # id -> Store.case_labels' (kernel, send mode, bytes, launched ranks, ranks) of every
    # case, its cases loaded or not
    labels: dict[int, tuple]

    @property
    def id(self) -> int:
        return self.row.id

    @property
    def context(self) -> dict:
        """The native context record; empty when the run stopped before it."""
        return self.row.context

    @property
    def settings(self) -> dict:
        return self.row.settings

    @property
    def command(self) -> list[str]:
        return self.row.command

    @property
    def host(self) -> dict:
        """The launching host's facts measured with the run; empty before schema 4."""
        return self.row.host_facts


@dataclass
class ReportData:
    runs: list[RunData]
    figure: dict[int, CaseSummary]  # case id -> its case's summary, as results show gives it
    rank_samples: Callable[[int], np.ndarray]  # case id -> ranks x n, as store.rank_samples
    mode_color: dict[str | None, str]  # one colour per send mode in every figure
    # a case's earlier commands in the results file (figures.read.case_history), for fits
    history: Callable[[list[Case]], History | None]
    # the results cli/report.py works out, as each verb works out its own: the fits against
    # size (by configuration key), each health and screen run's result, each check
    # command's (threshold, claims), tune's points, each congestion command, each watch's
    # series, each profile priced, and the quality block
    fits: dict = field(default_factory=dict)
    healths: dict = field(default_factory=dict)
    screens: dict = field(default_factory=dict)
    checks: list = field(default_factory=list)
    tunes: list = field(default_factory=list)
    congestion: list = field(default_factory=list)
    watches: list = field(default_factory=list)
    profiles: list = field(default_factory=list)
    quality: list[str] = field(default_factory=list)

    @property
    def cases(self) -> list[Case]:
        return [c for r in self.runs for c in r.cases]


def load(store: Store, run_ids: list[int], matrices: tuple[str, ...] = ()) -> ReportData:
    """The runs; those of the kernels in `matrices` without their cases, which their own
    section reads as a whole (a health check's pairs: report/health.py)."""
    runs = []
    for run_id in dict.fromkeys(run_ids):
        row = store.run(run_id)
        runs.append(RunData(row, [] if row.kernel in matrices else store.cases(run_id),
                            store.warnings(run_id), store.skips(run_id),
                            None if row.sweep_id is None else store.sweep(row.sweep_id),
                            store.case_labels(run_id)))
    found = [c for r in runs for c in r.cases]
    shown = [r.id for r in runs if r.row.kernel not in matrices]
    figure = {c.id: s for cases, s in measured(store, shown) for c in cases}
    return ReportData(runs, figure, store.rank_samples,
                      figures.mode_colors(c.send_mode for c in found),
                      lambda cases: case_history(store, cases))


def by_verdict(data: ReportData, verb: str) -> list[tuple[VerdictSpec, list[RunData]]]:
    """The runs `verb` made, grouped by how their command judged (the verdict parameters
    it stored with them), so the report judges each group as its command did."""
    return by_spec(data.runs, verb)


def shown(data: ReportData) -> list[tuple[list[Case], CaseSummary]]:
    """Each case of the runs and its summary, as `results show` gives them, once each."""
    found: dict[int, tuple[list[Case], CaseSummary]] = {}
    for c in data.cases:
        s = data.figure.get(c.id)
        if s is not None:
            found.setdefault(id(s), ([], s))[0].append(c)
    return list(found.values())


def combined(data: "ReportData", cases: list[Case]) -> list[CaseSummary]:
    """The summaries of these cases as `results show` gives them (data.figure), one each,
    in order."""
    return list({id(s): s for s in (data.figure[c.id] for c in cases)}.values())


def over_ranks(case: Case) -> bool:
    """Shown against P rather than against size."""
    return case.family == "collective" or case.kernel == RING


def application(case: Case) -> bool:
    return case.family == "application"


def grouped(cases: list[Case], send_mode: bool = True,
            ranks: bool = True) -> list[tuple[dict, list[Case]]]:
    """Cases grouped as fits group them (models.groups), less the send mode or the ranks
    (with oversubscription) where a figure puts those on one set of axes."""
    return identities.grouped(cases, **{**CONFIGURATION, "send_mode": send_mode,
                                        "ranks": ranks, "oversubscribed": ranks})
