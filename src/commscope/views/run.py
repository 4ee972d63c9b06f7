"""A run in the terminal: its cases' table, per-rank and per-phase times, the list of
stored runs and a run's provenance; what a launch prints when it ends."""

from __future__ import annotations

import numpy as np

from .. import names, units
from ..kernels import meaning
from ..sizes import format_bytes
from .tables import Table

HEADER = ("kernel", "mode", "size", "launches", "n", "median us", "95% CI us", "+-", "spread",
          "p5 us", "p95 us", "MB/s", "warnings")
# Shown where a case has them: collectives (and other kernels timed by the slowest rank);
# a nonblocking collective's overlap leads, before its pure time.
RANK_MEAN, BUSBW, CEILING, OVERLAP = "rank-mean us", "busbw MB/s", "of ceiling", "overlap %"
FOOTER = ("latency: half round trip (pingpong), one exchange (pingping), time per window "
          "slot (bw, bibw), one epoch of W operations (rma), one call of the slowest rank "
          "after a barrier (collectives; a nonblocking one's pure call and wait), one "
          "iteration of the slowest rank (fanin, ring, vector_sum, halo); median and 95% CI: "
          "of the launches' medians (docs/statistics.md), within the launch for one launch; "
          "+-: the CI's reach "
          "from the median (* a launch stopped by its share of --max-time); spread: which "
          "varies more, the launches' medians or a launch's own (CV), '?' where one launch "
          "cannot tell; MB/s with MB = 10^6 bytes; of ceiling: MB/s over the copy ceiling "
          "measured in the same launch (docs/native.md); warnings: the quality block's kinds")
COLLECTIVE_FOOTER = (f"collectives: MB/s is the algorithm bandwidth S/t and {BUSBW} the bus "
                     "bandwidth, as nccl-tests; median us is the slowest rank's, "
                     f"{RANK_MEAN} the mean over ranks")
OVERLAP_FOOTER = (f"{OVERLAP}: 100 (1 - (overlapped - compute) / pure), at least 0, the share "
                  "of a nonblocking collective a compute as long as it hides, as OSU computes it")
# How a figure relates to the reference suites' (docs/references.md).
REFERENCES = ("vs OSU and IMB: point-to-point, a median of timed batches of iterations, where "
              "OSU prints a mean over iterations each timed by its own MPI_Wtime reads and "
              "IMB a mean over one timed loop; collectives, the slowest rank's median of "
              "single calls each started by a barrier, as OSU times them: set it against "
              "OSU's Max Latency (-f), rank-mean against its average; bw and bibw count bytes "
              "as osu_bw and osu_bibw")
MAX_RANK_COLUMNS = 16


def _precision(s: dict) -> str:
    """The CI's reach from the median in %, starred when --max-time stopped the case short."""
    return units.percent(s["precision"]) + ("*" if s["capped"] and s["precision"] is not None
                                             else "")


def spread(s: dict) -> str:
    """The dominant variance component: launches (between) or samples (within), with its CV;
    '?' for one launch without history."""
    if s.get("dominant") is None:
        return "?" if s.get("launches", 1) == 1 and s["n"] else units.MISSING
    if s["dominant"] == "between":
        return f"launches {units.percent(s['between_launch_cv'])}"
    return f"samples {units.percent(s['within_launch_cv'])}"


def _row(s: dict, mark: str) -> tuple[str, ...]:
    ci = f"{units.us(s['ci_low_s'])}-{units.us(s['ci_high_s'])}" if s["ci_low_s"] is not None \
        else "no samples" if s.get("printed") is not None else "n<6"
    # Kernels without send modes name their parameters there (bw: recv-buffers=one).
    mode = s["send_mode"] or " ".join(f"{k.replace('_', '-')}={v}" for k, v in
                                      (s.get("params") or {}).items()) or "-"
    bandwidth = None if s["bytes"] == 0 else s["bandwidth_MBps"]
    return (s["kernel"], mode, format_bytes(s["bytes"]), str(s.get("launches", 1)), str(s["n"]),
            units.percent(None if s.get("overlap_pct") is None else s["overlap_pct"] / 100,
                          decimals=0),
            units.us(s["median_s"]), ci, _precision(s), spread(s), units.us(s["p05_s"]),
            units.us(s["p95_s"]), units.rate(bandwidth, 1, missing=units.MISSING),
            units.us(s.get("rank_mean_median_s")),
            units.rate(None if s["bytes"] == 0 else s.get("busbw_MBps"), 1,
                       missing=units.MISSING),
            units.percent(s.get("ceiling_fraction"), decimals=0), mark)


