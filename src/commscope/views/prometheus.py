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
