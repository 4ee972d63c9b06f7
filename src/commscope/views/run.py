"""A run in the terminal: its cases' table, per-rank and per-phase times, the list of
stored runs and a run's provenance; what a launch prints when it ends."""

from __future__ import annotations

import math

import numpy as np

from ..store import names
from ..system import units
from ..system.kernels import meaning
from ..system.sizes import format_bytes
from ..stats.summary import FIGURE, CaseSummary
from .expected import share, sources
from .tables import Table

# What a newcomer reads first: the operation's time, its interval, its rate and the flags
# (advice.py); --wide adds how it was measured. The definitions are in docs/statistics.md
# ("The table") and docs/references.md.
RANK_MEAN, BUSBW, CEILING, OVERLAP = "rank-mean us", "busbw MB/s", "of ceiling", "overlap %"
EXPECTED = "of expected"
WITHHELD = "withheld"  # a rate above the copy ceiling: see its flag
TIME = "time us"
HEADER = ("kernel", "mode", "size", OVERLAP, TIME, "95% CI us", "MB/s", CEILING,
          EXPECTED, "flags")
WIDE = ("kernel", "mode", "size", "launches", "n", OVERLAP, TIME, "95% CI us", "x/",
        "spread", "p5 us", "p95 us", "p99 us", "MB/s", RANK_MEAN, BUSBW, CEILING, EXPECTED,
        "flags")
# Shown only where a case has them: a nonblocking collective's overlap (which leads, before
# its pure time), a collective's mean over ranks and bus bandwidth, the copy ceiling, an
# expected level (run and sweep give one: views/expected.py).
WHERE_GIVEN = (OVERLAP, RANK_MEAN, BUSBW, CEILING, EXPECTED)
EXPECTED_LEGEND = ("of expected: the time over the case's expected level, in brackets over "
                   "its 95% band's ends")
MEASURED = (f"time: us per operation, {FIGURE}; 95% CI: over launches (docs/statistics.md, "
            "'The table')")
PRINTED = "time: us per operation as the imported file printed it, so no 95% CI"
LEGEND = ("; MB/s: 10^6 B/s\n"
          "of ceiling: of the copy ceiling measured beside it; flags: their lines below; "
          "--wide: how it was measured")
WIDE_LEGEND = ("x/: the interval as a factor of the time (* a launch stopped by --max-time); "
               "spread: the larger part, launches' medians or a launch's own (CV)\n"
               f"collectives: time the slowest rank's, {RANK_MEAN} the mean over ranks, "
               f"{BUSBW} as nccl-tests; {OVERLAP} as OSU computes it")
MAX_RANK_COLUMNS = 16


def _factor(s: CaseSummary) -> str:
    """The interval as a factor: median x/ f, f = sqrt(high / low), starred when --max-time
    stopped the case short; never a +- percent, which can reach below zero."""
    if s.ci_low_s is None or not s.ci_low_s > 0:
        return units.MISSING
    factor = math.sqrt(s.ci_high_s / s.ci_low_s)
    return f"{factor:.2f}" + ("*" if s.capped else "")


def _launches(s: CaseSummary) -> str:
    """The launches the figures come from, and those left out in another state (states.py):
    '5, 1 out'."""
    out = len({o.launch for o in s.other_state})
    return str(s.launches) + (f", {out} out" if out else "")


def spread(s: CaseSummary) -> str:
    """The dominant variance component: launches (between) or samples (within), with its CV;
    '?' for one launch without history."""
    if s.dominant is None:
        return "?" if s.launches == 1 and s.n else units.MISSING
    if s.dominant == "between":
        return f"launches {units.percent(s.between_launch_cv)}"
    return f"samples {units.percent(s.within_launch_cv)}"


