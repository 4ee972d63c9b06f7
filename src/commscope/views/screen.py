"""`commscope health --screen` in the terminal, as JSON (urn:commscope:screen:2,
docs/health.md) and as JUnit testcases."""

from __future__ import annotations

from ..system import units
from ..stats.verdict import ALPHA
from ..stats.verdict.health import FAULT_ORDER, FAULTS, REMEDY, TRANSIENT_OK
from ..system.sizes import format_bytes
from ..stats.verdict import Testcase, junit as junit_xml
from ..stats.verdict.claim import testcase
from .glossary import defined
from .tables import Table

# The fields of a traced fault that JSON gives as they are
TRACED = ("evidence", "ranks", "state", "stalled_s", "transient")
LINKS = ("the screen judges nodes, not single links: a slow link shows as noise on its two "
         "nodes; `commscope health --pattern pairs` measures every pair")


def screen_json(s, names: list[str], plan) -> dict:
    def named(x: int) -> dict:
        c = s.judged[x]
        return {"kind": "node", "hosts": [names[x]], "metric": "bandwidth_MBps",
                "bytes": plan.sizes[-1], "ratio": c.ratio, "ci": list(c.interval),
                "p_value": c.p, "launches": c.launches, "stage": c.evidence["stage"],
                "named_after_launch": s.named[x], "remedy": c.remedy}
    def fault(f: dict) -> dict:
        hosts = [names[x] for x in f["nodes"]]
        out = {"kind": f["kind"], "hosts": hosts, **{k: f[k] for k in TRACED if k in f},
               "named_after_launch": f["launch"], "remedy": REMEDY[f["kind"]]}
        if f["kind"] == "unreachable":
            out["direction"] = " -> ".join(hosts)
        return out
    return {"pattern": "screen", "nodes": names, "threshold": s.threshold,
            "bandwidth_bytes": plan.sizes[-1], "latency_bytes": plan.sizes[0],
            "launches": len(s.launches), "rounds": s.rounds,
            "full_matrix_rounds": s.full_matrix_rounds, "pair_tests": int(s.obs.log_bw.size),
            "suspects": [fault(f) for f in _ordered(s.faults)] + groups_found(s, names)
            + [named(x) for x in sorted(s.named)],
            "drain": drain(s, names),
            "cleared": [names[x] for x in sorted(s.cleared)],
            "unresolved": [names[x] for x in s.unresolved],
            "looks": [{"launch": h["launch"], "rounds": h["rounds"],
                       "ci": {names[x]: list(ci) for x, ci in h["ci"].items()}}
                      for h in s.history],
            "note": LINKS}


def groups_found(s, names: list[str]) -> list[dict]:
    """The slow switch groups (Screen.suspects) as suspects of kind group: each
    claim's evidence, then its figures."""
    out = []
    for g in s.suspects():
        c, e = g["claim"], g["claim"].evidence
        out.append({**{k: e[k] for k in ("kind", "hosts", "groups", "what")},
                    "ratio": c.ratio, "ci": list(c.interval) if c.interval else None,
                    "p_value": c.p, "remedy": c.remedy})
    return out


def _ordered(faults: list[dict]) -> list[dict]:
    return sorted(faults, key=lambda f: FAULT_ORDER.index(f["kind"]))


def drain(s, names: list[str]) -> list[dict]:
    """Each node to drain once, with its reason: hung before slow."""
    out = [{"host": names[x], "reason": "hung"} for x in sorted(s.hung)]
    return out + [{"host": names[x], "reason": "slow"} for x in sorted(s.named)
                  if x not in s.hung]


def render_suspects(s, names: list[str], transient_ok: bool = False) -> list[str]:
    """The faults' table (unreachable, hung, stalled) and their evidence and remedies, the
    slow groups, then the slow nodes' table and remedies."""
    lines = []
    faults = _ordered(s.faults)
    if faults:
        lines.append("faults (what stopped or stalled a round's launch, traced by launches "
                     "of its parts):")
        rows = [(FAULTS[f["kind"]], s.where(f), str(f["launch"]),
                 "-" if f.get("stalled_s") is None else f"{f['stalled_s']:.1f}")
                for f in faults]
        lines.append(Table(("kind", "where", "round", "stalled s"), rows, align="ll",
                           rule=True, footer="stalled s: seconds the round's launch went "
                                             "without a record").text())
        passes = f" ({TRANSIENT_OK})" if transient_ok else ""
        lines += [f"{FAULTS[f['kind']]} {s.where(f)}: {f['evidence']}"
                  f"{passes if f['kind'] == 'stalled' else ''}; remedy: {REMEDY[f['kind']]}"
                  for f in faults]
    lines += [f"{g['what']}; remedy: {g['remedy']}" for g in groups_found(s, names)]
    if s.named:
        lines.append("suspects (ratio: the node's bandwidth over the typical node's, over the "
                     "launches that decided it):")
        rows = [("node", names[x], *s.judged[x].cells()[:3], str(s.judged[x].launches))
                for x in sorted(s.named)]
        lines.append(Table(("kind", "where", "ratio", "95% CI", "p (BH)", "launches"), rows,
                           align="l", rule=True, footer=defined("95% CI", "p (BH)")).text())
        lines += [f"remedy for node {names[x]}: {s.judged[x].remedy}" for x in sorted(s.named)]
    return lines


def drain_line(s, names: list[str]) -> str:
    """`drain: h1 (hung) h6 (slow)`, or `drain: none named`."""
    return "drain: " + (" ".join(f"{d['host']} ({d['reason']})" for d in drain(s, names))
                        or "none named")


def render(s, names: list[str], plan, run_id: int, db: str,
           transient_ok: bool = False) -> str:
    lines = [f"run {run_id}: screen of {s.nodes} nodes, {s.rounds} rounds in "
             f"{len(s.launches)} launches "
             f"(the full matrix: {s.full_matrix_rounds} a launch), "
             f"bandwidth at {format_bytes(plan.sizes[-1])}; results in {db}"]
    lines += render_suspects(s, names, transient_ok)
    if not s.named and not s.slow_links:
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


def testcases(s, transient_ok: bool = False) -> list[Testcase]:
    """The screen's claims (Screen.claims) as JUnit and the exit status read them: each
    node (named or hung: failing; cleared: passing; else undetermined or inconclusive),
    each pair that cannot talk and each slow group (failing), each stall that ran clean
    when launched again (failing, unless `transient_ok`: --transient ok)."""
    return [testcase(c) for c in s.claims(transient_ok)]


def junit(cases: list[Testcase], fail_on: str | None = None) -> str:
    """JUnit XML for CI (the verdict core's writer)."""
    return junit_xml("commscope health --screen", cases, fail_on)
