"""Where every figure came from: per run the MPI, hosts, placement, transport, timer,
command line and time, and every warning stored with it (advice.py), led by the same
quality block the terminal shows."""

from __future__ import annotations

import json
import shlex
from collections import Counter

from ...store import names
from ...stats.advice import KINDS, options, remedy
from ...system.sizes import format_bytes
from ..tables import Table
from .data import ReportData, RunData
from .html import Html, Section, el, section, table

ALL_LEFT = "l" * 9  # provenance is words, not numbers


def by_kind(warnings) -> str:
    """A run's warnings counted by kind, in the quality block's order: "capped 1, slow_first 3"."""
    counts = Counter(w.kind for w in warnings)
    order = list(KINDS)
    return ", ".join(f"{kind} {counts[kind]}" for kind in sorted(
        counts, key=lambda k: (order.index(k) if k in order else len(order), k))) or "none"


def overview(data: ReportData) -> Html:
    rows = [(r.id, r.row.kernel, r.row.ranks, names.status(r.row), len(r.labels),
             names.library(r.row.mpi_version), r.row.started_utc,
             by_kind(r.warnings)) for r in data.runs]
    return table(Table(("run", "kernel", "ranks", "status", "cases", "MPI", "started (UTC)",
                        "warnings by kind"), rows, align=ALL_LEFT))


def _compact(value) -> str:
    return "-" if value in (None, "", {}, []) else (
        value if isinstance(value, str) else json.dumps(value, sort_keys=True))


def _facts(run: RunData) -> list[tuple[str, object]]:
    row, ctx, s = run.row, run.context, run.settings
    sweep = "-" if run.sweep is None else (
        f"sweep {run.sweep.id} \"{run.sweep.name}\" (plan {run.sweep.plan_path}, "
        f"created {run.sweep.created_utc}), launch {row.launch}")
    return [
        ("command line", el("code", shlex.join(run.command))),
        ("status", row.status + (f": {row.message}" if row.message else "")),
        ("started / finished (UTC)", f"{row.started_utc} / {row.finished_utc or '-'}"),
        ("native start (UTC)", ctx.get("utc", "-")),
        ("sweep", sweep),
        ("MPI library", el("pre", row.mpi_version or "-")),
        ("MPI standard", ctx.get("mpi_standard", "-")),
        ("hosts", ", ".join(ctx.get("hosts", [])) or "-"),
        ("ranks", f"{row.ranks}" + (" (oversubscribed: more ranks than cores)"
                                    if row.oversubscribed else " (not oversubscribed)")),
        ("placement requested", f"map-by {s.get('map_by') or 'default'}, "
                                f"bind-to {s.get('bind_to') or 'default'}"),
        ("transport requested", s.get("transport", "auto")),
        ("library_transport", _compact(ctx.get("library_transport"))),
        ("library_protocols", _compact(ctx.get("library_protocols"))),
        ("timer", names.timer(ctx["timer"]) if ctx.get("timer") else "-"),
        ("sync", s.get("sync", "barrier")),
        ("kernel parameters", _compact(s.get("params"))),
        ("settings", _compact({k: v for k, v in s.items()
                               if k not in ("params", "map_by", "bind_to", "transport", "sync")})),
        ("compiler", ctx.get("compiler", "-")),
        ("native command", el("code", shlex.join(ctx.get("argv", [])) or "-")),
        # the record as the native side wrote it, its fields in its own order
        ("case in flight when it stopped",
         _compact(json.dumps(row.in_flight) if row.in_flight else None)),
    ]


def _case_names(run: RunData) -> dict[int, str]:
    return {i: f"{names.case(*label[:3])} {label[4]} ranks" for i, label in run.labels.items()}


def _run(run: RunData) -> list[Html]:
    out = [el("h3", f"Run {run.id}: {run.row.kernel} on {run.row.ranks} ranks"),
           table(Table(None, _facts(run), align=ALL_LEFT))]
    placement = run.context.get("placement") or []
    if placement:
        out.append(table(Table(("rank", "host", "cpu", "binding"),
                               [(p.get("rank"), p.get("host"), p.get("cpu"), p.get("binding"))
                                for p in placement], align=ALL_LEFT)))
    if run.skips:
        out.append(table(Table(("skipped", "size", "reason"),
                               [(" ".join(filter(None, (s.kernel, s.send_mode))),
                                 format_bytes(s.bytes), s.reason) for s in run.skips],
                               align=ALL_LEFT)))
    case_names = _case_names(run)
    if run.warnings:
        settings = options(run.settings, run.context,
                           any(w.kind == "oversubscribed" for w in run.warnings),
                           run.row.family)
        out.append(table(Table(("warning", "case", "what was seen", "remedy"),
                               [(w.kind, case_names.get(w.case_id, "whole run"),
                                 w.message,
                                 remedy(w.kind, settings))
                                for w in run.warnings], align=ALL_LEFT)))
    else:
        out.append(el("p", "No warnings stored for this run."))
    return out


def render(data: ReportData) -> Section:
    body = [el("p", "Per run: what ran, where and how, as stored with it; every warning "
               "stored with the run (thresholds in src/commscope/stats/advice.py).")]
    if data.quality:
        body.append(el("pre", "\n".join(data.quality)))
    for run in data.runs:
        body += _run(run)
    return section("provenance", "Provenance and warnings", *body)
