"""A case's one figure: `CaseSummary`, built once from its stored launches (`combined`) and
read by every verb that shows, prices, compares or judges a time (docs/statistics.md,
"One figure per case"). Pure: the launches kept and left out, the history and the spread
come in as arguments (figures/ reads them from the results file)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from ..store.cases import Case, identity, run_labels
from ..system.kernels import latency_scale, meaning
from ..system.units import mb_per_s
from .replication import (PILOT, CommandRatio, History, Interval, Spread, interval, launch,
                          run_spreads)
from .states import OddLaunch, screen
from .stats import relative_precision, summarize

# An imported case's interval basis: its tool printed figures, not samples.
NO_SAMPLES = "imported: the tool printed no samples"
# The figure, in the words of every table and document: the launches' medians' centre.
FIGURE = "the geometric mean of the kept launches' medians"


@dataclass(frozen=True)
class OfExpected:
    """A case's figure over the level it is expected at (watch/history.py): the ratio, the
    ratio over the expected band's ends (None: the level has no band) and its source."""
    ratio: float
    ci: tuple[float, float] | None
    source: str

    def as_dict(self) -> dict:
        return {"ratio": self.ratio, "ci": None if self.ci is None else list(self.ci),
                "source": self.source}


@dataclass(frozen=True)
class CaseSummary:
    """One case over its launches: what it is (its identity, labels, MPI and hosts), the
    launches kept and those left out in another state (with why), its figure (`median_s`,
    FIGURE) with the interval and its basis, and the figures that follow from it. Times
    are seconds; `as_dict` is its JSON item (urn:commscope:case:3)."""
    run: int = 0
    runs: tuple[int, ...] = ()
    kernel: str = ""
    send_mode: str | None = None
    bytes: int = 0
    ranks: int = 0
    window: int | None = None
    params: dict = field(default_factory=dict)
    sync: str | None = None
    map_by: str | None = None
    bind_to: str | None = None
    transport: str = "auto"
    case_key: str | None = None
    launches: int = 0
    n: int = 0
    p05_s: float | None = None
    p95_s: float | None = None
    p99_s: float | None = None
    mean_s: float | None = None
    stddev_s: float | None = None
    cv: float | None = None
    outliers: int | None = None
    median_s: float | None = None
    ci_low_s: float | None = None
    ci_high_s: float | None = None
    precision: float | None = None
    ci_basis: str | None = None
    within_ci_low_s: float | None = None
    within_ci_high_s: float | None = None
    within_precision: float | None = None
    between_launch_cv: float | None = None
    within_launch_cv: float | None = None
    dominant: str | None = None
    launch_spread_p: float | None = None
    between_command_cv: float | None = None
    command_basis: str | None = None
    launch_medians_s: tuple[float, ...] = ()
    levels: tuple | None = None
    invalid: int = 0
    precision_target: float | None = None
    capped: bool = False
    bandwidth_MBps: float | None = None
    rank_mean_median_s: float | None = None
    bus_factor: float | None = None
    busbw_MBps: float | None = None
    ceiling_MBps: float | None = None
    ceiling_fraction: float | None = None
    cache: str | None = None
    validated: bool = False
    other_state: tuple[OddLaunch, ...] = ()
    disagree: tuple[tuple[float, float, int], ...] | None = None
    flags: tuple[str, ...] = ()
    # kernel-specific figures, in the JSON only where the kernel has them
    phase_median_s: dict | None = None
    pure_s: float | None = None
    compute_s: float | None = None
    overlapped_s: float | None = None
    overlap_pct: float | None = None
    pair_bandwidth_MBps: float | None = None
    message_rate: float | None = None
    pairs: list | None = None
    pair_latency_s: list | None = None
    printed: dict | None = None  # an imported case's tokens as its tool printed them
    # what it is beyond the JSON: the identity that groups it, the run's --info labels,
    # the MPI library's version text and the hosts
    identity: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    mpi: str | None = None
    hosts: tuple[str, ...] = ()
    oversubscribed: bool = False
    imported: bool = False
    # the kept launches, as (run, launch) in launch_medians_s' order
    kept: tuple[tuple[int, int | None], ...] = ()
    spread: Spread | None = None  # the launches' spread from all its run's cases
    pilot: int | None = None  # the launches that chose the count (auto), else None
    # run and sweep: the figure against its expected level (expected_asked: one was sought)
    of_expected: OfExpected | None = None
    expected_asked: bool = False

    @property
    def launch_of(self) -> dict[tuple[int, int | None], float]:
        """Each kept launch's median by (run, launch): what paired comparisons pair."""
        return dict(zip(self.kept, self.launch_medians_s))

    @property
    def measured(self) -> bool:
        """A figure to show: measured samples or a printed figure."""
        return self.median_s is not None

    def with_flags(self, flags) -> "CaseSummary":
        return replace(self, flags=tuple(flags))

    def against(self, expected: OfExpected | None) -> "CaseSummary":
        return replace(self, of_expected=expected, expected_asked=True)

    def as_dict(self) -> dict:
        """Its JSON item: case:3's fields, the kernel-specific ones where it has them, and
        `of_expected` where one was sought (cases:4)."""
        out = {k: v for k, v in asdict(self).items() if k in _JSON}
        out.update(runs=list(self.runs), launch_medians_s=list(self.launch_medians_s),
                   levels=[list(x) for x in self.levels] if self.levels else None,
                   disagree=[list(g) for g in self.disagree] if self.disagree else None,
                   other_state=[o.as_dict() for o in self.other_state],
                   flags=list(self.flags))
        for name in _WHERE_GIVEN:
            if out[name] is None:
                del out[name]
        if self.expected_asked:
            out["of_expected"] = self.of_expected.as_dict() if self.of_expected else None
        return out


