"""Prometheus's text exposition format (prometheus.io/docs/instrumenting/exposition_formats),
written for node_exporter's textfile collector by `health --prom` and `results export
--format prom` (through cli/common.write_atomic, so the collector never reads half a file)."""

from __future__ import annotations

import math


def exposition(families) -> str:
    """`families`: (name, type, help, [(labels, value), ...]); a value that is not finite
    is left out (no sample rather than NaN)."""
    out = []
    for name, kind, text, samples in families:
        out.append(f"# HELP {name} {text}")
        out.append(f"# TYPE {name} {kind}")
        out.extend(f"{name}{_labels(labels)} {float(value)!r}" for labels, value in samples
                   if math.isfinite(value))
    return "\n".join(out) + "\n"


def _labels(labels: dict) -> str:
    return "{" + ",".join(f'{k}="{_escaped(str(v))}"' for k, v in labels.items()) + "}"


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def watch(found) -> str:
    """A watch's cases for a dashboard (watch.history.Series each): per case its latest
    probe's time, its expected level and two indicators, 1 while its level is a step's
    new within watch.history.FRESH probes and 1 while it flaps between probes; a case with
    no expected level has no expected sample."""
    def labels(s) -> dict:
        return {"watch": s.watch, "case": s.name}

    latest = [(s, s.measured[-1]) for s in found if s.measured]
    return exposition([
        ("commscope_watch_latency_seconds", "gauge",
         "time per operation at the latest probe, the mean log median of its launches",
         [(labels(s), p.median_s) for s, p in latest]),
        ("commscope_watch_expected_seconds", "gauge",
         "the level expected: the case's robust level since its last step or segment",
         [(labels(s), s.expected.level_s) for s, _ in latest if s.expected]),
        ("commscope_watch_step", "gauge",
         "1 while the case's level is a step's, found in the last probes; else 0",
         [(labels(s), float(s.stepped())) for s, _ in latest]),
        ("commscope_watch_flapping", "gauge",
         "1 while the case alternates between two levels from probe to probe; else 0",
         [(labels(s), float(bool(s.flapping and s.flapping.claim.failing)))
          for s, _ in latest])])
