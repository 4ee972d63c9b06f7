"""A watch's history judged: each case's probe figures in order, its provenance segments,
the steps in its level and whether it flaps, as the verdict core's claims (docs/watch.md,
"Reading a watch"); and "is this normal?", a case against its expected level.

A watch stores each probe as ordinary runs labelled `--info watch=NAME --info probe=N`
(cli/watch.py). A case is what was asked (cases.identity without the library's own
settings, with the MPI library's name): the same case on other hosts given with --hosts
is another case, so a link's step is named on that link alone. Its provenance is where
and with what it ran (the MPI version text, the library's settings, the hosts its ranks
ran on): a probe whose provenance differs from the one before starts a segment, which
drift.steps never calls a step.

A probe's figure of a case is a run's: the launches in another state or stalled left out
(states.screen), the mean log median of the others, so one launch beside another job
moves no probe; the kept launch medians floor the drift test's scale.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..models.groups import CONFIGURATION, fit_group, group_cases
from ..figures.read import measured
from ..stats.summary import CaseSummary, OfExpected
from ..stats.verdict.claim import Claim, junit
from ..store import names
from ..store.cases import Case, identity, key
from ..store.rows import RunRow
from ..store.store import Store
from ..system import units
from ..system.kernels import meaning
from . import drift, flapping, probe_states
from . import points as stored
from .points import watch_runs

# The words a probe that could not run is stored with (its runs' warnings)
FAULTS = ("unreachable", "hung", "stalled", "over budget")
# Probes after it was found that a step stays marked on a dashboard (Prometheus's
# indicator): a day of hourly probes, long enough for an alert to fire and be read.
FRESH = 24


@dataclass(frozen=True)
class Point:
    """One probe of a case: its figure (None where the probe measured none: `fault` says
    why), its kept launch medians, its segment's number and the runs that hold it."""
    probe: int
    started_utc: str
    median_s: float | None
    launches_s: tuple[float, ...]
    segment: int
    runs: tuple[int, ...]
    hosts: tuple[str, ...]
    fault: str | None = None


@dataclass(frozen=True)
class Segment:
    """A stretch of probes of one provenance."""
    first_probe: int
    mpi: str | None  # MPI_Get_library_version's text
    library: dict | None  # the library's own settings, where given
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class Series:
    """One case of a watch over its probes, judged."""
    watch: str
    ident: dict
    name: str
    points: list[Point]
    segments: list[Segment]
    steps: list[drift.Step]  # each claim's began_probe and found_probe are probe numbers
    flapping: flapping.Flapping | None  # between probes; None with no probe measured
    within: list[Claim] = field(default_factory=list)  # latest probe's launches that flap
    expected: Expected | None = None

    @property
    def measured(self) -> list[Point]:
        return [p for p in self.points if p.median_s is not None]

    def claims(self) -> list[Claim]:
        """Its verdicts: every step, its flapping between probes, and each launch of the
        latest probe that flaps within."""
        return [s.claim for s in self.steps] + \
            ([self.flapping.claim] if self.flapping else []) + self.within

    def share(self, median_s: float | None) -> OfExpected | None:
        """A figure of this case against its expected level (of_expected)."""
        return of_expected(median_s, self.expected)

    def stepped(self) -> bool:
        """Whether a step was found within its last FRESH probes."""
        last = self.measured[-1].probe if self.measured else None
        return any(s.claim.failing and last is not None and last - s.found < FRESH
                   for s in self.steps)


class Expected(NamedTuple):
    """"Is this normal?": the level a case is expected at (seconds), the 95% band a next
    probe at that level falls in (None: too few commands to say), and where it came from."""
    level_s: float
    band_s: tuple[float, float] | None
    source: str
    states: tuple[tuple[float, float], ...] = ()  # drift.Level's: (level_s, share) each
    least_step: float | None = None  # drift.least_step, where the watch's own probes judge


def case_key(case: Case, row: RunRow) -> dict:
    """What a watch's case is: what was asked, with the MPI library's name; the library's
    settings and version are provenance (a segment), not another case."""
    ident = identity(case)
    ident.pop("library", None)
    return {**ident, "mpi_library": row.context.get("mpi_library")}


