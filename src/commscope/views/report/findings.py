"""The findings that open the report: per configuration (as `commscope fit` groups the
cases), the peak bandwidth and where it is reached, the latency at the smallest size,
each with its launch-aware 95% interval as `commscope results show` computes and prints
it (figures.read.measured, the same units), the peak's fraction of the copy ceiling, and the
model that describes the configuration: the start-up time of the fit's first segment and
the asymptotic bandwidth of its last, each with the sizes its segment covers; then the
verdicts of `check` and `health` runs."""

from __future__ import annotations

from collections import Counter

import numpy as np

from ...store import cases as identities
from ...store import names
from ...system import units
from ...stats.summary import CaseSummary
from ...store.cases import Case
from ...importers.imported import BANDWIDTH_BYTES
from ...system.kernels import MEANINGS
from ...models.groups import GroupFit, configuration, summary
from ...system.sizes import format_bytes
from ..export import metric
from ..health import drain_line
from ..models import with_ci
from ..tables import Table
from .data import ReportData, application, shown
from .html import Html, Section, el, section, table
from .size import bytes_per_latency, fit_of

HEADER = ("configuration", "peak MB/s (95% CI)", "of copy ceiling",
          "latency µs (95% CI) at the smallest size",
          "start-up alpha µs (95% CI): first segment",
          "asymptotic B MB/s (95% CI): last segment")
CAPTION = ("Medians and 95% intervals of the launches' medians, as ",
           Html("<code>commscope results show</code>"), " prints them (docs/statistics.md); "
           "the bandwidth's interval is the latency's turned over; MB = 10^6 bytes. Of copy "
           "ceiling: the peak over the rate one core copies that size in the same launch "
           "(Bandwidth vs the copy ceiling). Latency: of a collective, at its smallest size "
           "above 0 B (a call on 0 B has nothing to do); a kernel whose figure is a bandwidth "
           "(bw, bibw, mbw_mr) has none, and its time per window slot (one message of a "
           "stream, an inverse message rate) is labelled so. Model: the segments of ",
           Html("<code>commscope fit</code>"), " (t(n) = alpha + n/B each, their number "
           "chosen by the BIC; one segment is the Hockney line): alpha from the segment of "
           "the smallest sizes, B from that of the largest, in the peak's bytes (bibw both "
           "directions, fanin all senders), each with the sizes its segment covers and its "
           "95% bootstrap interval; a figure on its bound is not identifiable (docs/models.md; "
           "every segment is in the table of Latency and bandwidth vs message size).")

def _interval(low, high, fmt) -> str:
    return "" if low is None or high is None else f" ({fmt(low)}-{fmt(high)})"


def figure_is_bandwidth(kernel: str) -> bool:
    """Whether the kernel's own figure is a bandwidth (kernels.Meaning.figure); for an
    imported benchmark commscope has no kernel of, whether the importers take it for a
    bandwidth-only one."""
    if kernel in MEANINGS:
        return MEANINGS[kernel].figure == "bandwidth"
    return kernel in BANDWIDTH_BYTES


def _peak(shown: list[CaseSummary]) -> tuple[str, str]:
    """The highest median bandwidth with its interval and size, and its fraction of the
    copy ceiling; '-' for a kernel without a bandwidth."""
    rated = [s for s in shown if s.bytes > 0 and s.bandwidth_MBps is not None]
    if not rated:
        return units.MISSING, units.MISSING
    s = max(rated, key=lambda x: x.bandwidth_MBps)
    rate, low, high = metric(s.as_dict(), "bandwidth")
    return (f"{units.rate(rate, 1)}{_interval(low, high, lambda v: units.rate(v, 1))} "
            f"at {format_bytes(s.bytes)}",
            units.percent(s.ceiling_fraction, decimals=0))


def _smallest(shown: list[CaseSummary], case: Case, bandwidth_figure: bool) -> str:
    """The median and interval at the smallest size measured: above 0 B for a collective,
    whose call on 0 B has nothing to do (a 0 B allreduce returned in 0.08 µs where 4 B
    took 6.3); for a kernel whose figure is a bandwidth, its time per window slot labelled
    so, or none."""
    timed = [x for x in shown if x.median_s is not None]
    if case.family == "collective":
        timed = [x for x in timed if x.bytes > 0] or timed  # a barrier has only 0 B
    s = min(timed, key=lambda x: x.bytes, default=None)
    if s is None or bandwidth_figure and not s.window:
        return units.MISSING
    text = (f"{units.us(s.median_s)}{_interval(s.ci_low_s, s.ci_high_s, units.us)} "
            f"at {format_bytes(s.bytes)}")
    return f"time per window slot {text}" if bandwidth_figure else text


