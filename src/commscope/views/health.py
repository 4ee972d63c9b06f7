"""`commscope health` in the terminal, as JSON (a contract: docs/health.md), JUnit XML and
Prometheus text exposition."""

from __future__ import annotations

import math

import numpy as np

from ..system import units
from ..health.health import ALPHA, Candidate, Health, tournament_rounds
from ..system.sizes import format_bytes
from ..stats.verdict import INCONCLUSIVE, UNDETERMINED, Testcase, Threshold, more_launches
from ..stats.verdict import junit as junit_xml
from .glossary import defined
from .prometheus import exposition
from .tables import Table


REMEDY = {
    "node": "drain it and test it alone (its NIC, cable, firmware, CPU frequency, memory); "
            "then run `commscope health` again without it",
    "link": "check the cable, ports and switch path between them (error counters, link "
            "speed); neither node is slow with the others",
    "step": "every node is slow at this distance: routing or contention in the fabric, not "
            "a node; ask who runs the switches",
    # what stopped a launch, traced (preflight.diagnose), in the full matrix and the screen
    "unreachable": "check the route and firewall between the two (ip route, ping between "
                   "their addresses) and the link itself: each talks to other nodes",
    "hung": "drain it: its rank answered no partner within the deadline (a hung process, a "
            "dead NIC); check it (dmesg, its NIC's link) before it rejoins",
    "stalled": "run the screen again; if a rank of this host stalls again, check what "
               "stopped it (a debugger or job control, dmesg, its load, its NIC's link) "
               "before trusting the host",
    "group": "check the switch's uplink (its ports, cables, routing and counters): its "
             "nodes are fine with each other, slow with the others",
}
# How each fault is written in a table and a JUnit testcase: a stall that ran clean when
# launched again (the only stall kept as a fault) is transient
WORDS = {"unreachable": "unreachable", "hung": "hung", "stalled": "stalled (transient)"}


def fault_where(hosts: list[str], ranks: list[int] = ()) -> str:
    """`a -> b` for a pair, `a rank 3` for a node's rank, `host unknown` for none."""
    where = " -> ".join(hosts) or "host unknown"
    return where + (f" rank{'s' * (len(ranks) > 1)} {','.join(map(str, ranks))}"
                    if ranks else "")


def _what(c: Candidate) -> str:
    if c.kind == "step":
        return f"distance {c.distance}"
    return c.direction if c.kind == "link" else c.hosts[0]


def _ci(c: Candidate) -> str:
    return "-" if c.ci is None else f"{units.ratio(c.ci[0])} to {units.ratio(c.ci[1])}"


def _row(c: Candidate) -> tuple[str, ...]:
    return (c.kind, _what(c), units.rate(c.measured / 1e6, 1), units.rate(c.expected / 1e6, 1),
            units.ratio(c.ratio), _ci(c),
            "-" if c.p_value is None else units.p_value(c.p_value))


def suspects_table(h: Health) -> Table:
    """The faults traced (no figures: nothing was measured between them), then the
    suspects; the footer defines its abbreviations."""
    faults = [(WORDS[f["kind"]], fault_where(f["hosts"]), *"-----") for f in h.faults]
    return Table(("kind", "where", "MB/s", "expected MB/s", "ratio", "95% CI", "p (BH)"),
                 faults + [_row(c) for c in h.suspects], align="l", rule=True,
                 footer=defined("MB/s", "95% CI", "p (BH)"))


def drain_line(h: Health) -> str:
    """The drain list, and how many nodes the check could neither name nor clear."""
    line = f"drain: {' '.join(h.drain) or 'none named'}"
    if h.unresolved:
        line += (f"; {len(h.unresolved)} of {len(h.matrices.nodes)} nodes unresolved "
                 f"({' '.join(h.unresolved)}): "
                 f"{more_launches('health', given=h.matrices.launches)}")
    return line


