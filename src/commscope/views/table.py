"""The terminal table: one row per case."""

from __future__ import annotations

import numpy as np

from ..sizes import format_bytes

HEADER = ("kernel", "mode", "size", "n", "median us", "95% CI us", "+-", "p5 us", "p95 us", "MB/s")
FOOTER = ("latency: half round trip (pingpong), one exchange (pingping), time per window "
          "slot (bw, bibw), one epoch of W operations (rma), one iteration of the slowest rank (fanin, ring, collectives, "
          "vector_sum, halo); +-: the CI's reach from the median (* stopped by --max-time); "
          "MB/s with MB = 10^6 bytes")


def library_label(version_text: str | None) -> str:
    """The first phrase of MPI_Get_library_version's text: "Open MPI v5.0.11", "MPICH Version: 5.0.2"."""
    if not version_text:
        return "MPI unknown"
    return " ".join(version_text.splitlines()[0].split(",")[0].split())


def _us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.3f}"


def _precision(s: dict) -> str:
    """The CI's reach from the median in %, starred when --max-time stopped the case short."""
    if s["precision"] is None:
        return "-"
    return f"{s['precision'] * 100:.1f}%" + ("*" if s["capped"] else "")


def _row(s: dict) -> tuple[str, ...]:
    if s["ci_low_s"] is None:
        ci = "n<6"
    else:
        ci = f"{_us(s['ci_low_s'])}-{_us(s['ci_high_s'])}"
    bw = s["bandwidth_MBps"]
    # Kernels without send modes name their parameters there (rma: put fence allocate).
    mode = s["send_mode"] or " ".join(map(str, (s.get("params") or {}).values())) or "-"
    return (s["kernel"], mode, format_bytes(s["bytes"]), str(s["n"]),
            _us(s["median_s"]), ci, _precision(s), _us(s["p05_s"]), _us(s["p95_s"]),
            "-" if bw is None or s["bytes"] == 0 else f"{bw:,.1f}")


def render(summaries: list[dict]) -> str:
    rows = [HEADER] + [_row(s) for s in summaries]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    left = {0, 1}  # names read left-aligned, numbers right-aligned
    lines = ["  ".join(c.ljust(w) if i in left else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines + [FOOTER])


MAX_RANK_COLUMNS = 16


def render_ranks(cases, rank_samples) -> str:
    """Each rank's own median time per iteration (us), one row per case: who waits."""
    ranks = min(max(len(r) for r in rank_samples), MAX_RANK_COLUMNS)
    header = ("mode", "size") + tuple(f"rank {r}" for r in range(ranks))
    rows = [header]
    for case, per_rank in zip(cases, rank_samples):
        rows.append((case.send_mode or "-", format_bytes(case.bytes),
                     *(_us(float(np.median(per_rank[r]))) for r in range(min(ranks, len(per_rank))))))
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows]
    more = " (first 16 ranks)" if max(len(r) for r in rank_samples) > ranks else ""
    return "\n".join(["per-rank median us per iteration (send completion for fanin)" + more]
                     + lines)


def render_phases(summaries: list[dict]) -> str:
    """Median time per phase (slowest rank per sample), one row per case."""
    names = list(summaries[0].get("phase_median_s", {}))
    rows = [("size",) + tuple(f"{n} us" for n in names)]
    for s in summaries:
        rows.append((format_bytes(s["bytes"]), *(_us(s["phase_median_s"][n]) for n in names)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows])