def _span(segments: list[dict], i: int) -> str:
    """Which sizes segment i covers, and which segment it is."""
    seg = segments[i]
    sizes = f"{format_bytes(seg['from_bytes'])} to {format_bytes(seg['to_bytes'])}"
    if len(segments) == 1:
        return f"the Hockney line, {sizes}"
    return f"segment {i + 1} of {len(segments)}, {sizes}"


def _alpha(line: dict) -> str:
    # alpha >= 0 is a bound of the fit (docs/models.md): at 0 the data would have a negative
    # start-up time, which is no figure (CONTRIBUTING.md).
    if line["alpha_s"] <= 0:
        return "not identifiable (at its bound, 0)"
    return with_ci(units.us(line["alpha_s"]), line["alpha_ci_s"], units.us)


def _bandwidth(line: dict, per_latency: float) -> str:
    """B in the bytes the peak counts: the fit's bytes of one message per second of the
    kernel's latency, times the kernel's bytes per latency (1; bibw 2; fanin P - 1)."""
    def rate(bytes_per_s):
        return units.rate(None if bytes_per_s is None else
                          units.mb_per_s(bytes_per_s * per_latency))
    if not line.get("bandwidth_identifiable", True):
        bound = line.get("bandwidth_bound_Bps")
        return "not identifiable" + (f" (at copy bound {rate(bound)})"
                                     if line.get("at_bound") and bound else "")
    return with_ci(rate(line["bandwidth_Bps"]), line["bandwidth_ci_Bps"], rate)


def model(g: GroupFit | None, shown: list[CaseSummary]) -> tuple[str, str]:
    """alpha of the first segment and B of the last, each with the sizes it covers; '-' for
    a configuration without a fit here (shown against P: its model is in its section)."""
    if g is None:
        return units.MISSING, units.MISSING
    if g.fit is None:
        return f"no fit: {g.note}", units.MISSING
    segments = summary(g)["segments"]
    sized = [x for x in shown if x.median_s and x.bandwidth_MBps is not None]
    per_latency = bytes_per_latency(*(np.array([getattr(x, k) for x in sized], dtype=float)
                                      for k in ("bytes", "median_s", "bandwidth_MBps"))) or 1.0
    return (f"{_alpha(segments[0])}; {_span(segments, 0)}",
            f"{_bandwidth(segments[-1], per_latency)}; {_span(segments, len(segments) - 1)}")


def _rows(measured: list[tuple[list[Case], CaseSummary]], found) -> list[tuple]:
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
    for config, found_cases, mine in groups.values():
        first = found_cases[0]
        runs = sorted({r for s in mine for r in s.runs})
        name = names.identity(config) + (f", {names.library(config['mpi'])}"
                                         if several_mpi else "")
        rows.append((f"{name} (run{'s' * (len(runs) > 1)} {names.ranges(runs)})",
                     *_peak(mine),
                     _smallest(mine, first, figure_is_bandwidth(first.kernel)),
                     *model(fit_of(found, first), mine)))
    return rows


def _verdicts(data: ReportData) -> list:
    """One line per kernel that `check` judged and per health run."""
    lines = []
    for threshold, judged in data.checks:
        kernels = ", ".join(dict.fromkeys(c.evidence["case"].split()[0] for c in judged))
        counts = ", ".join(f"{n} {w}" for w, n in Counter(c.word for c in judged).items())
        lines.append(f"check, {kernels} (threshold {threshold.fraction:.0%}): "
                     f"{len(judged)} verdicts: {counts}")
    for run_id, h in data.healths.items():
        m = h.matrices
        lines.append(f"health, run {run_id} ({m.pattern} over {len(m.nodes)} nodes): "
                     f"{len(h.suspects)} suspect{'s' * (len(h.suspects) != 1)}; {drain_line(h)}"
                     + (f"; no verdict: {h.note}" if h.note else ""))
    return lines


def render(data: ReportData) -> Section | None:
    """The box: a row per configuration of the runs' cases (their summaries, with the
    report's fits, size.fits), then a line per check command and health run."""
    rows = _rows(shown(data), data.fits)
    verdicts = _verdicts(data)
    if not rows and not verdicts:
        return None
    body = []
    if rows:
        body += [table(Table(HEADER, rows, align="lrrrll")), el("p", *CAPTION, class_="caption")]
    if verdicts:
        body.append(el("ul", *(el("li", line) for line in verdicts)))
    return section("findings", "Findings", *body)
