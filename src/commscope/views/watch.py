"""A watch in the terminal (watch/): what `commscope watch` prints after each probe (one
line per case, its time, the probe's number and its share of the case's expected level,
and a line for a probe that could not run, what stopped it in health's words, or that
began late on the watch's schedule), and its cases over time as `results history` prints
them (one line per probe with its figure, its share of the expected level and what
happened there: a step began or was found, a segment started, a slow stay of a flapping
case, a probe that could not run; then the case's verdicts in the verdict core's table),
and the same as JSON (watch:1, history:2)."""

from __future__ import annotations

import math

from ..stats.verdict.claim import Claim
from ..store import names
from ..system import units
from .expected import share, words
from .tables import Table

VERDICT_HEADER = ("verdict on", "ratio", "interval", "p", "word")


def marks(s) -> dict[int, list[str]]:
    """What happened at each probe, by probe number."""
    out: dict[int, list[str]] = {}
    for seg in s.segments[1:]:
        out.setdefault(seg.first_probe, []).append(
            f"new segment ({names.library(seg.mpi)}, hosts {','.join(seg.hosts) or '-'})")
    for step in s.steps:
        c = step.claim
        out.setdefault(step.began, []).append(
            f"{c.word} began: {units.ratio(c.ratio)}x ({c.interval_text()})")
        out.setdefault(step.found, []).append(f"{c.word} found")
    if s.flapping and s.flapping.slow:
        for first, last in s.flapping.slow:
            for p in s.points:
                if first <= p.probe <= last:
                    out.setdefault(p.probe, []).append("slow (flapping)")
    for p in s.points:
        if p.fault:
            out.setdefault(p.probe, []).append(f"not measured: {p.fault}")
    return out


def _share(median_s: float | None, s) -> str:
    return share(s.share(median_s))


def render(found: list) -> str:
    return "\n\n".join(_case(s) for s in found)


def _case(s) -> str:
    at = marks(s)
    rows = [(p.probe, p.started_utc, units.us(p.median_s), len(p.launches_s),
             _share(p.median_s, s), "; ".join(at.get(p.probe, [])))
            for p in s.points]
    e = s.expected
    expected = "expected: none (no history, no model, no ceiling)" if e is None else (
        f"expected: {units.us(e.level_s)} µs"
        + ("" if e.band_s is None else
           f" (95% of probes {units.us(e.band_s[0])} to {units.us(e.band_s[1])} µs)")
        + f", from {e.source}"
        # a flapping case's states are the flapping line's, below: one count of each
        + ("" if s.flapping and s.flapping.claim.failing else units.states(e.states)))
    if e is not None and e.least_step is not None:
        expected += "\n" + (f"a step of {units.ratio(e.least_step)}x or more is found within "
                            "3 probes at these probes' spread" if e.least_step < math.inf else
                            "no step is sure to be found within 3 probes at these probes' "
                            "spread: read it with `commscope compare --live`")
    series = Table(("probe", "started (UTC)", "median µs", "launches", "of expected", "marks"),
                   rows, align="rlrrll", rule=True, title=f"watch {s.watch}: {s.name}",
                   footer=expected)
    verdicts = Table(VERDICT_HEADER, [(c.family, *c.cells()) for c in s.claims()],
                     align="lrrrl", footer="\n".join(filter(None, (
                         _states(s.flapping), _remedies(s.claims())))) or None)
    return series.text() + "\n" + verdicts.text()


def _states(found) -> str | None:
    """A flapping case's two levels and the share of probes in each."""
    if found is None or not found.claim.failing:
        return None
    e = found.claim.evidence
    return (f"flapping between {units.us(e['fast_s'])} µs in {1 - e['slow_share']:.0%} of "
            f"probes and {units.us(e['slow_s'])} µs in {e['slow_share']:.0%}")


def _remedies(found: list[Claim]) -> str | None:
    said = list(dict.fromkeys(c.remedy for c in found if c.remedy and c.failing))
    return "\n".join(f"remedy: {r}" for r in said) or None


def as_json(found: list) -> dict:
    """history:2's body."""
    return {"cases": [_case_json(s) for s in found]}


def _case_json(s) -> dict:
    e = s.expected
    return {
        "watch": s.watch, "case": s.name, "identity": s.ident,
        "probes": [{"probe": p.probe, "started_utc": p.started_utc, "median_s": p.median_s,
                    "launches_s": list(p.launches_s), "of_expected": _of(p.median_s, s),
                    "segment": p.segment, "runs": list(p.runs), "hosts": list(p.hosts),
                    "fault": p.fault} for p in s.points],
        "segments": [{"first_probe": g.first_probe, "mpi": g.mpi, "library": g.library,
                      "hosts": list(g.hosts)} for g in s.segments],
        "steps": [st.claim.as_dict() for st in s.steps],
        "flapping": None if s.flapping is None else {
            **s.flapping.claim.as_dict(), "slow_probes": [list(x) for x in s.flapping.slow]},
        "flapping_within": [c.as_dict() for c in s.within],
        "expected": None if e is None else {
            "level_s": e.level_s, "band_s": None if e.band_s is None else list(e.band_s),
            "source": e.source, "states": [list(x) for x in e.states],
            "least_step": None if e.least_step in (None, math.inf) else e.least_step}}


def _of(median_s: float | None, s) -> dict | None:
    got = s.share(median_s)
    return None if got is None else {"ratio": got.ratio,
                                     "ci": None if got.ci is None else list(got.ci)}


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
    """Every case the probe measured, one line each, against `series` (watch.history.history
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
