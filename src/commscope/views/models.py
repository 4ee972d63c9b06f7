"""Fits and predictions as terminal tables and JSON; seconds and bytes inside, us and MB/s shown."""

from __future__ import annotations

from ..models.groups import RESAMPLES, SEED, GroupFit
from ..models.hockney import HockneyFit
from ..sizes import format_bytes
from .table import library_label

MB = 1e6  # MB = 10^6 bytes

FIT_FOOTER = ("alpha: start-up time; B: asymptotic bandwidth, MB = 10^6 bytes; n_half = alpha*B; "
              "95% CIs: percentiles of {resamples} bootstrap resamples (seed {seed}); a "
              "breakpoint is the first size of the later segment")


def group_label(config: dict) -> str:
    mode = f" {config['send_mode']}" if config["send_mode"] else ""
    params = "".join(f" {k}={v}" for k, v in sorted(config["params"].items()))
    window = f" window={config['window']}" if "window" in config else ""
    placement = f"map-by {config['map_by'] or 'default'}, bind-to {config['bind_to'] or 'default'}"
    return (f"{config['kernel']}{mode}{params}{window}, {config['ranks']} ranks, transport "
            f"{config['transport']}, {placement}, sync {config['sync']}, "
            f"{library_label(config['mpi'])}")


def _mb(bps: float | None) -> float | None:
    return None if bps is None else bps / MB


def _pair(interval, scale=lambda v: v):
    return None if interval is None else [None if v is None else scale(v) for v in interval]


def _line_json(fit: HockneyFit) -> dict:
    line = fit.line
    return {"alpha_s": line.alpha_s, "alpha_ci_s": _pair(fit.alpha_ci_s),
            "bandwidth_MBps": _mb(line.bandwidth_Bps),
            "bandwidth_ci_MBps": _pair(fit.bandwidth_ci_Bps, _mb),
            "n_half_bytes": line.n_half_bytes, "n_half_ci_bytes": _pair(fit.n_half_ci_bytes)}


def fit_json(g: GroupFit) -> dict:
    out = {**g.group.config, "runs": sorted({c.run_id for c in g.group.cases}),
           "sizes": g.sizes, "note": g.note}
    if g.fit is None:
        return out
    f = g.fit
    return {**out, **_line_json(f.single), "rel_rms_residual": g.rel_rms_residual,
            "segments": [{"from_bytes": s.from_bytes, "to_bytes": s.to_bytes, **_line_json(s.fit)}
                         for s in f.segments],
            "breakpoints": [{"bytes": b.bytes, "ci_bytes": _pair(b.ci_bytes)}
                            for b in f.breakpoints],
            "rel_rms_residual_segmented": g.rel_rms_residual_segmented,
            "bic": [{"segments": k, "bic": v} for k, v in f.bic.items()],
            "resamples": RESAMPLES, "seed": SEED}


def _us(s: float) -> str:
    return f"{s * 1e6:.3f}"


def _num(v: float | None) -> str:
    return "inf" if v is None else f"{v:,.0f}"


def _with_ci(value: str, ci: list | None, fmt) -> str:
    return value if ci is None else f"{value} ({fmt(ci[0])}-{fmt(ci[1])})"


def _line_row(name: str, span: str, fit: HockneyFit) -> tuple[str, ...]:
    j = _line_json(fit)
    return (name, span, _with_ci(_us(j["alpha_s"]), j["alpha_ci_s"], _us),
            _with_ci(_num(j["bandwidth_MBps"]), j["bandwidth_ci_MBps"], _num),
            "-" if j["n_half_bytes"] is None else _num(j["n_half_bytes"]))


def _aligned(rows: list[tuple[str, ...]]) -> list[str]:
    """Columns padded to their widest cell: the two name columns left, numbers right."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in
                      enumerate(zip(r, widths))) for r in rows]


def render_fit(g: GroupFit) -> str:
    runs = ", ".join(str(r) for r in sorted({c.run_id for c in g.group.cases}))
    title = f"{group_label(g.group.config)} (run {runs}): {g.sizes} sizes"
    if g.fit is None:
        return f"{title}\n  no fit: {g.note}"
    f = g.fit
    rows = [("model", "sizes", "alpha us (95% CI)", "B MB/s (95% CI)", "n_half B")]
    first, last = f.segments[0].from_bytes, f.segments[-1].to_bytes
    rows.append(_line_row("one line", f"{format_bytes(first)}-{format_bytes(last)}", f.single))
    for i, s in enumerate(f.segments if len(f.segments) > 1 else [], 1):
        span = f"{format_bytes(s.from_bytes)}-{format_bytes(s.to_bytes)}"
        rows.append(_line_row(f"segment {i}", span, s.fit))
    lines = _aligned(rows)
    breaks = ", ".join(f"{format_bytes(b.bytes)}" + (
        f" (CI {format_bytes(b.ci_bytes[0])}-{format_bytes(b.ci_bytes[1])})" if b.ci_bytes else "")
        for b in f.breakpoints) or "none"
    return "\n".join([title, *lines,
                      f"segments by BIC: {len(f.segments)} of 1..{max(f.bic)}; breakpoints: "
                      f"{breaks}",
                      f"relative rms residual: one line {g.rel_rms_residual:.1%}, segments "
                      f"{g.rel_rms_residual_segmented:.1%}"])


def render_fits(fits: list[GroupFit]) -> str:
    return "\n\n".join([render_fit(g) for g in fits]
                       + [FIT_FOOTER.format(resamples=RESAMPLES, seed=SEED)])


PREDICT_FOOTER = ("error = (predicted - measured) / measured; measured: the median of the "
                  "kernel's latency, for reductions of the MPI call alone; gamma = {gamma:g} s/B")


def source_label(g: GroupFit, one_line: bool) -> str:
    runs = ", ".join(str(r) for r in sorted({c.run_id for c in g.group.cases}))
    line = g.fit.single.line
    if one_line or len(g.fit.segments) == 1:
        b = line.bandwidth_Bps
        how = f"one line, alpha {_us(line.alpha_s)} us, B {_num(_mb(b))} MB/s"
    else:
        starts = ", ".join(format_bytes(b.bytes) for b in g.fit.breakpoints)
        how = f"{len(g.fit.segments)} segments, breaking at {starts}"
    return f"t(m) from run {runs}: {group_label(g.group.config)}; {how}"


def render_predictions(rows: list[dict], source: str, gamma: float) -> str:
    table = [("kernel", "algorithm", "ranks", "size", "predicted us", "measured us (95% CI)",
              "run", "error")]
    for r in rows:
        measured, ci = r["measured_s"], r["measured_ci_s"]
        shown = "-" if measured is None else _with_ci(_us(measured), ci, _us)
        table.append((r["kernel"], r["algorithm"], str(r["ranks"]), format_bytes(r["bytes"]),
                      _us(r["predicted_s"]), shown, "-" if r["run"] is None else str(r["run"]),
                      "-" if r["rel_error"] is None else f"{r['rel_error']:+.1%}"))
    return "\n".join([source, *_aligned(table), PREDICT_FOOTER.format(gamma=gamma)])
