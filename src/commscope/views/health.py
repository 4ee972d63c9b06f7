"""`commscope health` in the terminal, as JSON (a contract: docs/health.md), JUnit XML and
Prometheus text exposition."""

from __future__ import annotations

import math

import numpy as np

from ..system import units
from ..stats.verdict import ALPHA
from ..stats.verdict.health import FAULTS, REMEDY, fault_where, tournament_rounds
from ..system.sizes import format_bytes
from ..stats.verdict import Testcase, more_launches
from ..stats.verdict import junit as junit_xml
from ..stats.verdict.claim import testcase
from .expected import share, sources
from .glossary import defined
from .prometheus import exposition
from .tables import Table


def _what(c) -> str:
    if c.kind == "step":
        return f"distance {c.distance}"
    return c.direction if c.kind == "link" else c.hosts[0]


def _row(c) -> tuple[str, ...]:
    e = c.claim.evidence
    return (c.kind, _what(c), units.rate(e["measured"], 1), units.rate(e["expected"], 1),
            *c.claim.cells()[:3])


def suspects_table(h) -> Table:
    """The faults traced (no figures: nothing was measured between them), then the
    suspects; the footer defines its abbreviations."""
    faults = [(FAULTS[f["kind"]], fault_where(f["hosts"]), *"-----") for f in h.faults]
    return Table(("kind", "where", "MB/s", "expected MB/s", "ratio", "95% CI", "p (BH)"),
                 faults + [_row(c) for c in h.suspects], align="l", rule=True,
                 footer=defined("MB/s", "95% CI", "p (BH)"))


def drain_line(h) -> str:
    """The drain list, and how many nodes the check could neither name nor clear."""
    line = f"drain: {' '.join(h.drain) or 'none named'}"
    if h.unresolved:
        line += (f"; {len(h.unresolved)} of {len(h.matrices.nodes)} nodes unresolved "
                 f"({' '.join(h.unresolved)}): "
                 f"{more_launches('health', given=h.matrices.launches)}")
    return line


def render(h, run_id: int, db: str, expected: list[dict] | None = None) -> str:
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
        lines += [f"{FAULTS[f['kind']]} {fault_where(f['hosts'])}: {f['evidence']}; measured "
                  f"again without it; remedy: {REMEDY[f['kind']]}" for f in h.faults]
        lines += [f"remedy for {c.kind} {_what(c)}: {c.claim.remedy}" for c in h.suspects]
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
    lines += expected_lines(expected or [])
    lines.append(drain_line(h))
    return "\n".join(lines)


def expected_json(items: list[dict]) -> list[dict]:
    """measured_against's items as health's JSON lists them."""
    return [{**i, "of_expected": i["of_expected"] and i["of_expected"].as_dict()}
            for i in items]


def expected_lines(items: list[dict]) -> list[str]:
    """"Is this normal?" for the cases the check measured (views/expected.py's items), a
    line per size: the range of their shares of the expected level, and each case whose
    share lies beyond its band, by its round or distance."""
    varied = {k for i in items for k, v in i["params"].items()
              if any(j["params"].get(k) != v for j in items)}
    lines = []
    for nbytes in dict.fromkeys(i["bytes"] for i in items):
        judged = [i for i in items if i["bytes"] == nbytes and i["of_expected"] is not None]
        if not judged:
            continue
        label = {id(i): " ".join(f"{k}={v}" for k, v in sorted(i["params"].items())
                                 if k in varied) or format_bytes(nbytes) for i in judged}
        ratios = [i["of_expected"].ratio for i in judged]
        spread = units.percent(min(ratios), decimals=0) + (
            "" if len(judged) == 1 else f" to {units.percent(max(ratios), decimals=0)}")
        line = (f"of expected at {format_bytes(nbytes)}: {spread} over {len(judged)} "
                f"case{'s' * (len(judged) > 1)}, "
                + sources([(label[id(i)], i["of_expected"]) for i in judged]))
        banded = [i for i in judged if i["of_expected"].ci is not None]
        beyond = [i for i in banded if not i["of_expected"].ci[0] <= 1
                  <= i["of_expected"].ci[1]]
        if banded:
            line += "; beyond the expected band: " + (", ".join(
                f"{label[id(i)]} {share(i['of_expected'])}" for i in beyond) or "none")
        lines.append(line)
    return lines


def _median_of(m, x: int, which: str = "bandwidth") -> float:
    """Node x's median over its pairs, both ends (the launches' median first)."""
    med = m.median(which)
    values = np.concatenate([med[x], med[:, x]])
    values = values[np.isfinite(values)]
    return float(np.median(values)) if values.size else math.nan


def _matrix(values: np.ndarray, scale: float = 1.0) -> list[list[float | None]]:
    return [[float(v) * scale if np.isfinite(v) else None for v in row] for row in values]


def as_json(h) -> dict:
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
           + [c.as_dict() for c in h.suspects],
           "drain": h.drain, "cleared": h.cleared, "unresolved": h.unresolved,
           "detectable_ratio": h.detectable,
           "note": h.note}
    if m.pattern == "shift":
        out["by_distance"] = {"distances": list(range(1, len(m.nodes))),
                              "bandwidth_MBps": _matrix(m.by_distance("bandwidth"), 1e-6),
                              "latency_s": _matrix(m.by_distance("latency"))}
    return out


def testcases(h) -> list[Testcase]:
    """Health's claims (Health.verdicts) as JUnit and the exit status read them: one per
    node and per link, each step named; a suspect fails, a cleared one passes, one neither
    is undetermined or inconclusive (never a pass)."""
    return [testcase(c) for c in h.verdicts()]


def junit(h, cases: list[Testcase], fail_on: str | None = None) -> str:
    """JUnit XML for CI (the verdict core's writer)."""
    return junit_xml(f"commscope health {h.matrices.pattern}", cases, fail_on)


def prometheus(h) -> str:
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
              "ratio": f"{c.claim.ratio:.3f}"}, 1.0) for c in h.suspects]),
        ("commscope_health_drain", "gauge", "1 for each node the check would drain",
         [({"host": n}, 1.0) for n in h.drain]),
        ("commscope_health_last_run_timestamp_seconds", "gauge",
         "when this check finished (Unix time)", [({"pattern": pattern}, time.time())]),
    ])