def provenance(case: Case) -> tuple[Hashable, ...]:
    """What starts a segment when it changes: the MPI version, the library's settings and
    the hosts the ranks ran on."""
    return (case.mpi, key(case.settings.get("library") or {}), case.hosts)


def fault(store: Store, rows: list[RunRow]) -> str | None:
    """The word of a probe that could not run: of its first run not complete, the kind of
    its warning that is one of FAULTS (watch/probe.py stores one), else one its message
    names, else its status."""
    for row in rows:
        if row.status == "complete":
            continue
        kinds = [w.kind for w in store.warnings(row.id) if w.kind in FAULTS]
        said = next((word for word in FAULTS if word in (row.message or "")), row.status)
        return kinds[0] if kinds else said
    return None


def history(store: Store, name: str | None = None, arl: float = drift.ARL,
            reference: Store | None = None) -> list[Series]:
    """Every case of every watch (of `name` alone), judged: its steps at a false-alarm rate
    of one per `arl` probes of the watch (drift.per_case_arl over its cases), its flapping,
    and its expected level from its own probes (or from `reference`, another results file,
    where given). Folded probes (watch/points.py) count as the whole ones do."""
    out = []
    for watch in [name] if name is not None else stored.watches(store):
        cases = [_read(watch, *case) for case in _cases(store, watch).values()]
        for case, found in zip(cases, _steps(cases, arl)):
            out.append(_judged(case, found, reference, len(cases), arl))
    return out


class _Read(NamedTuple):
    """One case of a watch as read, before it is judged."""
    series: Series  # its points and segments, nothing judged yet
    subject: str
    kept: list[Point]  # its measured points
    latest: list[Case]


def _read(watch, ident, points, provs, latest) -> _Read:
    numbers, firsts = _numbered(provs)
    points = [dataclasses.replace(p, segment=n) for p, n in zip(points, numbers)]
    segments = [Segment(points[i].probe, provs[i][0], json.loads(provs[i][1]) or None,
                        points[i].hosts) for i in firsts]
    name = names.identity(ident) + (f" ({ident['mpi_library']})"
                                    if ident.get("mpi_library") else "")
    return _Read(Series(watch, ident, name, points, segments, [], None), f"{watch}: {name}",
                 [p for p in points if p.median_s is not None], latest)


def _steps(cases: list[_Read], arl: float) -> list[list[drift.Step]]:
    """Each case's steps, the watch's cases judged together (probe_states.watch_steps: a probe's
    state, what moved every case at once, is read apart), with probe numbers."""
    probes = sorted({p.probe for c in cases for p in c.kept})
    at = {n: i for i, n in enumerate(probes)}
    medians = np.full((len(probes), len(cases)), np.nan)
    keys = [[None] * len(probes) for _ in cases]
    launches = [[np.array([])] * len(probes) for _ in cases]
    runs = [[""] * len(probes) for _ in cases]
    for j, c in enumerate(cases):
        for p in c.kept:
            i = at[p.probe]
            medians[i, j], keys[j][i], launches[j][i] = p.median_s, p.segment, \
                np.array(p.launches_s)
            runs[j][i] = names.ranges(list(p.runs)).replace(" ", "")
    found = probe_states.watch_steps(
        medians, keys, launches, arl, [c.subject for c in cases], runs,
        [sorted({h for p in c.kept for h in p.hosts}) for c in cases])
    return [[_renumbered(s, c.kept) for s in steps] for c, steps in zip(cases, found)]


class _Probe(NamedTuple):
    """One probe as read: each case's (key, point, provenance, cases), and its fault."""
    number: int
    started_utc: str
    cases: list[tuple[dict, Point, tuple | None, list[Case]]]
    word: str | None
    runs: tuple[int, ...]


