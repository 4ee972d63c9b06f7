"""`commscope health --screen` in the terminal and as JSON (urn:commscope:screen:1,
docs/health.md)."""

from __future__ import annotations

from .. import units
from ..health import ALPHA, tournament_rounds
from ..plan import Plan
from ..screen import Screen, group_suspects
from ..sizes import format_bytes
from .health import REMEDY
from .tables import Table

FAULTS = {
    "unreachable": "check the route and firewall between the two (ip route, ping between "
                   "their addresses) and the link itself: each talks to other nodes",
    "hung": "drain it: its rank answered no partner within the deadline (a hung process, a "
            "dead NIC); check it (dmesg, its NIC's link) before it rejoins",
    "group": "check the switch's uplink (its ports, cables, routing and counters): its "
             "nodes are fine with each other, slow with the others",
}
LINKS = ("the screen judges nodes, not single links: a slow link shows as noise on its two "
         "nodes; `commscope health --pattern pairs` measures every pair")


def screen_json(s: Screen, names: list[str], plan: Plan) -> dict:
    def named(x: int) -> dict:
        e = s.evidence[x]
        return {"kind": "node", "hosts": [names[x]], "metric": "bandwidth_MBps",
                "bytes": plan.sizes[-1], "ratio": e["ratio"], "ci": list(e["ci"]),
                "p_value": e["p_value"], "launches": e["launches"], "stage": e["stage"],
                "named_after_launch": s.named[x], "remedy": REMEDY["node"]}
    def fault(f: dict) -> dict:
        hosts = [names[x] for x in f["nodes"]]
        out = {"kind": f["kind"], "hosts": hosts, "evidence": f["evidence"],
               "named_after_launch": f["launch"], "remedy": FAULTS[f["kind"]]}
        if f["kind"] == "unreachable":
            out["direction"] = " -> ".join(hosts)
        return out
    return {"pattern": "screen", "nodes": names, "threshold": s.threshold,
            "bandwidth_bytes": plan.sizes[-1], "latency_bytes": plan.sizes[0],
            "launches": len(s.launches), "rounds": s.rounds,
            "full_matrix_rounds": tournament_rounds(s.nodes), "pair_tests": int(s.obs.log_bw.size),
            "suspects": [fault(f) for f in _ordered(s.faults)] + groups_found(s, names)
            + [named(x) for x in sorted(s.named)],
            "drain": drain(s, names),
            "cleared": [names[x] for x in sorted(s.cleared)],
            "unresolved": [names[x] for x in s.unresolved],
            "looks": [{"launch": h["launch"], "rounds": h["rounds"],
                       "ci": {names[x]: list(ci) for x, ci in h["ci"].items()}}
                      for h in s.history],
            "note": LINKS}


def groups_found(s: Screen, names: list[str]) -> list[dict]:
    """The slow switch groups (screen.group_suspects) as suspects of kind group."""
    out = []
    for g in group_suspects(s):
        members = [names[x] for x in range(s.nodes) if s.groups[x] in g["groups"]]
        which = [s.group_names[x] for x in g["groups"]]
        what = (f"group {which[0]}: {sum(s.groups == g['groups'][0])} nodes, uplink "
                f"{units.ratio(g['ratio'])} of the pairs within" if len(which) == 1 else
                f"groups {which[0]} and {which[1]}: pairs between them "
                f"{units.ratio(g['ratio'])} of the pairs within")
        link = s.links[g["links"][0]]
        out.append({"kind": "group", "hosts": members, "groups": which, "what": what,
                    "ratio": g["ratio"], "ci": list(link["ci"]) if len(g["links"]) == 1
                    else None, "p_value": max(s.links[k]["p_value"] for k in g["links"]),
                    "remedy": FAULTS["group"]})
    return out


def _ordered(faults: list[dict]) -> list[dict]:
    return sorted(faults, key=lambda f: list(FAULTS).index(f["kind"]))


def drain(s: Screen, names: list[str]) -> list[dict]:
    """Each node to drain once, with its reason: hung before slow."""
    out = [{"host": names[x], "reason": "hung"} for x in sorted(s.hung)]
    return out + [{"host": names[x], "reason": "slow"} for x in sorted(s.named)
                  if x not in s.hung]


def render_suspects(s: Screen, names: list[str]) -> list[str]:
    """The faults (unreachable, hung), then the slow nodes' table and remedies."""
    lines = []
    for f in _ordered(s.faults):
        where = " -> ".join(names[x] for x in f["nodes"])
        lines.append(f"{f['kind']}: {where} ({f['evidence']}; round {f['launch']}, measured "
                     f"again without it); remedy: {FAULTS[f['kind']]}")
    lines += [f"{g['what']}; remedy: {g['remedy']}" for g in groups_found(s, names)]
    if s.named:
        lines.append("suspects (ratio: the node's bandwidth over the typical node's, over the "
                     "launches that decided it):")
        rows = [("node", names[x], units.ratio(e["ratio"]),
                 f"{units.ratio(e['ci'][0])} to {units.ratio(e['ci'][1])}",
                 units.p_value(e["p_value"]), str(e["launches"]))
                for x in sorted(s.named) for e in [s.evidence[x]]]
        lines.append(Table(("kind", "where", "ratio", "95% CI", "p (BH)", "launches"), rows,
                           align="l", rule=True).text())
        lines += [f"remedy for node {names[x]}: {REMEDY['node']}" for x in sorted(s.named)]
    return lines


def drain_line(s: Screen, names: list[str]) -> str:
    """`drain: h1 (hung) h6 (slow)`, or `drain: none named`."""
    return "drain: " + (" ".join(f"{d['host']} ({d['reason']})" for d in drain(s, names))
                        or "none named")


def render(s: Screen, names: list[str], plan: Plan, run_id: int, db: str) -> str:
    lines = [f"run {run_id}: screen of {s.nodes} nodes, {s.rounds} rounds in "
             f"{len(s.launches)} launches (the full matrix: {tournament_rounds(s.nodes)} a launch), "
             f"bandwidth at {format_bytes(plan.sizes[-1])}; results in {db}"]
    lines += render_suspects(s, names)
    if not s.named and not s.faults and not s.slow_links:
        lines.append(f"no suspect: no node is more than "
                     f"{units.percent(s.threshold, decimals=None)} slower than the typical "
                     f"node beyond doubt (BH-adjusted p < {ALPHA:g})")
    lines.append(LINKS)
    line = drain_line(s, names)
    if s.unresolved:
        line += (f"; {len(s.unresolved)} of {s.nodes} nodes unresolved after "
                 f"{s.rounds} rounds ({' '.join(names[x] for x in s.unresolved)}): near the "
                 "threshold; check them with the full matrix (--hosts of those and a few "
                 "cleared ones)")
    lines.append(line)
    return "\n".join(lines)
