"""A watch's cases over time, as `results history` prints them: one line per probe with
its figure, its share of the expected level and what happened there (a step began or was
found, a segment started, a slow stay of a flapping case, a probe that could not run),
then the case's verdicts in the verdict core's table; and the same as JSON (history:1)."""

from __future__ import annotations

from ..stats.verdict.claim import Claim
from ..store import names
from ..system import units
from .expected import share
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
        + f", from {e.source}")
    series = Table(("probe", "started (UTC)", "median µs", "launches", "of expected", "marks"),
                   rows, align="rlrrll", rule=True, title=f"watch {s.watch}: {s.name}",
                   footer=expected)
    verdicts = Table(VERDICT_HEADER, [(c.family, *c.cells()) for c in s.claims()],
                     align="lrrrl", footer=_remedies(s.claims()))
    return series.text() + "\n" + verdicts.text()


def _remedies(found: list[Claim]) -> str | None:
    said = list(dict.fromkeys(c.remedy for c in found if c.remedy and c.failing))
    return "\n".join(f"remedy: {r}" for r in said) or None


def as_json(found: list) -> dict:
    """history:1's body."""
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
            "source": e.source}}


def _of(median_s: float | None, s) -> dict | None:
    got = s.share(median_s)
    return None if got is None else {"ratio": got.ratio,
                                     "ci": None if got.ci is None else list(got.ci)}