def _cells(s: CaseSummary) -> dict[str, str]:
    ci = f"{units.us(s.ci_low_s)}-{units.us(s.ci_high_s)}" if s.ci_low_s is not None \
        else "disagree" if s.disagree \
        else "no samples" if s.printed is not None else "n<6"
    # Kernels without send modes name their parameters there (bw: recv-buffers=one).
    mode = s.send_mode or " ".join(f"{k.replace('_', '-')}={v}" for k, v in
                                      (s.params or {}).items()) or "-"
    bandwidth = None if s.bytes == 0 else s.bandwidth_MBps
    # no transfer moves bytes faster than one core copies them: such a rate is withheld,
    # its flag (above_ceiling) says by how much
    above = (s.ceiling_fraction or 0) > 1
    overlap = None if s.overlap_pct is None else s.overlap_pct / 100
    return {"kernel": s.kernel, "mode": mode, "size": format_bytes(s.bytes),
            "launches": _launches(s), "n": str(s.n),
            OVERLAP: units.percent(overlap, decimals=0),
            TIME: units.us(s.median_s), "95% CI us": ci, "x/": _factor(s),
            "spread": spread(s), "p5 us": units.us(s.p05_s),
            "p95 us": units.us(s.p95_s), "p99 us": units.us(s.p99_s),
            "MB/s": WITHHELD if above else units.rate(bandwidth, 1, missing=units.MISSING),
            RANK_MEAN: units.us(s.rank_mean_median_s),
            BUSBW: units.rate(None if s.bytes == 0 else s.busbw_MBps, 1,
                              missing=units.MISSING),
            CEILING: WITHHELD if above else units.percent(s.ceiling_fraction, decimals=0),
            EXPECTED: share(s.of_expected, short=True),
            "flags": ",".join(s.flags or ())}


def render(summaries: list[CaseSummary], wide: bool = False) -> str:
    """One row per case: the median, its interval, the bandwidth (and its share of the copy
    ceiling) and the case's flags; `wide`, also the launches, samples, the interval as a
    factor, the larger variance part, percentiles, and a collective's mean over ranks and
    bus bandwidth."""
    rows = [_cells(s) for s in summaries]
    shown = [h for h in (WIDE if wide else HEADER)
             if h not in WHERE_GIVEN or any(r[h] != units.MISSING for r in rows)]
    printed = all(s.printed is not None for s in summaries)
    footer = (PRINTED if printed else MEASURED) + LEGEND + ("\n" + WIDE_LEGEND if wide else "")
    if EXPECTED in shown:
        modes = len({r["mode"] for r in rows}) > 1  # a size alone names a case otherwise
        footer += f"\n{EXPECTED_LEGEND}\n" + sources(
            [((f"{r['mode']} " if modes else "") + r["size"], s.of_expected)
             for r, s in zip(rows, summaries)])
    return Table(tuple(shown), [tuple(r[h] for h in shown) for r in rows], align="ll",
                 rule=True, footer=footer).text()


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


def render_phases(summaries: list[CaseSummary]) -> str:
    """Median time per phase (slowest rank per sample), one row per case."""
    phases = list(summaries[0].phase_median_s or {})
    rows = [(format_bytes(s.bytes), *(units.us(s.phase_median_s[p]) for p in phases))
            for s in summaries]
    return Table(("size",) + tuple(f"{p} us" for p in phases), rows).text()


def labels(info: dict | None) -> str:
    """A run's --info labels as `results list` and `results show` name them."""
    return " ".join(f"{k}={v}" for k, v in (info or {}).items())


def render_runs(runs) -> str:
    """`results list`: one line per stored run, with its labels where any run has them."""
    rows = [(r.id, r.started_utc, names.status(r), r.kernel, r.ranks, r.n_launches,
             r.n_cases, names.library(r.mpi_version)
             + ("  (oversubscribed)" if r.oversubscribed else ""),
             labels(r.settings.get("info")))
            for r in runs]
    header = ("run", "started (UTC)", "status", "kernel", "ranks", "launches", "cases", "MPI",
              "labels")
    width = len(header) - (not any(row[-1] for row in rows))
    return Table(header[:width], [row[:width] for row in rows], align="rlllrrrll").text()


def imported_from(source: dict) -> str:
    """`results show` of an imported run: where its figures come from and what they are."""
    converted = (source.get("header") or {}).get("units")
    return (f"imported from {source['file']}: {source['tool']} {source['version']} "
            f"{source['benchmark']}; time us is its {source['metric']} as printed "
            f"({source['definition']}); no raw samples, so no interval, spread or p-value"
            + (f"; {converted}" if converted else ""))


def render_provenance(ctx: dict, oversubscribed: bool) -> str:
    """`results show`: the MPI, where each rank ran, the timer and the compiler."""
    placement = ", ".join(f"{p['rank']}@{p['host']}:cpu{p['cpu']}" for p in ctx["placement"])
    return (f"MPI: {names.library(ctx['mpi_library_version'])} (MPI {ctx['mpi_standard']})\n"
            f"ranks: {ctx['ranks']}{' oversubscribed' if oversubscribed else ''}; "
            f"placement: {placement}\n"
            f"timer: {names.timer(ctx['timer'])}; compiler {ctx['compiler']}")
