"""The findings that open the report: per configuration (as `commscope fit` groups the
cases), the peak bandwidth and where it is reached, the latency at the smallest size,
each with its launch-aware 95% interval as `commscope results show` computes and prints
it (results.measured, the same units), the peak's fraction of the copy ceiling, and the
fitted model in one line; then the verdicts of `check` and `health` runs."""

from __future__ import annotations

from collections import Counter

from .. import cases as identities
from .. import names, units
from ..cases import Case
from ..health import Health
from ..models.groups import GroupFit, configuration, summary
from ..sizes import format_bytes
from ..views.export import metric
from ..views.health import drain_line
from ..views.models import line_cells
from ..views.tables import Table
from . import guidelines
from .data import ReportData, application
from .html import Html, Section, el, section, table
from .size import fit_of

HEADER = ("configuration", "peak MB/s (95% CI)", "of copy ceiling",
          "latency µs (95% CI) at the smallest size", "model (commscope fit)")
CAPTION = ("Medians and 95% intervals of the launches' medians, as ",
           Html("<code>commscope results show</code>"), " prints them (docs/statistics.md); "
           "the bandwidth's interval is the latency's turned over; MB = 10^6 bytes. Of copy "
           "ceiling: the peak over the rate one core copies that size in the same launch "
           "(Bandwidth vs the copy ceiling). Model: the Hockney line t(n) = alpha + n/B over "
           "all sizes, and the sizes where the segments the BIC chose break (Latency and "
           "bandwidth vs message size).")


def _interval(low, high, fmt) -> str:
    return "" if low is None or high is None else f" ({fmt(low)}-{fmt(high)})"


def _peak(shown: list[dict]) -> tuple[str, str]:
    """The highest median bandwidth with its interval and size, and its fraction of the
    copy ceiling; '-' for a kernel without a bandwidth."""
    rated = [s for s in shown if s["bytes"] > 0 and s["bandwidth_MBps"] is not None]
    if not rated:
        return units.MISSING, units.MISSING
    s = max(rated, key=lambda x: x["bandwidth_MBps"])
    rate, low, high = metric(s, "bandwidth")
    return (f"{units.rate(rate, 1)}{_interval(low, high, lambda v: units.rate(v, 1))} "
            f"at {format_bytes(s['bytes'])}",
            units.percent(s.get("ceiling_fraction"), decimals=0))


def _smallest(shown: list[dict]) -> str:
    s = min((x for x in shown if x["median_s"] is not None), key=lambda x: x["bytes"],
            default=None)
    if s is None:
        return units.MISSING
    return (f"{units.us(s['median_s'])}{_interval(s['ci_low_s'], s['ci_high_s'], units.us)} "
            f"at {format_bytes(s['bytes'])}")


def model(g: GroupFit | None) -> str:
    """The fit in one line: t(n) = alpha + n / B (their CIs are in the size section's
    table), and where the BIC chose segments, the sizes they break at."""
    if g is None:
        return units.MISSING
    if g.fit is None:
        return f"no fit: {g.note}"
    s = summary(g)
    rate = f"{units.rate(units.mb_per_s(s['bandwidth_Bps']))} MB/s" \
        if s.get("bandwidth_identifiable", True) else f"B (B {line_cells(s)[1]})"
    breaks = ", ".join(format_bytes(b["bytes"]) for b in s["breakpoints"])
    return (f"t(n) = {units.us(s['alpha_s'])} µs + n / {rate}"
            + (f"; {len(s['segments'])} segments, breaking at {breaks}" if breaks else ""))


def _rows(measured: list[tuple[list[Case], dict]], found) -> list[tuple]:
    """One row per configuration, in order of first appearance; applications left out."""
    groups: dict[str, tuple[dict, list[Case], list[dict]]] = {}
    for found_cases, s in measured:
        if application(found_cases[0]):
            continue
        config = configuration(found_cases[0])
        group = groups.setdefault(identities.key(config), (config, found_cases, []))
        group[2].append(s)
    several_mpi = len({c.get("mpi") for c, _, _ in groups.values()}) > 1
    rows = []
    for config, found_cases, shown in groups.values():
        runs = sorted({r for s in shown for r in s["runs"]})
        name = names.identity(config) + (f", {names.library(config['mpi'])}"
                                         if several_mpi else "")
        rows.append((f"{name} (run{'s' * (len(runs) > 1)} {names.ranges(runs)})",
                     *_peak(shown), _smallest(shown), model(fit_of(found, found_cases[0]))))
    return rows


def _verdicts(data: ReportData, healths: dict[int, Health]) -> list:
    """One line per kernel that `check` judged and per health run."""
    lines = []
    for threshold, judged in guidelines.judged(data):
        kernels = ", ".join(dict.fromkeys(c.evidence["case"].split()[0] for c in judged))
        counts = ", ".join(f"{n} {w}" for w, n in Counter(c.word for c in judged).items())
        lines.append(f"check, {kernels} (threshold {threshold.fraction:.0%}): "
                     f"{len(judged)} verdicts: {counts}")
    for run_id, h in healths.items():
        m = h.matrices
        lines.append(f"health, run {run_id} ({m.pattern} over {len(m.nodes)} nodes): "
                     f"{len(h.suspects)} suspect{'s' * (len(h.suspects) != 1)}; {drain_line(h)}"
                     + (f"; no verdict: {h.note}" if h.note else ""))
    return lines


def render(data: ReportData, measured: list[tuple[list[Case], dict]],
           found: dict[str, GroupFit], healths: dict[int, Health]) -> Section | None:
    """The box; `measured`: results.measured of the runs (health runs left out), `found`:
    the report's fits (size.fits), `healths`: the health runs judged."""
    rows = _rows(measured, found)
    verdicts = _verdicts(data, healths)
    if not rows and not verdicts:
        return None
    body = []
    if rows:
        body += [table(Table(HEADER, rows, align="lrrrl")), el("p", *CAPTION, class_="caption")]
    if verdicts:
        body.append(el("ul", *(el("li", line) for line in verdicts)))
    return section("findings", "Findings", *body)