def render(summaries: list[dict], marks: list[str] | None = None) -> str:
    """One row per case: median latency, its CI and reach, percentiles, bandwidth (and a
    collective's mean over ranks and bus bandwidth), and the kinds of warning about it
    (`marks`, in the same order)."""
    marks = marks or [""] * len(summaries)
    header = HEADER[:5] + (OVERLAP,) + HEADER[5:-1] + (RANK_MEAN, BUSBW, CEILING) + HEADER[-1:]
    rows = [_row(s, m) for s, m in zip(summaries, marks)]
    shown = [i for i in range(len(header))
             if header[i] not in (OVERLAP, RANK_MEAN, BUSBW, CEILING)
             or any(r[i] != units.MISSING for r in rows)]
    collective = any(s.get("busbw_MBps") is not None for s in summaries)
    overlap = any(s.get("overlap_pct") is not None for s in summaries)
    footer = "\n".join([FOOTER] + ([COLLECTIVE_FOOTER] if collective else [])
                       + ([OVERLAP_FOOTER] if overlap else []) + [REFERENCES])
    return Table(tuple(header[i] for i in shown), [tuple(r[i] for i in shown) for r in rows],
                 align="ll", rule=True, footer=footer).text()


def rank_times(case, rank_samples) -> np.ndarray | None:
    """ranks x samples: each rank's own time per iteration where the kernel has one to show
    (kernels.Meaning.rank_times); `rank_samples(case_id)` reads the stored ones."""
    which = meaning(case.kernel).rank_times
    if which is None:
        return None
    if which == "samples":
        return rank_samples(case.id)
    return np.asarray(case.extra["phase_samples_s"][which], dtype=float)


def render_ranks(cases, per_rank: list[np.ndarray]) -> str:
    """Each rank's own median time per iteration (us), one row per case: who waits."""
    ranks = min(max(len(r) for r in per_rank), MAX_RANK_COLUMNS)
    rows = [(case.send_mode or "-", format_bytes(case.bytes),
             *(units.us(float(np.median(times[r]))) for r in range(min(ranks, len(times)))))
            for case, times in zip(cases, per_rank)]
    more = " (first 16 ranks)" if max(len(r) for r in per_rank) > ranks else ""
    return Table(("mode", "size") + tuple(f"rank {r}" for r in range(ranks)), rows,
                 title="per-rank median us per iteration (send completion for fanin)" + more
                 ).text()


def render_phases(summaries: list[dict]) -> str:
    """Median time per phase (slowest rank per sample), one row per case."""
    phases = list(summaries[0].get("phase_median_s", {}))
    rows = [(format_bytes(s["bytes"]), *(units.us(s["phase_median_s"][p]) for p in phases))
            for s in summaries]
    return Table(("size",) + tuple(f"{p} us" for p in phases), rows).text()


def render_runs(runs) -> str:
    """`results list`: one line per stored run."""
    rows = [(r["id"], r["started_utc"], names.status(r), r["kernel"], r["ranks"], r["n_launches"],
             r["n_cases"], names.library(r["mpi_version"])
             + ("  (oversubscribed)" if r["oversubscribed"] else ""))
            for r in runs]
    return Table(("run", "started (UTC)", "status", "kernel", "ranks", "launches", "cases", "MPI"),
                 rows, align="rlllrrrl").text()


def imported_from(source: dict) -> str:
    """`results show` of an imported run: where its figures come from and what they are."""
    return (f"imported from {source['file']}: {source['tool']} {source['version']} "
            f"{source['benchmark']}; median us is its {source['metric']} as printed "
            f"({source['definition']}); no raw samples, so no interval, spread or p-value")


def render_provenance(ctx: dict, oversubscribed: bool) -> str:
    """`results show`: the MPI, where each rank ran, the timer and the compiler."""
    placement = ", ".join(f"{p['rank']}@{p['host']}:cpu{p['cpu']}" for p in ctx["placement"])
    return (f"MPI: {names.library(ctx['mpi_library_version'])} (MPI {ctx['mpi_standard']})\n"
            f"ranks: {ctx['ranks']}{' oversubscribed' if oversubscribed else ''}; "
            f"placement: {placement}\n"
            f"timer: {names.timer(ctx['timer'])}; compiler {ctx['compiler']}")
