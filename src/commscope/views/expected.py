""""Is this normal?" as shown: a case's figure as a share of its expected level
(watch/history.py's against and of_expected give it, stats/summary.OfExpected), "130% of
expected (126% to 134%)" (docs/watch.md, "Is this normal?")."""

from __future__ import annotations

from ..system import units


def share(of, short: bool = False) -> str:
    """"130% (126% to 134%)", or `short` for a table's cell, "130% (126-134)"; "130%" where
    the level has no band; "-" with none."""
    if of is None:
        return units.MISSING
    text = units.percent(of.ratio, decimals=0)
    if of.ci is None:
        return text
    low, high = (units.percent(x, decimals=0) for x in of.ci)
    return f"{text} ({low.rstrip('%')}-{high.rstrip('%')})" if short else \
        f"{text} ({low} to {high})"


def words(of) -> str:
    """"130% of expected (126% to 134%)", as a line says it."""
    text, _, interval = share(of).partition(" ")
    return f"{text} of expected" + (f" {interval}" if interval else "")


def sources(labelled: list[tuple[str, object]]) -> str | None:
    """Where each expected level came from, for a table's footer: one source for every
    case said once; else each source with the cases it holds for, the most common one's
    as "the others"."""
    by: dict[str, list[str]] = {}
    for label, of in labelled:
        if of is not None:
            by.setdefault(of.source, []).append(label)
    if not by:
        return None
    if len(by) == 1 and len(next(iter(by.values()))) == len(labelled):
        return f"expected from {next(iter(by))}"
    most = max(by, key=lambda source: len(by[source]))
    named = [f"{s} ({', '.join(labels)})" for s, labels in by.items() if s != most]
    every = sum(map(len, by.values())) == len(labelled)  # no case without a level
    rest = "the others" if every else ", ".join(by[most])
    return "expected from " + "; ".join(named + [f"{most} ({rest})"])
