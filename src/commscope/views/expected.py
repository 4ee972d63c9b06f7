""""Is this normal?" for the cases a command measured (`run`, `sweep`, `health`): each
case's figure as a share of its expected level (judge/watch.py's expected_for and
of_expected), "130% of expected (126% to 134%)", and its JSON item {ratio, ci, source}
(docs/watch.md, "Is this normal?")."""

from __future__ import annotations

import math

import numpy as np

from ..judge.watch import expected_for, of_expected
from ..stats.results import measured
from ..store.cases import Case
from ..store.store import Store
from ..system import units


def figure_s(cases: list[Case], summary: dict) -> float | None:
    """The case's figure in this command, as a watch's probe takes it: the launches left
    out in another state or stalled (the summary's other_state) dropped, the mean log
    median of the others; so one launch beside another job moves no share."""
    out = {o["launch"] for o in summary.get("other_state") or ()}
    medians = [float(np.median(c.latency_s)) for c in cases
               if c.launch not in out and c.valid_samples.size]
    medians = [m for m in medians if m > 0]
    return math.exp(float(np.mean(np.log(medians)))) if medians else None


def against(reference: Store, cases: list[Case], summary: dict,
            fleet: bool = False) -> dict | None:
    """The case against its expected level in `reference` (the results file it was
    stored in, its own run left out; `fleet`: another machine's file, `--expect`):
    {ratio, ci (None where the level has no band), source}; None where no level is
    expected (no history, no model of other runs) or the case has no figure."""
    figure = figure_s(cases, summary)
    if figure is None:
        return None
    # the copy ceiling, a floor, is run's own column (`of ceiling`), not an expectation
    expected = expected_for(reference, cases[0], fleet=fleet, ceiling=False)
    got = of_expected(figure, expected)
    if got is None:
        return None
    ratio, ci = got
    return {"ratio": ratio, "ci": None if ci is None else list(ci), "source": expected.source}


def measured_against(store: Store, run_id: int, reference: Store | None = None,
                     fleet: bool = False) -> list[dict]:
    """Each case of a run against its expected level (in `reference`, else the run's own
    results file), as health's JSON lists them: kernel, bytes, params, figure_s and
    of_expected (against's)."""
    return [{"kernel": s["kernel"], "bytes": s["bytes"], "params": s["params"],
             "figure_s": figure_s(cases, s),
             "of_expected": against(reference or store, cases, s, fleet)}
            for cases, s in measured(store, [run_id])]


def share(of: dict | None, short: bool = False) -> str:
    """"130% (126% to 134%)", or `short` for a table's cell, "130% (126-134)"; "130%" where
    the level has no band; "-" with none."""
    if of is None:
        return units.MISSING
    text = units.percent(of["ratio"], decimals=0)
    if of["ci"] is None:
        return text
    low, high = (units.percent(x, decimals=0) for x in of["ci"])
    return f"{text} ({low.rstrip('%')}-{high.rstrip('%')})" if short else \
        f"{text} ({low} to {high})"


def words(of: dict) -> str:
    """"130% of expected (126% to 134%)", as a line says it."""
    text, _, interval = share(of).partition(" ")
    return f"{text} of expected" + (f" {interval}" if interval else "")


def sources(labelled: list[tuple[str, dict | None]]) -> str | None:
    """Where each expected level came from, for a table's footer: one source for every
    case said once; else each source with the cases it holds for, the most common one's
    as "the others"."""
    by: dict[str, list[str]] = {}
    for label, of in labelled:
        if of is not None:
            by.setdefault(of["source"], []).append(label)
    if not by:
        return None
    if len(by) == 1 and len(next(iter(by.values()))) == len(labelled):
        return f"expected from {next(iter(by))}"
    most = max(by, key=lambda source: len(by[source]))
    named = [f"{s} ({', '.join(labels)})" for s, labels in by.items() if s != most]
    every = sum(map(len, by.values())) == len(labelled)  # no case without a level
    rest = "the others" if every else ", ".join(by[most])
    return "expected from " + "; ".join(named + [f"{most} ({rest})"])
