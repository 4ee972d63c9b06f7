"""Hockney fits and predictions as terminal tables and JSON; seconds and bytes inside, µs
and MB/s shown. The numbers come from models.groups.summary, the report's too. LogGP and
max-rate: views/message_models.py."""

from __future__ import annotations

from ..store import names
from ..system import units
from ..models.groups import RESAMPLES, SEED, GroupFit, summary
from ..system.sizes import format_bytes
from ..stats.verdict import more_launches
from .glossary import defined
from .tables import Table

FIT_FOOTER = ("alpha: start-up time; B: asymptotic bandwidth, MB = 10^6 bytes; n_half = alpha*B; "
              "95% CIs: percentiles of {resamples} bootstrap resamples of the samples "
              "(seed {seed}), each launch and each command shifted by the launches' spread "
              "at each size (docs/models.md), or within the launch where a run has one; a "
              "breakpoint is the first size of the later segment, a switch where the time "
              "may jump, continuous where the BIC prefers lines that meet; lines are fitted with "
              "alpha >= 0 and 1/B no less than one copy's time per byte over the same sizes "
              "(timed in the launch; else 0); B not identifiable: the sizes span less than "
              "4x, or the line sits at that bound (at copy bound: it would move bytes faster "
              "than one copy can), or no copy was timed and the slope's interval reaches 0; "
              + defined("BIC").replace("{", "{{").replace("}", "}}"))


def _mb(values):
    return None if values is None else [units.mb_per_s(v) for v in values]


def _line_json(line: dict) -> dict:
    """A line's fields with its bandwidth in MB/s, as the JSON output names them."""
    renamed = {"bandwidth_Bps": ("bandwidth_MBps", units.mb_per_s),
               "bandwidth_bound_Bps": ("bandwidth_bound_MBps", units.mb_per_s),
               "bandwidth_ci_Bps": ("bandwidth_ci_MBps", _mb)}
    return dict(((renamed[k][0], renamed[k][1](v)) if k in renamed else (k, v))
                for k, v in line.items())


def fit_json(g: GroupFit) -> dict:
    out = _line_json(summary(g)) if g.fit else summary(g)
    if g.fit:
        out["segments"] = [_line_json(s) for s in out["segments"]]
    return out


def with_ci(value: str, ci: list | None, fmt, between: str = "-") -> str:
    return value if ci is None else f"{value} ({fmt(ci[0])}{between}{fmt(ci[1])})"


def _rate(bytes_per_s: float | None) -> str:
    return units.rate(units.mb_per_s(bytes_per_s))


def line_cells(line: dict, between: str = "-") -> tuple[str, str, str]:
    """alpha in µs, B in MB/s, each with its CI, and n_half in bytes."""
    bandwidth = with_ci(_rate(line["bandwidth_Bps"]), line["bandwidth_ci_Bps"], _rate, between) \
        if line.get("bandwidth_identifiable", True) else \
        f"not identifiable (at copy bound {_rate(line['bandwidth_bound_Bps'])})" \
        if line.get("at_bound") else "not identifiable"
    return (with_ci(units.us(line["alpha_s"]), line["alpha_ci_s"], units.us, between),
            bandwidth,
            units.whole(line["n_half_bytes"]))


def breakpoint_kind(b: dict) -> str:
    if b.get("kind") == "continuous":
        return f"continuous (lines meet at {format_bytes(b['meets_at_bytes'])})"
    return "switch"


def render_fit(g: GroupFit) -> str:
    s = summary(g)
    runs = ", ".join(map(str, s["runs"]))
    title = f"{names.configuration(g.group.config)} (run {runs}): {g.sizes} sizes"
    if g.fit is None:
        return f"{title}\n  no fit: {g.note}"
    segments = s["segments"]
    rows = [("one line", f"{format_bytes(segments[0]['from_bytes'])}-"
                         f"{format_bytes(segments[-1]['to_bytes'])}", *line_cells(s))]
    for i, seg in enumerate(segments if len(segments) > 1 else [], 1):
        span = f"{format_bytes(seg['from_bytes'])}-{format_bytes(seg['to_bytes'])}"
        rows.append((f"segment {i}", span, *line_cells(seg)))
    table = Table(("model", "sizes", "alpha us (95% CI)", "B MB/s (95% CI)", "n_half B"), rows,
                  align="ll").text()
    breaks = ", ".join(f"{format_bytes(b['bytes'])} {breakpoint_kind(b)}" + (
        f" (CI {format_bytes(b['ci_bytes'][0])}-{format_bytes(b['ci_bytes'][1])})"
        if b["ci_bytes"] else "") for b in s["breakpoints"]) or "none"
    return "\n".join([title, table,
                      f"segments by BIC: {len(segments)} of "
                      f"1..{max(b['segments'] for b in s['bic'])}; breakpoints: {breaks}",
                      f"relative rms residual: one line {units.percent(g.rel_rms_residual)}, "
                      f"segments {units.percent(g.rel_rms_residual_segmented)}"]
                     + ([f"note: {s['note']}"] if s.get("note") else [])
                     + (["CIs within the launch: one launch cannot tell how much the next "
                         f"differs; {more_launches()}"]
                        if g.ci_basis == "one launch" else []))


def render_fits(fits: list[GroupFit]) -> str:
    return "\n\n".join([render_fit(g) for g in fits]
                       + [FIT_FOOTER.format(resamples=RESAMPLES, seed=SEED)])


PREDICT_FOOTER = ("error = (predicted - measured) / measured; measured: the median of the "
                  "kernel's latency, for reductions of the MPI call alone; gamma = {gamma} s/B")


def source_label(g: GroupFit, one_line: bool) -> str:
    s = summary(g)
    runs = ", ".join(map(str, s["runs"]))
    if one_line or len(s["segments"]) == 1:
        how = f"one line, alpha {units.us(s['alpha_s'])} us, B {_rate(s['bandwidth_Bps'])} MB/s"
    else:
        starts = ", ".join(format_bytes(b["bytes"]) for b in s["breakpoints"])
        how = f"{len(s['segments'])} segments, breaking at {starts}"
    return f"t(m) from run {runs}: {names.configuration(g.group.config)}; {how}"


def render_predictions(rows: list[dict], source: str, gamma: float) -> str:
    table = []
    for r in rows:
        measured = "-" if r["measured_s"] is None else \
            with_ci(units.us(r["measured_s"]), r["measured_ci_s"], units.us)
        table.append((r["kernel"], r["algorithm"], str(r["ranks"]), format_bytes(r["bytes"]),
                      units.us(r["predicted_s"]), measured,
                      "-" if r["run"] is None else str(r["run"]),
                      units.percent(r["rel_error"], signed=True)))
    header = ("kernel", "algorithm", "ranks", "size", "predicted us", "measured us (95% CI)",
              "run", "error")
    return "\n".join([source, Table(header, table, align="ll").text(),
                      PREDICT_FOOTER.format(gamma=units.seconds(gamma))])
