"""Fits and predictions as terminal tables and JSON; seconds and bytes inside, µs and MB/s
shown. The numbers come from models.groups.summary, the report's too."""

from __future__ import annotations

from .. import names, units
from ..models.groups import RESAMPLES, SEED, GroupFit, summary
from ..sizes import format_bytes
from .tables import Table

FIT_FOOTER = ("alpha: start-up time; B: asymptotic bandwidth, MB = 10^6 bytes; n_half = alpha*B; "
              "95% CIs: percentiles of {resamples} bootstrap resamples of the samples "
              "(seed {seed}), each launch and each command shifted by the launches' spread "
              "at each size (docs/models.md), or within the launch where a run has one; a "
              "breakpoint is the first size of the later segment, a switch where the time "
              "may jump, continuous where the BIC prefers lines that meet; lines are fitted with "
              "alpha >= 0 and 1/B no less than one copy's time per byte over the same sizes "
              "(timed in the launch; else 0); B not identifiable: the sizes span less than "
              "4x, or the slope's interval reaches that bound (at copy bound: the line would "
              "move bytes faster than one copy can)")


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
                      f"segments by BIC: {len(segments)} of 1..{max(b['segments'] for b in s['bic'])}; "
                      f"breakpoints: {breaks}",
                      f"relative rms residual: one line {units.percent(g.rel_rms_residual)}, "
                      f"segments {units.percent(g.rel_rms_residual_segmented)}"]
                     + ([f"note: {s['note']}"] if s.get("note") else [])
                     + (["CIs within the launch: one launch cannot tell how much the next "
                         "differs; measure with --launches 3 or more"]
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


def loggp_label(group, model) -> str:
    runs = ", ".join(map(str, sorted({c.run_id for c in group.cases})))
    per_byte = 1 / model.G_s_per_byte if model.G_s_per_byte else None
    return (f"t(m) from run {runs}: {names.configuration(group.config)}; LogGP o_s + (m-1) G "
            f"+ L + o_r, L {units.us(model.L_s or 0.0)} us, o_s {units.us(model.o_s_s)} us, "
            f"o_r {units.us(model.o_r_s)} us, G {_rate(per_byte)} MB/s")


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


def loggp_json(group, model) -> dict:
    """A loggp configuration's LogGP model (models/loggp.py): the constants, seconds and
    bytes, and each size's measured parts."""
    out = {**group.config, "runs": sorted({c.run_id for c in group.cases}), "model": "loggp"}
    if model is None:
        return {**out, "note": "no phases stored: measure with this commscope's loggp kernel"}
    return {**out, "L_s": model.L_s, "o_s_s": model.o_s_s, "o_r_s": model.o_r_s,
            "g_s": model.g_s, "G_s_per_byte": model.G_s_per_byte,
            "G_bandwidth_MBps": units.mb_per_s(1 / model.G_s_per_byte)
            if model.G_s_per_byte else None,
            "parts": [{"bytes": p.bytes, "o_s_s": p.o_s, "o_r_s": p.o_r, "g_s": p.g,
                       "rtt_s": p.rtt} for p in model.parts]}


LOGGP_FOOTER = ("LogGP (Alexandrov et al. 1995): a message costs o_s + (m-1) G + L + o_r; o_s, o_r "
                "and g measured per size as Kielmann et al. (2000) do, each the median over the "
                "launches of a launch's median; L = RTT(0)/2 - g(0); G: the slope of g(m), a "
                "physical line; constants at the smallest size (docs/models.md)")


def render_loggp(group, model) -> str:
    s = loggp_json(group, model)
    title = f"{names.configuration(group.config)} (run {', '.join(map(str, s['runs']))}): LogGP"
    if model is None:
        return f"{title}\n  no model: {s['note']}"
    latency = "not identifiable (g(0) above RTT(0)/2)" if model.L_s is None else units.us(model.L_s)
    bandwidth = "-" if model.G_s_per_byte is None else \
        f"{model.G_s_per_byte * 1e9:.4f} ns/B ({units.rate(s['G_bandwidth_MBps'])} MB/s)"
    constants = Table(("L us", "o_s us", "o_r us", "g us", "G"),
                      [(latency, units.us(model.o_s_s), units.us(model.o_r_s),
                        units.us(model.g_s), bandwidth)], align="rrrrr").text()
    per_size = Table(("size", "o_s us", "o_r us", "g us", "RTT us"),
                     [(format_bytes(p.bytes), units.us(p.o_s), units.us(p.o_r), units.us(p.g),
                       units.us(p.rtt)) for p in model.parts], align="rrrrr").text()
    return "\n".join([title, constants, per_size, LOGGP_FOOTER])


def maxrate_json(cases, model) -> dict:
    """The max-rate model of mbw_mr cases at several rank counts (models/maxrate.py)."""
    first = cases[0]
    out = {"kernel": first.kernel, "model": "max-rate", "mpi": first.mpi,
           "runs": sorted({c.run_id for c in cases}),
           "k": sorted({c.ranks // 2 for c in cases})}
    if model is None:
        return {**out, "note": "needs mbw_mr at two rank counts or more and two sizes or more"}
    return {**out, "alpha_s": model.alpha_s,
            "rate_process_MBps": units.mb_per_s(model.rate_process_Bps),
            "rate_node_MBps": units.mb_per_s(model.rate_node_Bps),
            "rate_process_at_least_MBps": units.mb_per_s(model.process_at_least_Bps),
            "rate_node_at_least_MBps": units.mb_per_s(model.node_at_least_Bps),
            "points": [{"k": p.k, "bytes": p.bytes, "time_s": p.time_s,
                        "model_s": float(model.time_s(p.bytes, p.k))} for p in model.points]}


MAXRATE_FOOTER = ("max-rate (Gropp, Olson & Samfass 2016): k senders on a node take "
                  "alpha + k n / min(R_N, k R_C); k = P/2 pairs of mbw_mr, all senders on one "
                  "node; a rate that no k reached is given as a lower bound (docs/models.md)")


def at_least(value: float | None, at_least: float | None) -> str:
    """A rate in MB/s, its lower bound where it was not identifiable."""
    return units.rate(value) if value else f"at least {units.rate(at_least)}" \
        if at_least else "not identifiable"


def maxrate_label(cases, model) -> str:
    s = maxrate_json(cases, model)
    return (f"T(k, n) from runs {', '.join(map(str, s['runs']))}: max-rate alpha "
            f"{units.us(model.alpha_s)} us, R_C "
            f"{at_least(s['rate_process_MBps'], s['rate_process_at_least_MBps'])} MB/s, R_N "
            f"{at_least(s['rate_node_MBps'], s['rate_node_at_least_MBps'])} MB/s; k = P/2")


def render_maxrate(cases, model) -> str:
    s = maxrate_json(cases, model)
    title = (f"mbw_mr, {names.library(s['mpi'])} (runs {', '.join(map(str, s['runs']))}), "
             f"k = {', '.join(map(str, s['k']))}: max-rate")
    if model is None:
        return f"{title}\n  no model: {s['note']}"
    constants = Table(("alpha us", "R_C MB/s (a process)", "R_N MB/s (the node)"),
                      [(units.us(model.alpha_s),
                        at_least(s["rate_process_MBps"], s["rate_process_at_least_MBps"]),
                        at_least(s["rate_node_MBps"], s["rate_node_at_least_MBps"]))],
                      align="rrr").text()
    rows = Table(("k", "size", "measured us", "model us", "error"),
                 [(p["k"], format_bytes(p["bytes"]), units.us(p["time_s"]), units.us(p["model_s"]),
                   units.percent((p["model_s"] - p["time_s"]) / p["time_s"], signed=True))
                  for p in s["points"]], align="rrrrr").text()
    return "\n".join([title, constants, rows, MAXRATE_FOOTER])