_NOT_JSON = {"identity", "labels", "mpi", "hosts", "oversubscribed", "imported", "kept",
             "spread", "pilot", "of_expected", "expected_asked"}
_JSON = {f for f in CaseSummary.__dataclass_fields__ if f not in _NOT_JSON}
_WHERE_GIVEN = ("phase_median_s", "pure_s", "compute_s", "overlapped_s", "overlap_pct",
                "pair_bandwidth_MBps", "message_rate", "pairs", "pair_latency_s", "printed")


def of_medians(medians, identity: dict | None = None, pilot: int | None = None,
               spread: Spread | None = None, run: int = 0) -> CaseSummary:
    """A summary of launch medians alone (seconds, in launch order, of run `run`), FIGURE
    their centre: what the statistics of a comparison read, for launches simulated
    (bench/, tests)."""
    medians = tuple(float(m) for m in medians)
    return CaseSummary(run=run, runs=(run,), kernel=(identity or {}).get("kernel", ""),
                       launches=len(medians), median_s=geometric_mean(medians),
                       launch_medians_s=medians, identity=dict(identity or {}),
                       kept=tuple((run, k) for k in range(1, len(medians) + 1)), pilot=pilot,
                       spread=spread)


def case_summary(case: Case) -> CaseSummary:
    """The figures of one launch of one case; times are latencies per the kernel's definition.

    Latency is a linear function of the raw sample (half the round trip, one
    window slot, ...), so order statistics and percentiles scale with it.
    Repetitions that the window synchronisation marked invalid are left out of
    the statistics and counted.
    """
    return _summary([case], None)


def combined_summary(cases: list[Case], past: History | None = None,
                     spread: Spread | None = None, ratio: CommandRatio | None = None,
                     odd: list[OddLaunch] | None = None) -> CaseSummary:
    """The figures of one case over its launches (cases of one identity): the median and
    95% interval of replication.interval, between- and within-launch spread, and the
    distribution of all valid samples pooled, from the launches not in another state
    (states.screen: `cases` are those kept and `odd` those left out, where the caller
    screened the case's whole run; else the case's launches are screened alone).
    `past`: the case's history (the variance between commands; a single launch's
    between-launch variance); `spread`: its launches' spread from all its run's cases
    (launch_spreads); `ratio`: how much commands differ on its hosts
    (replication.command_ratios)."""
    if odd is None:
        (cases,), (odd,) = screen([cases])
    return _summary(cases, past, spread, ratio, odd)