def render(h: Health, run_id: int, db: str) -> str:
    m = h.matrices
    lines = [f"run {run_id}: {m.pattern} over {len(m.nodes)} nodes, {m.launches} launches, "
             f"bandwidth at {format_bytes(m.bandwidth_bytes)}, latency at "
             f"{format_bytes(m.latency_bytes)}; results in {db}"]
    scores = h.node_scores()
    if scores:
        rows = [(n, units.ratio(scores[n]), units.rate(_median_of(m, x) / 1e6, 1),
                 units.us(_median_of(m, x, "latency")))
                for x, n in enumerate(m.nodes)]
        lines.append(Table(("node", "score", "median pair MB/s", "median pair latency us"),
                           rows, align="l", rule=True, footer=defined("MB/s")).text())
    if h.suspects or h.faults:
        lines.append("suspects (ratio: measured over what the rest of the matrix predicts; "
                     "interval over launches):")
        lines.append(suspects_table(h).text())
        lines += [f"{WORDS[f['kind']]} {fault_where(f['hosts'])}: {f['evidence']}; measured "
                  f"again without it; remedy: {REMEDY[f['kind']]}" for f in h.faults]
        lines += [f"remedy for {c.kind} {_what(c)}: {REMEDY[c.kind]}" for c in h.suspects]
    elif h.note:
        lines.append(f"no verdict: {h.note}")
    else:
        lines.append(f"no suspect: no node, link or distance is more than "
                     f"{units.percent(h.threshold, decimals=None)} slower than the model "
                     f"predicts beyond doubt (BH-adjusted p < {ALPHA:g})")
    if h.detectable is not None:
        lines.append(f"the smallest slowdown these launches detect (80% power): a node at "
                     f"{units.ratio(h.detectable)}x of the typical bandwidth; "
                     + defined("power"))
    lines.append(drain_line(h))
    return "\n".join(lines)


def _median_of(m, x: int, which: str = "bandwidth") -> float:
    """Node x's median over its pairs, both ends (the launches' median first)."""
    med = m.median(which)
    values = np.concatenate([med[x], med[:, x]])
    values = values[np.isfinite(values)]
    return float(np.median(values)) if values.size else math.nan


def _matrix(values: np.ndarray, scale: float = 1.0) -> list[list[float | None]]:
    return [[float(v) * scale if np.isfinite(v) else None for v in row] for row in values]


def as_json(h: Health) -> dict:
    m = h.matrices
    n = m.bandwidth.shape[1]
    rounds = m.rounds if m.rounds is not None else \
        m.launches * (tournament_rounds(n) if m.pattern == "pairs" else n - 1)
    out = {"nodes": m.nodes, "pattern": m.pattern, "launches": m.launches, "rounds": rounds,
           "pair_tests": int(np.isfinite(m.bandwidth).sum()),
           "threshold": h.threshold, "bandwidth_bytes": m.bandwidth_bytes,
           "latency_bytes": m.latency_bytes,
           "matrix": {"bandwidth_MBps": _matrix(m.median("bandwidth"), 1e-6),
                      "latency_s": _matrix(m.median("latency"))},
           "node_scores": h.node_scores(),
           "suspects": [{**f, "remedy": REMEDY[f["kind"]]} for f in h.faults]
           + [c.as_dict(m.bandwidth_bytes) for c in h.suspects],
           "drain": h.drain, "cleared": h.cleared, "unresolved": h.unresolved,
           "detectable_ratio": h.detectable,
           "note": h.note}
    if m.pattern == "shift":
        out["by_distance"] = {"distances": list(range(1, len(m.nodes))),
                              "bandwidth_MBps": _matrix(m.by_distance("bandwidth"), 1e-6),
                              "latency_s": _matrix(m.by_distance("latency"))}
    return out