def _cases(store: Store, watch: str) -> dict[str, tuple]:
    """Each case of the watch: (its key, its points, its segments' provenance, the cases
    of its latest probe), in order of first appearance, over its folded and whole probes."""
    found: dict[str, tuple] = {}
    whole = [_whole(store, n, rows) for n, rows in watch_runs(store, watch)]
    for probe in sorted([*_folded(store, watch), *whole], key=lambda p: p.number):
        for ident, point, prov, cases in probe.cases:
            entry = found.setdefault(key(ident), (ident, [], [], []))
            entry[1].append(point)
            entry[2].append(prov)
            entry[3][:] = cases
        for k, entry in found.items():  # the probe measured nothing of it: say why
            if probe.word and all(key(i) != k for i, *_ in probe.cases):
                entry[1].append(Point(probe.number, probe.started_utc, None, (), 0,
                                      probe.runs, (), probe.word))
                entry[2].append(None)
    return found


def _whole(store: Store, number: int, rows: list[RunRow]) -> _Probe:
    """A probe kept whole, read from its runs: each case's figure its summary's
    (figures.read.measured: the launches in another state left out)."""
    by_id = {r.id: r for r in rows}
    started = min(r.started_utc for r in rows)
    cases = []
    for chosen, summary in measured(store, [r.id for r in rows]):
        if summary.median_s is None:
            continue
        point = Point(number, started, summary.median_s, summary.launch_medians_s, 0,
                      summary.runs, tuple(dict.fromkeys(chosen[0].hosts)))
        cases.append((case_key(chosen[0], by_id[chosen[0].run_id]), point,
                      provenance(chosen[0]), chosen))
    return _Probe(number, started, cases, fault(store, rows), tuple(r.id for r in rows))


def _folded(store: Store, watch: str) -> list[_Probe]:
    """The folded probes, as their points were when whole (without runs or cases)."""
    probes: dict[int, _Probe] = {}
    for f in stored.folded(store, watch):
        probe = probes.setdefault(f.probe, _Probe(f.probe, f.started_utc, [], None, ()))
        if f.provenance is None:
            probes[f.probe] = probe._replace(word=f.fault)
            continue
        hosts = tuple(dict.fromkeys(f.provenance[2]))
        probe.cases.append((f.case, Point(f.probe, f.started_utc, f.median_s, f.launches_s,
                                          0, (), hosts), f.provenance, []))
    return list(probes.values())


def folding(store: Store, watch: str, keep: int, series: list[Series] | None = None
            ) -> list[tuple[int, list[int], list[stored.Folded]]]:
    """The probes of `watch` to fold, each (number, its runs, its points): every whole
    probe but the latest `keep` and, for FRESH probes (as long as a dashboard marks a
    step), those a step names (the probes either side of where it began, whose runs its
    remedy compares, and the one it was found at) and those with a launch that flaps
    within: older ones are folded too, so a noisy watch's file stays small. `series`: the
    watch's history as just judged (history(store, watch)), where the caller has it."""
    whole = watch_runs(store, watch)
    if len(whole) <= keep:
        return []
    latest = whole[-1][0]
    named = {n for s in (history(store, watch) if series is None else series) for st in s.steps
             if st.claim.failing and latest - st.found < FRESH
             for n in (st.began - 1, st.began, st.found)}
    out = []
    for number, rows in whole[:len(whole) - keep]:
        if number in named:
            continue
        probe = _whole(store, number, rows)
        if latest - number < FRESH and any(flapping.within(c.latency_s).claim.failing
                                           for *_, cases in probe.cases for c in cases):
            continue
        points = [stored.Folded(number, probe.started_utc, ident, prov, point.median_s,
                                point.launches_s, None)
                  for ident, point, prov, _ in probe.cases]
        if probe.word:
            points.append(stored.Folded(number, probe.started_utc, {}, None, None, (),
                                        probe.word))
        out.append((number, [r.id for r in rows], points))
    return out


def _numbered(provs: list) -> tuple[list[int], list[int]]:
    """Each point's segment number (a point with no provenance keeps the one before), and
    the index of each segment's first point."""
    numbers, firsts, last = [], [], object()
    for i, p in enumerate(provs):
        if p is not None and p != last:
            firsts.append(i)
            last = p
        numbers.append(max(len(firsts) - 1, 0))
    return numbers, firsts


