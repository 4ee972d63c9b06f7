"""A measured case as stored, its figures in the kernel's own terms, and what makes two
cases the same measurement.

`identity` is the one definition of "the same": `commscope compare` pools and matches
cases by it, fits and the report group by it, and a sweep keys its cases by it. Each
use differs from the others only in the options it passes, so every difference is
written once, here; docs/compare.md and docs/models.md describe them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from ..system.kernels import bandwidth_Bps, latency_scale


@dataclass(frozen=True)
class Case:
    id: int
    run_id: int
    kernel: str
    send_mode: str | None
    bytes: int
    ranks: int  # ranks taking part in the case (2 for pingpong, whatever was launched)
    window: int | None  # as the kernel used it (large sizes shrink bw's)
    batch: int
    warmup_iterations: int
    validated: bool
    timed_by: str
    samples: np.ndarray  # every sample, as measured: seconds per iteration
    settings: dict  # what the run asked for: params, placement, transport, sync, window
    params: dict  # the run's kernel parameters
    extra: dict  # kernel-specific record fields (phases, arrival order, sync, ...)
    case_key: str | None
    launched_ranks: int  # ranks of the launch (--np)
    oversubscribed: bool  # more ranks than cores on some host
    mpi: str | None  # the run's MPI library version
    launch: int | None  # 1..K among the launches of one command (a sweep point, a run)
    family: str | None  # the kernel's family as the run described it
    hosts: tuple[str, ...] = ()  # where the ranks ran (the context record's hosts)
    sweep_id: int | None = None  # the command whose launch this is
    # Per sample, the mean over the ranks of each rank's own time (timed_by max: where a
    # sample is the slowest rank's, OSU's collectives average over ranks); None: not kept.
    rank_mean_samples: np.ndarray | None = None

    def _valid(self, per_sample: np.ndarray) -> np.ndarray:
        """per_sample without the repetitions the sync marked invalid (late start)."""
        invalid = self.extra.get("invalid")
        return np.delete(per_sample, invalid) if invalid else per_sample

    @property
    def valid_samples(self) -> np.ndarray:
        """The samples statistics use: all but repetitions the sync marked invalid."""
        return self._valid(self.samples)

    @property
    def latency_s(self) -> np.ndarray:
        """Valid samples as the kernel's latency (half round trip, time per window slot, ...)."""
        return self.valid_samples * latency_scale(self)

    @property
    def sample(self) -> str | None:
        """What one sample is: "call" (a collective's one call from a barrier), "batch", or
        None for a run stored before records said (a collective's was then a batch)."""
        return self.extra.get("sample")

    @property
    def imported(self) -> dict | None:
        """An imported case's figures (imported.figures); None for a measured case."""
        return self.extra.get("imported")

    @property
    def rank_mean_latency_s(self) -> np.ndarray | None:
        """rank_mean_samples of the valid samples, as the kernel's latency."""
        if self.rank_mean_samples is None:
            return None
        return self._valid(self.rank_mean_samples) * latency_scale(self)

    def bandwidth_Bps(self, t: float) -> float | None:
        """Payload bytes per second for a sample of t seconds; None where no rate is defined."""
        return bandwidth_Bps(self.kernel, t, self)


@dataclass(frozen=True)
class Planned:
    """A case a sweep will measure, as far as a plan knows it before it runs."""
    kernel: str
    send_mode: str | None
    bytes: int
    launched_ranks: int
    settings: dict
    launch: int
    params: dict
    window: int | None  # as asked: the plan's
    ranks: int | None = None  # not known before the native side reports it
    validated: bool = False
    oversubscribed: bool | None = None
    mpi: str | None = None
    sample: str | None = None  # the kernel's (Kernel.sample)


# Placement as recorded (launcher.Placement.as_dict): hosts, ppn and launcher only where used.
PLACEMENT = {"transport": "auto", "map_by": None, "bind_to": None}
PLACEMENT_WHERE_USED = ("hosts", "ppn", "launcher")
# The labels that number repetitions of one configuration, not another one: a watch's probe.
REPETITION_LABELS = ("probe",)


