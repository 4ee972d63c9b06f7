"""The models that are not a line through one kernel's times, LogGP and max-rate, as JSON
and as tables: each table is built here once, and `commscope fit` prints it as text
while the report (views/report/message_models.py) shows the same table as HTML."""

from __future__ import annotations

from ..store import names
from ..system import units
from ..system.sizes import format_bytes
from .tables import Table

LOGGP_FOOTER = ("LogGP (Alexandrov et al. 1995): a message costs o_s + (m-1) G + L + o_r; "
                "o_s, o_r and g measured per size as Kielmann et al. (2000) do, each the median "
                "over the launches of a launch's median; L = RTT(0)/2 - g(0); G: the slope of "
                "g(m), a physical line; constants at the smallest size (docs/models.md)")
MAXRATE_FOOTER = ("max-rate (Gropp, Olson & Samfass 2016): k senders on a node take "
                  "alpha + k n / min(R_N, k R_C); k = P/2 pairs of mbw_mr, all senders on one "
                  "node; a rate that no k reached is given as a lower bound (docs/models.md)")
NOT_IDENTIFIABLE = "not identifiable"
WITHHELD = "withheld"


def _runs(s: dict) -> str:
    return ", ".join(map(str, s["runs"]))


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


def loggp_constants(model, us: str = "us") -> Table:
    """LogGP's constants, one row; `us`: how the medium writes µs."""
    latency = f"{NOT_IDENTIFIABLE} (g(0) above RTT(0)/2)" if model.L_s is None \
        else units.us(model.L_s)
    g = units.us(model.g_s) if model.g_s is not None else f"{WITHHELD} at the smallest size"
    per_byte = model.G_s_per_byte
    gap = NOT_IDENTIFIABLE if per_byte is None else \
        f"{units.ns_per_byte(per_byte)} ns/B ({units.rate(units.mb_per_s(1 / per_byte))} MB/s)"
    return Table((f"L {us}", f"o_s {us}", f"o_r {us}", f"g {us}", "G"),
                 [(latency, units.us(model.o_s_s), units.us(model.o_r_s), g, gap)],
                 align="rrrrr")


def loggp_parts(model) -> Table:
    """The parts measured at each size, in µs."""
    return Table(("size", "o_s us", "o_r us", "g us", "RTT us"),
                 [(format_bytes(p.bytes), units.us(p.o_s), units.us(p.o_r),
                   WITHHELD if p.g is None else units.us(p.g), units.us(p.rtt))
                  for p in model.parts], align="rrrrr",
                 footer=f"{WITHHELD}: a gap longer than the round trip at its size, which no "
                        "message can take (a stalled launch): left out of g and G"
                 if any(p.g is None for p in model.parts) else None)


def loggp_label(group, model) -> str:
    """Where predict's message time comes from, with the constants it uses."""
    runs = ", ".join(map(str, sorted({c.run_id for c in group.cases})))
    per_byte = 1 / model.G_s_per_byte if model.G_s_per_byte else None
    return (f"t(m) from run {runs}: {names.configuration(group.config)}; LogGP o_s + (m-1) G "
            f"+ L + o_r, L {units.us(model.L_s or 0.0)} us, o_s {units.us(model.o_s_s)} us, "
            f"o_r {units.us(model.o_r_s)} us, G {units.rate(units.mb_per_s(per_byte))} MB/s")


def render_loggp(group, model) -> str:
    s = loggp_json(group, model)
    title = f"{names.configuration(group.config)} (run {_runs(s)}): LogGP"
    if model is None:
        return f"{title}\n  no model: {s['note']}"
    return "\n".join([title, loggp_constants(model).text(), loggp_parts(model).text(),
                      LOGGP_FOOTER])


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


def at_least(value: float | None, at_least: float | None) -> str:
    """A rate in MB/s, its lower bound where it was not identifiable."""
    return units.rate(value) if value else f"at least {units.rate(at_least)}" \
        if at_least else NOT_IDENTIFIABLE


def _rates(s: dict) -> tuple[str, str]:
    """R_C and R_N of a max-rate model's JSON, each in MB/s or its lower bound."""
    return (at_least(s["rate_process_MBps"], s["rate_process_at_least_MBps"]),
            at_least(s["rate_node_MBps"], s["rate_node_at_least_MBps"]))


def maxrate_constants(model, s: dict, us: str = "us") -> Table:
    """Max-rate's constants, one row, from the model and its JSON; `us`: how the medium
    writes µs."""
    return Table((f"alpha {us}", "R_C MB/s (a process)", "R_N MB/s (the node)"),
                 [(units.us(model.alpha_s), *_rates(s))], align="rrr")


def maxrate_points(s: dict) -> Table:
    """Each measured (k, size) against the model."""
    return Table(("k", "size", "measured us", "model us", "error"),
                 [(p["k"], format_bytes(p["bytes"]), units.us(p["time_s"]), units.us(p["model_s"]),
                   units.percent((p["model_s"] - p["time_s"]) / p["time_s"], signed=True))
                  for p in s["points"]], align="rrrrr")


def maxrate_label(cases, model) -> str:
    """Where predict's times come from, with the constants it uses."""
    s = maxrate_json(cases, model)
    process, node = _rates(s)
    return (f"T(k, n) from runs {_runs(s)}: max-rate alpha {units.us(model.alpha_s)} us, "
            f"R_C {process} MB/s, R_N {node} MB/s; k = P/2")


def render_maxrate(cases, model) -> str:
    s = maxrate_json(cases, model)
    title = (f"mbw_mr, {names.library(s['mpi'])} (runs {_runs(s)}), "
             f"k = {', '.join(map(str, s['k']))}: max-rate")
    if model is None:
        return f"{title}\n  no model: {s['note']}"
    return "\n".join([title, maxrate_constants(model, s).text(), maxrate_points(s).text(),
                      MAXRATE_FOOTER])
