"""How a protocol probe is shown: each switch with the lines on either side and the
library setting that names it, then the settings and any disagreement."""

from __future__ import annotations

from ..store import names
from ..measure.probe import JUMP, Bracket, Probe, Regime, Setting, named_by
from ..system.sizes import format_bytes
from ..system.units import mb_per_s, percent, rate, us
from .tables import Table


def _regime(r: Regime | None) -> dict | None:
    return None if r is None else {"from_bytes": r.from_bytes, "to_bytes": r.to_bytes,
                                   "alpha_s": r.alpha_s, "bandwidth_Bps": r.bandwidth_Bps}


def _switch(b: Bracket, mode, applies: list[Setting]) -> dict:
    return {"mode": mode, "bytes": b.hi, "interval": [b.lo + 1, b.hi], "last_before": b.lo,
            "located": b.located, "rounds": b.rounds, "jump_s": b.jump_s,
            "below": _regime(b.below), "above": _regime(b.above),
            "settings": [s.name for s in named_by(b, applies)]}


def probe_json(mode, runs: list[int], mpi: str | None, over_network: bool, result: Probe,
               applies: list[Setting], limits: list[Setting], protocols: dict | None) -> dict:
    """One mode's probe: `switches` (bytes: the first size of the later protocol;
    interval: the sizes it lies between), the regimes, the library's settings for the
    path and the disagreements: a limit with no switch measured at it."""
    largest = max(max(r) for r in result.rounds)
    missed = [s for s in limits if s.bytes <= largest
              and not any(s in named_by(b, limits) for b in result.switches)]
    return {"mode": mode, "runs": runs, "mpi": mpi,
            "path": "network" if over_network else "shared memory",
            "switches": [_switch(b, mode, applies) for b in result.switches],
            "unconfirmed": [{"bytes": b.hi, "interval": [b.lo + 1, b.hi]}
                            for b in result.unconfirmed],
            "regimes": [_regime(r) for r in result.regimes],
            "sizes_measured": sum(len(r) for r in result.rounds),
            "library_settings": protocols,
            "applies": {s.name: s.bytes for s in applies},
            "disagreements": [f"{s.name} = {s.bytes} B, but the latency does not step by "
                              f"{percent(JUMP, decimals=0)} from {s.last_before} B to "
                              f"{s.bytes} B: the setting is not in effect on this path, or "
                              "both protocols cost the same there" for s in missed]}


def withheld(result: Probe) -> list[str]:
    """A line for each line's bandwidth withheld above the copy ceiling (Regime.withheld)."""
    lines = [r for b in result.switches for r in (b.below, b.above)] + list(result.regimes)
    return [f"B withheld over {format_bytes(r.from_bytes)}-{format_bytes(r.to_bytes)}: "
            f"{rate(mb_per_s(r.line_Bps))} MB/s is above the copy ceiling of "
            f"{rate(mb_per_s(r.ceiling_Bps))} MB/s measured beside it, which no transfer "
            "beats; measure again on a quiet machine"
            for r in dict.fromkeys(x for x in lines if x is not None and x.withheld)]


def _side(r: dict | None) -> str:
    if r is None:
        return "- (no size between)"
    bw = r["bandwidth_Bps"]
    return f"{us(r['alpha_s'])} us, {rate(mb_per_s(bw), missing='-')} MB/s"


def _interval(s: dict) -> str:
    first, last = s["interval"]
    return "exactly" if first == last else f"{format_bytes(first)}-{format_bytes(last)}"


def render_probe(kernel: str, db: str, probes: list[dict]) -> str:
    out = []
    for p in probes:
        mode = f" {p['mode']}" if p["mode"] else ""
        rows = [(format_bytes(s["bytes"]),
                 _interval(s) + ("" if s["located"] else " (not located)"),
                 us(s["jump_s"], signed=True), _side(s["below"]), _side(s["above"]),
                 ", ".join(s["settings"]) or "-") for s in p["switches"]]
        title = (f"probe protocols: {kernel}{mode} over {p['path']}, "
                 f"{names.library(p['mpi'])}; runs {names.ranges(p['runs'])} in {db} "
                 f"({p['sizes_measured']} sizes measured)")
        if rows:
            out.append(Table(("switch at", "located within", "jump us", "below: alpha, B",
                              "above: alpha, B", "library setting"), rows, align="llrrrl",
                             rule=True, title=title).text())
        else:
            out.append(f"{title}\nno protocol switch: no jump of the latency between "
                       "neighbouring sizes")
        for u in p["unconfirmed"]:
            out.append(f"  a jump at {format_bytes(u['bytes'])} in the coarse sweep was not "
                       "seen again: noise, or a switch too small to locate")
        settings = ", ".join(f"{k} {v} B" for k, v in p["applies"].items())
        out.append(f"library settings (MPI_T): {settings or 'none readable for this path'}")
        out += [f"disagreement: {d}" for d in p["disagreements"]]
    return "\n".join(out)
