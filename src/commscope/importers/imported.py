"""Results of the field's other tools (OSU, IMB, nccl-tests) as commscope runs.

An imported run holds the figures the tool printed, one case per printed size,
and no raw samples: a statistic that needs samples (an interval, a spread, a
p-value, a bootstrap) is left out and says why, never made up. This module
says what each printed figure is in commscope's terms (importers/ reads the
text; the store keeps both the printed tokens and these figures).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import ImportedRow, ImportedRun

# Kernels whose time commscope takes from the slowest rank (native: timed_by max).
COLLECTIVES = {"allreduce", "allgather", "alltoall", "bcast", "reduce", "reduce_scatter",
               "gather", "scatter", "scan", "barrier", "allgatherv", "alltoallv", "gatherv",
               "scatterv", "reduce_scatter_block", "exscan"}
# Bytes a bandwidth-only benchmark's figure counts per message: bibw both directions.
BANDWIDTH_BYTES = {"bw": 1, "bibw": 2, "uniband": 1, "biband": 2}
MB, GB = 1e6, 1e9


def _us(figures: dict, *names: str) -> float | None:
    for name in names:
        if figures.get(name) is not None:
            return figures[name] * 1e-6
    return None


def figures(run: ImportedRun, row: ImportedRow) -> dict:
    """The printed figures of one size as commscope's: median_s (the tool's headline time
    in commscope's latency definition), bandwidth_MBps, busbw_MBps and rank_mean_median_s.
    A figure the tool did not print stays None."""
    f = row.figures
    collective = run.kernel in COLLECTIVES
    bandwidth = f.get("bandwidth_MBps")
    if f.get("algbw_GBps") is not None:
        bandwidth = f["algbw_GBps"] * GB / MB
    # IMB's t_max is the slowest rank's, as commscope's collective time; its t_avg and
    # OSU's "Avg Latency" average over ranks.
    median = _us(f, "t_max_us", "latency_us", "t_us", "t_avg_us", "time_us")
    if median is None and bandwidth and run.kernel in BANDWIDTH_BYTES:
        median = BANDWIDTH_BYTES[run.kernel] * row.bytes / (bandwidth * MB)
    return {"median_s": median,
            "bandwidth_MBps": bandwidth,
            "busbw_MBps": f["busbw_GBps"] * GB / MB if f.get("busbw_GBps") is not None else None,
            "rank_mean_median_s": _us(f, "t_avg_us", "latency_us") if collective else None}


# IMB's Sendrecv and Exchange are commscope's ring kernel in those patterns (kernels.py).
AS_RING = {"sendrecv", "exchange"}


def kernel_params(run: ImportedRun) -> tuple[str, dict]:
    """The commscope kernel and parameters an imported run is stored as."""
    if run.tool == "imb" and run.kernel in AS_RING:
        return "ring", {"pattern": run.kernel}
    return run.kernel, {}


def family(run: ImportedRun) -> str:
    return "collective" if run.kernel in COLLECTIVES else "point-to-point"


def source(run: ImportedRun, path: str) -> dict:
    """What the store keeps about where an imported run came from."""
    return {"tool": run.tool, "version": run.version, "benchmark": run.benchmark,
            "file": path, "metric": run.metric, "definition": run.definition,
            "header": run.header}


def stored(run: ImportedRun, path: str, started_utc: str) -> tuple[dict, list[dict]]:
    """The run's fields and its case records as Store.add_imported takes them."""
    kernel, params = kernel_params(run)
    return ({"started_utc": started_utc, "command": ["commscope", "import", path],
             "kernel": kernel, "ranks": run.ranks or 0, "family": family(run),
             "settings": {"params": params, "imported": True}, "source": source(run, path)},
            [_case_record(run, kernel, row) for row in run.rows])


def _case_record(run: ImportedRun, kernel: str, row: ImportedRow) -> dict:
    """A case record as the store takes one, without samples."""
    return {"kernel": kernel, "send_mode": None, "bytes": row.bytes,
            "ranks": run.ranks or 0, "window": None, "batch": 0, "warmup_iterations": 0,
            "validated": False, "timed_by": "max" if run.kernel in COLLECTIVES else "origin",
            "samples_s": [], "rank_samples_s": [],
            "imported": figures(run, row), "printed": dict(row.printed)}