def launch_spreads(groups: list[list[Case]]) -> list[Spread | None]:
    """Each group's (one case's launches') spread from all the groups of its run at once
    (replication.run_spreads), over the launches that chose the count (the pilot) or all
    of a fixed count, where the groups of a run share those launches; None for a group
    of several runs, or without them."""
    out: list[Spread | None] = [None] * len(groups)
    by_run: dict[int, list[int]] = {}
    for i, cases in enumerate(groups):
        if len({c.run_id for c in cases}) == 1:
            by_run.setdefault(cases[0].run_id, []).append(i)
    for members in by_run.values():
        medians = [{c.launch: float(np.median(c.latency_s)) for c in groups[i]
                    if c.valid_samples.size} for i in members]
        # the pilot's launches are the first `pilot` not left out in another state (their
        # replacements took their place: launches.py); a fixed count's, all of them
        numbers = sorted(set().union(*medians))
        first = numbers[:pilot(groups[members[0]]) or min(len(d) for d in medians)]
        usable = [(i, d) for i, d in zip(members, medians) if all(n in d for n in first)]
        if len(first) < 2 or not usable:
            continue
        table = np.log([[d[n] for n in first] for _, d in usable])
        sizes = [groups[i][0].bytes for i, _ in usable]
        for (i, _), s in zip(usable, run_spreads(table, sizes)):
            out[i] = s
    return out


def pilot(cases: list[Case]) -> int | None:
    """How many first launches chose the launch count: the pilot of one auto run
    (launches.py), None for a fixed count or cases of several runs."""
    if len({c.run_id for c in cases}) != 1 or cases[0].settings.get("launches") != "auto":
        return None
    return cases[0].settings.get("pilot", PILOT)  # runs stored before it varied had 3


def _identity(first: Case) -> dict:
    return identity(first, mpi=True, labels=True)


def _summary(cases: list[Case], past: History | None, spread: Spread | None = None,
             ratio: CommandRatio | None = None, odd: tuple[OddLaunch, ...] = ()
             ) -> CaseSummary:
    cases = sorted(cases, key=lambda c: (c.launch or 0, c.id))
    first = cases[0]
    if first.imported is not None:
        return _imported(first)
    measured = [c for c in cases if c.valid_samples.size]
    pooled = np.concatenate([c.latency_s for c in measured]) if measured else np.empty(0)
    s = summarize(pooled) if pooled.size else None
    iv = interval([launch(c.latency_s) for c in measured],
                  (s.ci_low, s.ci_high) if s and s.ci_low is not None else None, past,
                  pilot(measured), spread, ratio) if s else None
    bandwidth = first.bandwidth_Bps(iv.median_s / latency_scale(first)) if iv else None
    phases = [c.extra.get("phase_samples_s") for c in measured]
    phase = _phase_medians(phases, first.sample == "call") if phases and all(phases) \
        else None
    return CaseSummary(
        run=first.run_id, runs=tuple(sorted({c.run_id for c in cases})), kernel=first.kernel,
        send_mode=first.send_mode, bytes=first.bytes, ranks=first.ranks, window=first.window,
        params=first.params, sync=first.settings.get("sync", "barrier"),
        map_by=first.settings.get("map_by"), bind_to=first.settings.get("bind_to"),
        transport=first.settings.get("transport", "auto"), case_key=first.case_key,
        launches=len(measured), n=s.n if s else 0, **_statistics(s, iv),
        # launches left out in another state or stalled here (states.py), with how far off
        other_state=tuple(odd),
        # the tail as data, not a warning: a 1% of slow samples leaves the median alone
        p99_s=float(np.percentile(pooled, 99)) if pooled.size else None,
        launch_spread_p=spread.unusual if spread else None,
        # the history's two levels, ((median_s, commands), (median_s, commands)) (regimes)
        levels=tuple(tuple(level) for level in past.levels) if past and past.levels else None,
        invalid=sum(len(c.extra.get("invalid") or ()) for c in cases),
        precision_target=first.extra.get("precision_target"),
        capped=any(c.extra.get("capped", False) for c in cases),
        bandwidth_MBps=mb_per_s(bandwidth), **_collective(measured, bandwidth),
        **_ceiling(measured, bandwidth), **_streams(first, iv, bandwidth),
        **_pair_latencies(measured),
        cache="cold" if first.settings.get("cold_cache") else "warm",
        validated=first.validated, phase_median_s=phase, **_overlap(phase or {}),
        identity=_identity(first), labels=run_labels(first), mpi=first.mpi,
        hosts=tuple(first.hosts), oversubscribed=bool(first.oversubscribed),
        kept=tuple((c.run_id, c.launch) for c in measured), spread=spread,
        pilot=pilot(measured))