def _judged(case: _Read, steps: list[drift.Step], reference, cases: int = 1,
            arl: float = drift.ARL) -> Series:
    kept, subject = case.kept, case.subject
    if not kept:
        return case.series
    medians = [p.median_s for p in kept]
    keys = [p.segment for p in kept]
    launches = [np.array(p.launches_s) for p in kept]
    flaps = flapping.between(medians, keys, subject, cases)
    if flaps.slow:
        flaps = dataclasses.replace(flaps, slow=tuple((kept[a].probe, kept[b].probe)
                                                      for a, b in flaps.slow))
    within = [w.claim for c in case.latest
              if (w := flapping.within(c.latency_s, f"{subject}, probe {kept[-1].probe} "
                                       f"launch {c.launch}")).claim.word != flapping.WORDS.under
              ] if case.latest else []
    position = {p.probe: i for i, p in enumerate(kept)}
    since = max((position[s.began] for s in steps
                 if s.claim.failing and position[s.began] < len(kept) - 1), default=0)
    expected = (expected_for(reference, case.latest[0], fleet=True) if reference is not None
                else _own_level(medians, keys, launches, since,
                                probe_states.series_arl(arl, cases)))
    return dataclasses.replace(case.series, steps=steps, flapping=flaps, within=within,
                               expected=expected)


def _renumbered(step: drift.Step, kept: list[Point]) -> drift.Step:
    """The step with probe numbers where drift gives positions among the measured probes."""
    began, found = kept[step.began].probe, kept[step.found].probe
    claim = dataclasses.replace(step.claim, evidence={
        **step.claim.evidence, "began_probe": began, "found_probe": found})
    return drift.Step(began, found, claim)


def _own_level(medians, keys, launches, since: int, arl: float) -> Expected | None:
    """The level the latest probe is read against: the probes before it since the last
    step (at `since`) or segment, with the states they sat in and the least step the
    test finds within 3 probes at their spread (`arl` a case's); None for a first probe,
    which has nothing before it."""
    if len(medians) < 2:
        return None
    found = drift.expected(medians[:-1], keys[:-1], launches[:-1], arl, since)
    return Expected(found.level_s, found.band_s, "this watch's probes before it since its "
                    "last step or segment", found.states, found.least_step)


def expected_for(store: Store, case: Case, fleet: bool = False,
                 ceiling: bool = True) -> Expected | None:
    """"Is this normal?" for one stored case: the robust level of the same case (cases.
    identity with the MPI) in the history of `store` (its own run left out), each command
    one figure, its launches' mean log median, on the same hosts; `fleet`: `store` is
    another results file (`--expect`, a fleet's, judging a new node), read on any hosts.
    With no history, the model fitted to the configuration's other sizes; else the copy
    ceiling, a floor (where `ceiling`); else None."""
    def same(c: Case) -> dict:
        ident = identity(c, mpi=True)
        if fleet:
            ident.pop("hosts", None)
        return ident

    want = same(case)
    commands: dict[tuple, list[float]] = {}
    for c in store.same_cases(case.kernel, case.send_mode, case.bytes, case.ranks):
        if (not fleet and (not earlier(c, case) or c.hosts != case.hosts)) \
                or not c.valid_samples.size or same(c) != want:
            continue
        m = float(np.median(c.latency_s))
        if m > 0:
            command = ("sweep", c.sweep_id) if c.sweep_id is not None else ("run", c.run_id)
            commands.setdefault(command, []).append(m)
    if commands:
        figures = [math.exp(float(np.mean(np.log(ms)))) for ms in commands.values()]
        found = drift.expected(figures, [0] * len(figures),
                               [np.array(ms) for ms in commands.values()])
        where = "any hosts of the reference file" if fleet else "these hosts"
        return Expected(found.level_s, found.band_s,
                        f"{len(figures)} earlier commands on {where}" + units.states(found.states),
                        found.states)
    return _modelled(store, case, ceiling)


