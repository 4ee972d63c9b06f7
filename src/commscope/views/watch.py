"""What `commscope watch` prints after each probe: one line per case, its median and the
probe's number, and a line for a probe that could not run (what stopped it, in health's
words) or that began late on the watch's schedule."""

from __future__ import annotations

from ..store import names
from ..system import units


def probe_header(number: int, took_s: float, word: str | None, missed: int,
                 every_s: float) -> list[str]:
    """The probe's own lines: slots of the schedule it missed, and what stopped it."""
    lines = []
    if missed:
        lines.append(f"probe {number}: {missed} slot{'s' * (missed > 1)} of --every "
                     f"{every_s:g}s skipped: the probe before ran past it")
    if word:
        lines.append(f"probe {number}: {word} after {units.seconds(took_s)} s; stored as such "
                     "(`commscope results show` names the launch)")
    return lines


def case_line(number: int, summary: dict) -> str:
    """One case of a probe: its name, process count, parameters and median."""
    params = " ".join(f"{k}={v}" for k, v in sorted((summary.get("params") or {}).items()))
    what = " ".join(filter(None, (names.case(summary["kernel"], summary.get("send_mode"),
                                             summary["bytes"]),
                                  f"np{summary['ranks']}", params)))
    median = f"{units.us(summary['median_s'])} µs" if summary.get("median_s") is not None \
        else "no figure"
    return f"probe {number}: {what}: median {median}"


def render_probe(number: int, summaries: list[dict]) -> str:
    """Every case the probe measured, one line each."""
    return "\n".join(case_line(number, s) for s in summaries)
