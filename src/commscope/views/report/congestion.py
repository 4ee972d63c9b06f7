"""`commscope congestion` runs: each command's canaries with their congestion impact
factors and intervals, the verdicts, and the aggressors' load beside them
(docs/under-load.md)."""

from __future__ import annotations

from ..congestion import table
from .html import Section, el, section
from .html import table as html_table


def render(found: list) -> Section | None:
    """Each congestion command as cli/report.py judged it: (command, run ids, its verdict
    parameters, the aggressors' pattern, the judged canaries)."""
    if not found:
        return None
    body = []
    for command, run_ids, verdict, pattern, judged in found:
        title = (f"runs {', '.join(map(str, run_ids))}: {verdict.aggressors} {pattern} "
                 f"aggressor group(s){', placebo' if verdict.placebo else ''}")
        body += [el("p", el("code", " ".join(command))),
                 html_table(table(judged, title))]
    return section("congestion", "Congestion", *body)