def earlier(c: Case, case: Case) -> bool:
    """Whether `c` is of a command before `case`'s: an earlier run, not of its sweep nor of
    its watch's probe (the runs of one command are one figure's, never its expectation)."""
    return c.run_id < case.run_id and not (c.sweep_id is not None and c.sweep_id ==
                                           case.sweep_id) \
        and not _one_command(c.settings, case.settings)


def _one_command(a: dict, b: dict) -> bool:
    """Two runs' settings of one watch probe (their labels name it)."""
    return bool(a.get("info")) and a.get("info") == b.get("info") and \
        stored.PROBE in a["info"]


def _modelled(store: Store, case: Case, ceiling: bool = True) -> Expected | None:
    """The fitted model's time at the case's size, from the configuration's stored cases
    of other sizes in other runs; else the copy ceiling (no message of the kernel's is faster)."""
    want = identity(case, **CONFIGURATION)
    for group in group_cases(_configuration_cases(store, case, want)):
        fitted = fit_group(group, resamples=0)
        if fitted.fit is not None:
            level = float(fitted.fit.time_s(np.array([float(case.bytes)]))[0])
            if math.isfinite(level) and level > 0:
                return Expected(level, None, f"the model fitted to {fitted.sizes} sizes")
    copy = case.extra.get("copy_s")
    if ceiling and copy and meaning(case.kernel).ceiling:
        return Expected(float(copy), None, "the copy ceiling (a floor: no message is faster)")
    return None


def _configuration_cases(store: Store, case: Case, want: dict) -> list[Case]:
    """The stored cases of the case's configuration at other sizes, of other runs: a model
    fitted to the case's own run would read the run against itself."""
    rows = {r.id for r in store.runs() if r.kernel == case.kernel and r.status == "complete"
            and r.id < case.run_id and not _one_command(r.settings, case.settings)}
    return [c for run_id in sorted(rows) for c in store.cases(run_id)
            if c.bytes != case.bytes and c.valid_samples.size
            and identity(c, **CONFIGURATION) == want]


def of_expected(median_s: float, expected: Expected | None) -> OfExpected | None:
    """A figure as a share of its expected level, and that share's 95% interval from the
    expected band (a next command at the level falls in it): "130% of expected (118% to
    143%)"; None with nothing expected."""
    if expected is None or median_s is None:
        return None
    band = expected.band_s
    return OfExpected(median_s / expected.level_s,
                      None if band is None else (median_s / band[1], median_s / band[0]),
                      expected.source)


def against(reference: Store, cases: list[Case], summary: CaseSummary,
            fleet: bool = False) -> OfExpected | None:
    """The case's figure (its summary's) against its expected level in `reference` (the
    results file it was stored in, its earlier commands; `fleet`: another machine's file,
    `--expect`); None where no level is expected (no history, no model of other runs) or
    the case has no figure. The copy ceiling, a floor, is run's own column (`of
    ceiling`), not an expectation."""
    return of_expected(summary.median_s,
                       expected_for(reference, cases[0], fleet=fleet, ceiling=False))


def measured_against(store: Store, run_id: int, reference: Store | None = None,
                     fleet: bool = False) -> list[dict]:
    """Each case of a run against its expected level (in `reference`, else the run's own
    results file), as health's JSON lists them: kernel, bytes, params, figure_s and
    of_expected (against's)."""
    return [{"kernel": s.kernel, "bytes": s.bytes, "params": s.params, "figure_s": s.median_s,
             "of_expected": against(reference or store, cases, s, fleet)}
            for cases, s in measured(store, [run_id])]


def claims(series: list[Series]) -> list[Claim]:
    return [c for s in series for c in s.claims()]


def junit_text(series: list[Series], name: str = "commscope watch") -> str:
    """JUnit XML of a watch's verdicts, the verdict core's writer: a failing testcase per
    step and per flapping case (between probes, or a launch of the latest probe), a
    passing one per case that does not flap; `results history --junit` writes it, and the
    watch verb may after each probe."""
    return junit(name, claims(series))
