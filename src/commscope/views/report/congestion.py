"""`commscope congestion` runs: each command's canaries with their congestion impact
factors and intervals, the verdicts, and the aggressors' load beside them
(docs/under-load.md)."""

from __future__ import annotations

from ...judge.congestion import judge
from ...stats.verdict import VerdictSpec
from ...store.rows import RunRow
from ..congestion import table
from .html import Section, el, section
from .html import table as html_table


def commands(rows: list[RunRow]) -> dict[tuple[str, ...], list[int]]:
    """The runs of each `congestion` command (one a canary, one its aggressors alone),
    by the command line that made them."""
    found: dict[tuple[str, ...], list[int]] = {}
    for row in rows:
        spec = VerdictSpec.of(row.settings.get("verdict"))
        if spec and spec.verb == "congestion":
            found.setdefault(tuple(row.command), []).append(row.id)
    return found


def render(store, rows) -> Section | None:
    found = commands(rows)
    if not found:
        return None
    body = []
    for command, run_ids in found.items():
        settings = store.run(run_ids[0]).settings
        pattern = next(v for v in settings["each"]["aggressor"] if v != "none")
        verdict = VerdictSpec.of(settings["verdict"])
        judged = judge(store, run_ids, pattern, verdict.limit)
        title = (f"runs {', '.join(map(str, run_ids))}: {verdict.aggressors} {pattern} "
                 f"aggressor group(s){', placebo' if verdict.placebo else ''}")
        body += [el("p", el("code", " ".join(command))),
                 html_table(table(judged, title))]
    return section("congestion", "Congestion", *body)