def _phase_medians(phases: list[dict], by_rank: bool) -> dict:
    """Each phase's median, as its slowest rank's: a collective's (by_rank, its samples the
    slowest rank's, native/timing.c) the median over launches of the largest rank median of
    each launch; other kernels' the median of the per-sample maximum over ranks."""
    if by_rank:
        return {name: float(np.median([np.max(np.median(np.asarray(p[name]), axis=1))
                                       for p in phases])) for name in phases[0]}
    return {name: float(np.median(np.concatenate([np.max(np.asarray(p[name]), axis=0)
                                                  for p in phases])))
            for name in phases[0]}


def _overlap(phase: dict) -> dict:
    """A nonblocking collective's overlap with compute, as OSU measures it: 100 (1 -
    (overlapped - compute) / pure) percent, at least 0, from the phases' medians (each the
    slowest rank's per sample); nothing for kernels without those phases."""
    if not {"pure", "compute", "overlapped"} <= phase.keys() or not phase["pure"]:
        return {}
    hidden = 1 - (phase["overlapped"] - phase["compute"]) / phase["pure"]
    return {"pure_s": phase["pure"], "compute_s": phase["compute"],
            "overlapped_s": phase["overlapped"], "overlap_pct": 100 * max(0.0, hidden)}


def _imported(case: Case) -> CaseSummary:
    """An imported case: the figures its tool printed, and none that would need samples
    (ci_basis says why; docs/import.md)."""
    figures = {k: v for k, v in case.imported.items() if k in CaseSummary.__dataclass_fields__}
    return CaseSummary(**figures, run=case.run_id, runs=(case.run_id,), kernel=case.kernel,
                       bytes=case.bytes, ranks=case.ranks, params=case.params, launches=1,
                       ci_basis=NO_SAMPLES, printed=case.extra.get("printed", {}),
                       identity=_identity(case), labels=run_labels(case), mpi=case.mpi,
                       hosts=tuple(case.hosts), imported=True)


def _streams(case: Case, iv: Interval | None, bandwidth: float | None) -> dict:
    """A kernel of several pairs at once (mbw_mr): its bandwidth per pair, its message
    rate (messages of all pairs per second, as osu_mbw_mr's) and its pairs; nothing for
    other kernels."""
    streams = meaning(case.kernel).streams
    if streams is None:
        return {}
    pairs, messages = streams(case)
    sample_s = iv.median_s / latency_scale(case) if iv else None
    return {"pair_bandwidth_MBps": mb_per_s(bandwidth / pairs) if bandwidth else None,
            "message_rate": messages / sample_s if sample_s else None,
            "pairs": case.extra.get("pairs")}


