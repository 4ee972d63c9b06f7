"""What `commscope watch` prints after each probe: one line per case, its median, the
probe's number and its share of the case's expected level, and a line for a probe that
could not run (what stopped it, in health's words) or that began late on the watch's
schedule."""

from __future__ import annotations

from ..store import names
from ..system import units
from .expected import words


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


def case_line(number: int, summary, of=None) -> str:
    """One case of a probe: its name, process count, parameters and time, and `of`, its
    share of the expected level (stats/summary.OfExpected), where one is expected."""
    params = " ".join(f"{k}={v}" for k, v in sorted((summary.params or {}).items()))
    what = " ".join(filter(None, (names.case(summary.kernel, summary.send_mode, summary.bytes),
                                  f"np{summary.ranks}", params)))
    median = f"{units.us(summary.median_s)} us" if summary.median_s is not None \
        else "no figure"
    expected = "" if of is None else f", {words(of)}"
    return f"probe {number}: {what}: time {median}{expected}"


def probe_share(number: int, summary, series: list):
    """The case's share of its expected level at probe `number`, as `results history`
    shows that probe now: the probe's figure over the level of the watch's own probes since
    the last step or segment (the series' expected, this probe in it); None where the
    probe measured none of it or nothing is expected."""
    for s in series:
        same = all(s.ident.get(k) == getattr(summary, k)
                   for k in ("kernel", "send_mode", "bytes", "params", "ranks"))
        point = next((p for p in s.points if p.probe == number and summary.run in p.runs
                      and p.median_s is not None), None) if same else None
        got = None if point is None else s.share(point.median_s)
        if got is not None:
            return got
    return None


def render_probe(number: int, summaries: list, series: list = ()) -> str:
    """Every case the probe measured, one line each, against `series` (judge.watch.history
    of the watch) where given."""
    return "\n".join(case_line(number, s, probe_share(number, s, series))
                      for s in summaries)


def probe_json(probe, summaries: list, series: list) -> dict:
    """One probe as `watch --json` lists it (watch:1): its number, time, what stopped it,
    slots missed before it, its runs, and each case's median and share of expected."""
    return {"probe": probe.number, "took_s": probe.took_s, "fault": probe.word,
            "missed": probe.missed, "runs": [r.run_id for r in probe.runs
                                             if r.run_id is not None],
            "cases": [{"kernel": s.kernel, "send_mode": s.send_mode, "bytes": s.bytes,
                       "ranks": s.ranks, "params": s.params or {}, "median_s": s.median_s,
                       "of_expected": _ratio(probe_share(probe.number, s, series))}
                      for s in summaries]}


def _ratio(of) -> dict | None:
    """watch:1's of_expected: the ratio and its interval."""
    return None if of is None else {"ratio": of.ratio,
                                    "ci": None if of.ci is None else list(of.ci)}