def run_labels(case) -> dict:
    """A case's run --info labels that name its configuration (compare --live's side, a
    build), without those that number its repetitions (REPETITION_LABELS)."""
    return {k: v for k, v in (case.settings.get("info") or {}).items()
            if k not in REPETITION_LABELS}


def identity(case, *, size: bool = True, send_mode: bool = True, ranks: bool = True,
             window: str = "used", validated: bool = True, oversubscribed: bool = True,
             mpi: bool = False, launch: bool = False, labels: bool = False) -> dict:
    """What makes two cases the same measurement, as a dict of plain values.

    Always: the kernel, its parameters, the sync method and the placement (transport,
    --map-by, --bind-to, and hosts, ppn and launcher where given). By default also:
    the send mode, the size, the launched process count (np) and the ranks taking
    part, whether it ran oversubscribed, the window as the kernel used it
    (window="used"; "asked": as requested, which fits use since large sizes shrink
    it), and --validate (its byte checks are inside the timed loop); --cold-cache always,
    where given; what one sample is where it is one call (a collective's since they are
    timed per call: one stored before, a batch's rate, keeps its identity and so never
    matches one after); the library's own settings (MCA parameters, MPICH variables, a
    tune rules file), where given. Named options
    leave a field out (size, send_mode, ranks, validated, oversubscribed) or put one
    in: the MPI library (mpi), the launch number within a sweep (launch) and the run's
    --info labels, where it has any (labels: two builds, compare --live's sides).
    """
    s = case.settings
    out = {"kernel": case.kernel}
    if send_mode:
        out["send_mode"] = case.send_mode
    if size:
        out["bytes"] = case.bytes
    if ranks:
        out["np"] = case.launched_ranks
        if case.ranks is not None:
            out["ranks"] = case.ranks
    if oversubscribed:
        out["oversubscribed"] = bool(case.oversubscribed)
    if window == "used":
        out["window"] = case.window
    elif case.window is not None:  # bw, bibw, rma: the asked-for window
        out["window"] = s.get("window", case.window)
    out.update(params=case.params, **{k: s.get(k, default) for k, default in PLACEMENT.items()},
               **{k: s[k] for k in PLACEMENT_WHERE_USED if k in s}, sync=s.get("sync", "barrier"))
    if s.get("cold_cache"):  # a run of warm buffers stays as it was before the option
        out["cold_cache"] = True
    if s.get("late"):  # punctual samples between a late rank's: measured beside its waits
        out["late"] = s["late"]
    if s.get("library"):  # the library's own settings (a rules file's): another algorithm
        out["library"] = s["library"]
    if case.sample == "call":  # a batched collective (stored before) measured something else
        out["sample"] = "call"
    if validated:
        out["validated"] = case.validated
    if mpi:
        out["mpi"] = case.mpi
    if launch:
        out["launch"] = case.launch
    if labels and (named := run_labels(case)):
        out["labels"] = named
    return out


def key(identity_: dict) -> str:
    """A stable text key of an identity: equal identities, equal keys."""
    return json.dumps(identity_, sort_keys=True)


def short_hash(identity_: dict) -> str:
    """A sweep case's stored id: 16 hex digits of the identity's SHA-256."""
    return hashlib.sha256(key(identity_).encode()).hexdigest()[:16]


def grouped(cases: list, **options) -> list[tuple[dict, list]]:
    """Cases grouped by identity(**options), in order of first appearance; each group's
    cases by size, ranks and id."""
    groups: dict[str, tuple[dict, list]] = {}
    for case in cases:
        ident = identity(case, **options)
        groups.setdefault(key(ident), (ident, []))[1].append(case)
    return [(ident, sorted(found, key=lambda c: (c.bytes, c.ranks, c.id)))
            for ident, found in groups.values()]