def testcases(h: Health) -> list[Testcase]:
    """One per node and per link (both directions in one), a step where one is named, as
    JUnit and the exit status read them: a suspect fails, a cleared one passes, one
    neither is undetermined (unresolved: never a pass), as is a link through a suspect
    node (the node's failure)."""
    m, named = h.matrices, {(c.kind, tuple(c.hosts)): c for c in h.suspects}
    drain, threshold = set(h.drain), Threshold(h.threshold)
    faults = {("node" if f["kind"] == "hung" else "link", tuple(sorted(
        f["hosts"], key=m.nodes.index))): f for f in h.faults}

    def case(kind: str, hosts: list[str], cleared: bool) -> Testcase:
        found, through = named.get((kind, tuple(hosts))), drain & set(hosts)
        fault = faults.get((kind, tuple(hosts)))
        if fault:
            return Testcase(f"health.{kind}", " ".join(hosts), WORDS[fault["kind"]],
                            f"{fault_where(fault['hosts'])}: {fault['evidence']}; "
                            f"{REMEDY[fault['kind']]}", True)
        if found:
            word, text = "suspect", (
                f"{_what(found)}: {units.rate(found.measured / 1e6, 1)} MB/s against "
                f"{units.rate(found.expected / 1e6, 1)} expected, ratio "
                f"{units.ratio(found.ratio)} (interval {_ci(found)}), p "
                f"{units.p_value(found.p_value)}; {REMEDY[kind]}")
        elif h.note:
            word, text = INCONCLUSIVE, h.note
        elif through:
            word, text = UNDETERMINED, f"through drained node {', '.join(sorted(through))}"
        else:
            word = "cleared" if cleared else UNDETERMINED
            text = f"{word} at the threshold {threshold}"
        return Testcase(f"health.{kind}", " ".join(hosts), word, text, bool(found))

    nodes, both = m.nodes, h.links_cleared
    cleared = set(h.cleared)
    cases = [case("node", [n], n in cleared) for n in nodes]
    cases += [case("link", [a, nodes[j]], both is not None and bool(both[i, j] and both[j, i]))
              for i, a in enumerate(nodes) for j in range(i + 1, len(nodes))]
    cases += [Testcase("health.step", _what(c), "suspect", f"ratio {units.ratio(c.ratio)}; "
                       f"{REMEDY['step']}", True) for c in h.suspects if c.kind == "step"]
    return cases


def junit(h: Health, cases: list[Testcase], fail_on: str | None = None) -> str:
    """JUnit XML for CI (the verdict core's writer)."""
    return junit_xml(f"commscope health {h.matrices.pattern}", cases, fail_on)


def prometheus(h: Health) -> str:
    """The text exposition format (prometheus.io, "Exposition formats"): per pair bandwidth
    and latency, per node score, one series per suspect, and the check's time."""
    import time

    m = h.matrices
    pattern = m.pattern
    bw, lat = m.median("bandwidth"), m.median("latency")
    pairs = [(x, y) for x in range(len(m.nodes)) for y in range(len(m.nodes)) if x != y]
    return exposition([
        ("commscope_health_pair_bandwidth_bytes_per_second", "gauge",
         f"bandwidth from source to dest at {m.bandwidth_bytes} B, median over launches",
         [({"source": m.nodes[x], "dest": m.nodes[y], "pattern": pattern}, float(bw[x, y]))
          for x, y in pairs]),
        ("commscope_health_pair_latency_seconds", "gauge",
         f"latency between the nodes at {m.latency_bytes} B, median over launches",
         [({"source": m.nodes[x], "dest": m.nodes[y], "pattern": pattern}, float(lat[x, y]))
          for x, y in pairs]),
        ("commscope_health_node_score", "gauge",
         "the node's bandwidth over the typical node's (1: typical)",
         [({"host": n, "pattern": pattern}, s) for n, s in h.node_scores().items()]),
        ("commscope_health_suspect", "gauge",
         "1 for each node, link or distance named slower than the rest beyond doubt",
         [({"kind": f["kind"], "hosts": ",".join(f["hosts"]), "distance": "",
            "pattern": pattern, "ratio": ""}, 1.0) for f in h.faults]
         + [({"kind": c.kind, "hosts": ",".join(c.hosts),
              "distance": "" if c.distance is None else c.distance, "pattern": pattern,
              "ratio": f"{c.ratio:.3f}"}, 1.0) for c in h.suspects]),
        ("commscope_health_drain", "gauge", "1 for each node the check would drain",
         [({"host": n}, 1.0) for n in h.drain]),
        ("commscope_health_last_run_timestamp_seconds", "gauge",
         "when this check finished (Unix time)", [({"pattern": pattern}, time.time())]),
    ])
