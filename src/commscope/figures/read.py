"""The figures of stored runs: each case over all its launches (stats/summary.CaseSummary),
with the history that gives it the variance between commands (replication.py), the
commands of the same configuration stored before it. Only earlier commands: a run's
figure, and every verdict read from it, is the same whenever it is read again."""

from __future__ import annotations

import os

import numpy as np

from ..stats import skew
from ..stats.advice import block, options, variance_lines
from ..stats.replication import CommandRatio, History, command_ratios, history
from ..stats.states import screen
from ..stats.summary import CaseSummary, combined_summary, launch_spreads
from ..store import names
from ..store.cases import Case, grouped, identity
from ..store.store import Store

# What a summary's cases share: the identity with the MPI and the run's labels, so runs of
# two libraries or two builds are never one figure.
SAME = {"mpi": True, "labels": True}


def case_history(store: Store, cases: list[Case], level: bool = False) -> History | None:
    """The between-launch and between-command variances of these cases' case from the
    launches earlier runs made of it (stored before the latest of these cases' runs, none
    of them) on the same hosts with the same MPI and configuration (cases.identity with
    mpi, which holds the library's own settings, and the same `run --info` labels),
    learned robustly from every one of them (replication.history), so a results file that
    holds a regression does not blind the comparisons after it (docs/compare.md).
    `level`: say which of two levels these cases' median is in."""
    first = cases[0]
    mine = {c.run_id for c in cases}
    same = identity(first, mpi=True)
    labels = first.settings.get("info")
    groups: dict[tuple, list[float]] = {}
    for c in store.same_cases(first.kernel, first.send_mode, first.bytes, first.ranks,
                              max(mine)):
        if c.run_id in mine or c.hosts != first.hosts \
                or not c.valid_samples.size or identity(c, mpi=True) != same \
                or c.settings.get("info") != labels:
            continue
        # One command's launches: a run's, or an old sweep's (its launches were runs).
        command = ("sweep", c.sweep_id) if c.sweep_id is not None else ("run", c.run_id)
        groups.setdefault(command, []).append(float(np.median(c.latency_s)))
    medians = [float(np.median(c.latency_s)) for c in cases if level and c.valid_samples.size]
    return history(list(groups.values()), float(np.mean(np.log(medians))) if medians else None)


def histories(store: Store, groups: list[list[Case]]
              ) -> tuple[list[History | None], list[CommandRatio | None]]:
    """Each group's (one case's launches') history, and how much commands differ on its
    hosts with its MPI, learned from the histories of every group there
    (replication.command_ratios)."""
    pasts = [case_history(store, found, level=True) for found in groups]
    ratios: list[CommandRatio | None] = [None] * len(groups)
    where = [(found[0].hosts, found[0].mpi) for found in groups]
    for w in set(where):
        mine = [i for i, v in enumerate(where) if v == w]
        for i, r in zip(mine, command_ratios([pasts[i] for i in mine],
                                             [groups[i][0].bytes for i in mine])):
            ratios[i] = r
    return pasts, ratios


def measured(store: Store, run_ids: list[int]) -> list[tuple[list[Case], CaseSummary]]:
    """Each case of the runs: its stored cases (one per launch) and its summary, launches
    combined (summary.combined_summary) over those its run's screen keeps, with the flags
    stored for it; a case measured in one launch takes its history's between-launch
    variance, if any."""
    flags: dict[int, list[str]] = {}
    for run_id in run_ids:
        for w in store.warnings(run_id):
            flags.setdefault(w.case_id, []).append(w.kind)
    return summarised([c for run_id in run_ids for c in store.cases(run_id)],
                      lambda kept: histories(store, kept), flags)


def summarised(cases: list[Case], histories_of=None, flags: dict | None = None
               ) -> list[tuple[list[Case], CaseSummary]]:
    """measured's summaries of these cases: grouped by case (SAME), each group's launches
    in another state left out (states.screen), then combined with the history
    `histories_of(kept groups)` gives (None: without one) and each case's `flags`."""
    groups = [found for _, found in sorted(grouped(cases, **SAME), key=lambda g: _order(g[1][0]))]
    kept, odd = screen(groups)  # launches in another state: named, left out (states.py)
    pasts, ratios = histories_of(kept) if histories_of else ([None] * len(kept),) * 2
    return [(found, combined_summary(mine, past, spread, ratio, left_out)
             .with_flags((flags or {}).get(found[0].id, ())))
            for found, mine, left_out, spread, past, ratio
            in zip(groups, kept, odd, launch_spreads(kept), pasts, ratios)]


def summaries(store: Store, run_ids: list[int]) -> list[CaseSummary]:
    return [s for _, s in measured(store, run_ids)]


def skews(store: Store, found: list[tuple[list[Case], CaseSummary]]
          ) -> list[tuple[CaseSummary, list[skew.Skew]]]:
    """Each --late case of `found` (measured's): its summary (the punctual samples') and
    its delays' skew figures (skew.skews)."""
    return [(summary, skew.skews(cases, store.rank_samples))
            for cases, summary in found if "late" in cases[0].extra]


def exported(store: Store, run_ids: list[int]) -> list[dict]:
    """Each (run, case) with what `results export --format` gives beside its summary: the
    run's start, MPI library, hosts, oversubscription and `run --info` labels, and the
    case's identity (cases.identity)."""
    rows = []
    for run_id in run_ids:
        row = store.run(run_id)
        rows += [{"run": run_id, "started_utc": row.started_utc,
                  "mpi": names.library(row.mpi_version), "hosts": row.context.get("hosts", []),
                  "oversubscribed": row.oversubscribed, "info": row.settings.get("info", {}),
                  "identity": identity(found[0]), "case": summary.as_dict()}
                 for found, summary in measured(store, [run_id])]
    return rows


def quality(store: Store, run_ids: list[int],
            summaries_of: dict[int, list[CaseSummary]] | None = None) -> list[str]:
    """The quality block: each run's variance lines (advice.variance_lines) from the case
    summaries its caller already computed (`summaries_of`: run id -> summaries; a run
    without them, such as a health check's matrix, gets none), then the runs' stored
    flags (advice.block), cases named with their process count."""
    found, lines = [], []
    for run_id in run_ids:
        cases = store.case_labels(run_id)
        row = store.run(run_id)
        settings = options(row.settings, row.context or None, row.oversubscribed, row.family)
        lines += variance_lines(run_id, (summaries_of or {}).get(run_id, []), settings)
        for w in store.warnings(run_id):
            c = cases.get(w.case_id)
            name = f"{names.case(*c[:3])} np{c[3]}" if c else None
            found.append((w, name, settings))
    return lines + block(found, os.cpu_count())


def _order(case: Case) -> tuple:
    """Rows as the command asked for them: its runs in order, each mode's sizes, whatever
    order the launches measured them in."""
    modes = case.settings.get("modes") or [None]
    return (case.run_id, modes.index(case.send_mode) if case.send_mode in modes else 0,
            case.bytes, case.launched_ranks)