def _pair_latencies(measured: list[Case]) -> dict:
    """Each pair's latency where ranks 0 .. P/2 - 1 each time one (multi_lat): the median
    over launches of each launch's median of the rank's own phase time, as the kernel's
    latency, with the pairs [rank, rank + P/2]; nothing for other kernels."""
    phase = meaning(measured[0].kernel).pair_phase if measured else None
    if phase is None or not all(c.extra.get("phase_samples_s") for c in measured):
        return {}
    half = measured[0].ranks // 2
    per_launch = np.array([np.median(np.asarray(c.extra["phase_samples_s"][phase]), axis=1)
                           for c in measured])  # launches x ranks
    latency = np.median(per_launch, axis=0)[:half] * latency_scale(measured[0])
    return {"pairs": [[r, r + half] for r in range(half)],
            "pair_latency_s": [float(x) for x in latency]}


def _ceiling(measured: list[Case], bandwidth: float | None) -> dict:
    """The copy ceiling (docs/native.md, "Copy ceilings"): the median over launches of the
    native copy time of the case's size, as a rate in the bytes the kernel's bandwidth
    counts, and the bandwidth's fraction of it. None where the kernel has no ceiling, the
    size is 0 or the runs were stored before ceilings were measured."""
    copies = [c.extra["copy_s"] for c in measured if c.extra.get("copy_s")]
    factor = meaning(measured[0].kernel).ceiling if measured else None
    if not copies or factor is None:
        return {"ceiling_MBps": None, "ceiling_fraction": None}
    ceiling = mb_per_s(factor(measured[0]) * measured[0].bytes / float(np.median(copies)))
    rate = mb_per_s(bandwidth)
    return {"ceiling_MBps": ceiling, "ceiling_fraction": rate / ceiling if rate else None}


def _collective(measured: list[Case], algbw: float | None) -> dict:
    """A collective's figures beside its slowest-rank time: the median of the per-sample
    mean over ranks (OSU's collectives average over ranks), and nccl-tests' bus bandwidth
    (bandwidth_MBps is its algorithm bandwidth). None for other kernels."""
    means = [c.rank_mean_latency_s for c in measured]
    factor = meaning(measured[0].kernel).bus_factor if measured else None
    ranks = measured[0].ranks if measured else 0
    return {
        "rank_mean_median_s": float(np.median(np.concatenate(means)))
        if means and all(m is not None and m.size for m in means) else None,
        "bus_factor": factor(ranks) if factor and ranks else None,
        "busbw_MBps": mb_per_s(algbw * factor(ranks)) if factor and ranks and algbw else None,
    }


def _statistics(s, iv: Interval | None) -> dict:
    """The summary's figures; all None when no sample is valid (every window late). The
    spread between launches is a measured one only with two or more launches (one
    launch's, from its history, is none of its own)."""
    figures = {"p05_s": "p05", "p95_s": "p95", "mean_s": "mean", "stddev_s": "stddev",
               "cv": "cv", "outliers": "outliers"}
    out = {name: getattr(s, field) if s else None for name, field in figures.items()}
    out.update({
        "median_s": iv.median_s if iv else None,
        "ci_low_s": iv.ci_low_s if iv else None,
        "ci_high_s": iv.ci_high_s if iv else None,
        "precision": iv.precision if iv else None,
        "ci_basis": iv.basis if iv else None,
        "within_ci_low_s": s.ci_low if s else None,
        "within_ci_high_s": s.ci_high if s else None,
        "within_precision": relative_precision(s) if s else None,
        "between_launch_cv": iv.between_cv if iv else None,
        "within_launch_cv": iv.within_cv if iv else None,
        "dominant": iv.dominant if iv else None,
        "between_command_cv": iv.command_cv if iv else None,
        "command_basis": iv.command_basis if iv else None,
        "launch_medians_s": tuple(iv.launch_medians_s) if iv else (),
        # no interval: the launches' medians in groups, (lowest_s, highest_s, launches)
        "disagree": tuple(iv.disagree) if iv and iv.disagree else None,
    })
    return out


def geometric_mean(values) -> float | None:
    """FIGURE of some launch medians (the positive ones); None without one."""
    logs = [math.log(v) for v in values if v and v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None
