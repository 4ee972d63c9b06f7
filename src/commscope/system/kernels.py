"""What a kernel is: the native binary's own word (`commscope-native --describe`), joined
with the one thing only Python knows, what a sample of it means.

The native side declares each kernel once (native/kernels/NAME.c): name, ranks, send
modes, parameters with their kinds, choices and defaults, default window, phases.
This module reads that description and adds, per kernel, a `Meaning`: latency and
bandwidth from one sample `t` (docs/native.md and docs/kernels-*.md), the memory the
busiest rank allocates, and, where --sizes does not apply, the case's one size.
tests/test_kernels.py proves that both sides name the same kernels.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field
from typing import Callable

from .errors import UserError, to_run


@dataclass(frozen=True)
class Element:
    """What every size must be a whole number of, for one choice of a parameter."""
    type: str  # as C names it: int, double, uint64
    bytes: int


@dataclass(frozen=True)
class Feature:
    """An MPI-4 feature some kernels need: whether the native build has it (a probe
    compiled and linked against the MPI, native/probes/)."""
    name: str
    calls: str  # what it is, e.g. "MPI-4 partitioned communication (MPI_Psend_init, ...)"
    present: bool


# How a parameter's value is checked, and what it means to the rest of a plan
# (native/kernel.h's enum param_kind, which --describe lists as param_kinds): the plan
# builder applies each kind's rule, so no rule is written per parameter name.
PARAM_KINDS = ("choice", "rank", "count", "number", "extent", "grid", "path", "switch",
               "layout",  # contiguous or vector:STRIDE:BLOCK elements; sizes are whole blocks
               "parts",  # P >= 1 equal parts of each message; sizes are whole multiples of P
               "epoch",  # an RMA access epoch among choices, which --sync names too
               "algorithm")  # the MPI library's own algorithm for a collective (MPI_T)


@dataclass(frozen=True)
class Param:
    """A kernel parameter: a native `--param NAME=VALUE`, a `commscope run --NAME` flag."""
    name: str
    kind: str  # one of PARAM_KINDS
    default: str | None
    help: str
    choices: tuple[str, ...] = ()
    elements: dict[str, Element] | None = None  # per choice; None: any size
    needs: str | None = None  # an MPI feature it needs when given (a switch: yes)
    modes: tuple[str, ...] = ()  # the send modes it may be given with; empty: any
    # Given (a switch: yes), it binds the buffers to requests made in set-up: no
    # --cold-cache.
    binds_buffers: bool = False
    # An algorithm: the library's variable that forces it ("" where the library has none)
    # and each choice's value there, in the choices' order.
    setting: str = ""
    values: tuple[int, ...] = ()
    # The library's settings named <setting>_<what>, as read (Open MPI's segmentsize,
    # tree_fanout, ...): how a forced algorithm runs.
    companions: dict[str, int] = field(default_factory=dict)
    fixed: bool = False  # the library has the setting but will not change it mid-job


@dataclass(frozen=True)
class Meaning:
    """What C cannot know about a kernel: what its samples mean, and what it costs."""
    # Latency reported per case, from one sample t: (t, case) -> seconds.
    latency: Callable[[float, object], float]
    # Payload bytes per second from one sample t, or None where a rate means nothing.
    bandwidth: Callable[[float, object], float] | None
    # Buffer bytes the busiest rank allocates for one case: (bytes, window used, ranks, params).
    memory: Callable[[int, int, int, dict], int]
    # The case's one size from its parameters where --sizes does not apply:
    # (params, name of a parameter in messages) -> bytes.
    fixed_bytes: Callable[[dict[str, str], Callable[[str], str]], int] | None = None
    # Each rank's own time per iteration, where the kernel has one to show: "samples"
    # (each rank's samples), or the name of the phase that holds it.
    rank_times: str | None = None
    # A size that may be given as a length instead: (parameter, bytes per element, the
    # length when neither is given).
    length: tuple[str, int, int] | None = None
    # A collective's bus bandwidth over its algorithm bandwidth, from the ranks taking part
    # (nccl-tests' busbw); None: no such factor.
    bus_factor: Callable[[int], float] | None = None
    # The copy ceiling's multiple (docs/native.md, "Copy ceilings"): how many of the bytes
    # the bandwidth counts each rank may receive per copy time, at most. A rank receives
    # what it is sent one copy at a time, so a kernel that counts only the received bytes
    # has 1, one that counts both directions (bibw, IMB's Sendrecv and Exchange) 2.
    # None: no ceiling (collectives: what they move depends on the algorithm).
    ceiling: Callable[[object], float] | None = None
    # What the kernel's figure is: "latency", or "bandwidth" where a sample is a window of
    # messages in flight and its time per message an inverse rate, not a latency.
    figure: str = "latency"
    # Streams at once and the messages they deliver in one sample, for a kernel of several
    # pairs (its bandwidth per pair and message rate); None: not such a kernel.
    streams: Callable[[object], tuple[int, int]] | None = None
    # The phase that holds each rank's own iteration time, where ranks 0 .. P/2 - 1 each
    # time one pair (their pairs' latencies in JSON); None: no pairs.
    pair_phase: str | None = None


@dataclass(frozen=True)
class Kernel:
    name: str
    description: str
    family: str  # point-to-point, one-sided, many-rank, collective, halo, application, health
    min_ranks: int
    ranks_multiple: int  # the job's ranks are a multiple of this (2: the kernel pairs them)
    max_ranks: int | None  # only ranks 0 .. max_ranks-1 take part; None: every rank
    modes: tuple[str, ...]  # empty: the kernel has no send modes
    timed_by: str  # origin or max
    default_window: int | None  # None: the kernel takes no window
    phases: tuple[str, ...]
    params: dict[str, Param]
    meaning: Meaning
    needs: str | None  # an MPI feature (native/mpi_features.h) the kernel needs; None: none
    described: dict = field(default_factory=dict, compare=False, repr=False)  # as the binary said
    # What one sample is (native kernel_sample_kind): "call", one call from a synchronized
    # start (the collectives, as OSU times them), or "batch", a batch of iterations.
    sample: str = "batch"

    @property
    def two_ranks(self) -> bool:
        return self.max_ranks == 2

    @property
    def cold_cache(self) -> bool:
        """--cold-cache applies: the binary says the kernel's buffers rotate."""
        return bool(self.described.get("cold_cache"))

    @property
    def app(self) -> bool:
        """An application: `commscope app NAME` runs it, not run or sweep."""
        return self.family == "application"

    def latency(self, t: float, case) -> float:
        return self.meaning.latency(t, case)

    def bandwidth_Bps(self, t: float, case) -> float | None:
        return bandwidth_Bps(self.name, t, case)


@dataclass(frozen=True)
class Catalog:
    """Every kernel of one native binary, with what the binary says about itself."""
    kernels: dict[str, Kernel]
    send_modes: tuple[str, ...]
    sync_methods: tuple[str, ...]
    window_bytes_max: int  # a windowed kernel's receive buffers stay within this
    records_schema: int  # the schema of the records the binary writes
    mpi_version: str = ""  # the MPI standard the binary's mpi.h states, e.g. 3.1
    features: dict[str, Feature] = field(default_factory=dict)  # native/mpi_features.h

    def kernel(self, name: str) -> Kernel:
        try:
            return self.kernels[name]
        except KeyError:
            raise UserError(f"unknown kernel '{name}'; choose one of: "
                            f"{', '.join(self.kernels)}") from None

    def runnable(self, name: str) -> Kernel:
        """A kernel `run` and `sweep` measure; an application is refused with its verb."""
        k = self.kernel(name)
        if k.app:
            raise UserError(f"{name} is an application with its own checks; run it with "
                            f"{to_run('app', name)}")
        return k

    def window_used(self, k: Kernel, window: int | None, nbytes: int) -> int:
        """The window the native side uses at this size: receive buffers within the cap."""
        if window is None:
            return 1
        return max(1, min(window, self.window_bytes_max // nbytes)) if nbytes else window


def load(description: dict) -> Catalog:
    """The catalog of a `commscope-native --describe` description."""
    described = [k["name"] for k in description["kernels"]]
    if set(described) != set(MEANINGS):
        raise RuntimeError(f"the native kernels ({', '.join(sorted(described))}) and Python's "
                           f"meanings ({', '.join(sorted(MEANINGS))}) disagree; add the "
                           "missing side (docs/architecture.md, 'Adding a kernel')")
    if set(description["param_kinds"]) != set(PARAM_KINDS):
        raise RuntimeError(f"the native parameter kinds ({', '.join(description['param_kinds'])})"
                           f" and Python's ({', '.join(PARAM_KINDS)}) disagree; give each kind "
                           "its rule on both sides (native/kernel.h, kernels.PARAM_KINDS)")
    kernels = {k["name"]: _kernel(k) for k in description["kernels"]}
    return Catalog(kernels, tuple(description["send_modes"]),
                   tuple(description["sync_methods"]), description["window_bytes_max"],
                   description["records_schema"], description["mpi_version"],
                   {name: Feature(name, f["calls"], f["present"])
                    for name, f in description["features"].items()})


def _kernel(k: dict) -> Kernel:
    params = {p["name"]: Param(p["name"], p["kind"], p["default"], p["help"],
                               tuple(p["choices"] or ()),
                               None if p["elements"] is None else
                               {c: Element(e["type"], e["bytes"])
                                for c, e in p["elements"].items()},
                               p["needs"], tuple(p["modes"]), p["binds_buffers"],
                               *((p["algorithm"]["setting"], tuple(p["algorithm"]["values"]),
                                  p["algorithm"]["companions"], p["algorithm"]["fixed"])
                                 if p.get("algorithm") else ()))
              for p in k["params"]}
    return Kernel(k["name"], k["description"], k["family"], k["min_ranks"],
                  k["ranks_multiple"], k["max_ranks"],
                  tuple(k["modes"]), k["timed_by"], k["default_window"], tuple(k["phases"]),
                  params, MEANINGS[k["name"]], k["needs"], k, k.get("sample", "batch"))


@functools.lru_cache(maxsize=None)
def _cached(mpi, without: tuple[str, ...]) -> Catalog:
    from .build import native_description  # building needs an MPI; the meanings do not
    return load(native_description(mpi))


def catalog(mpi=None) -> Catalog:
    """The kernels of this MPI's native binary (the default MPI's when None), built if
    needed: once per MPI and set of features built without, however many commands a
    process runs."""
    from .build import left_out
    if mpi is None:
        from .mpi import find_mpi
        mpi = find_mpi(None)
    return _cached(mpi, tuple(left_out()))


# --- what a sample means (Python's side of each kernel) ---

def _two_buffers(n: int, window: int, ranks: int, params: dict) -> int:
    return 2 * n


def _windowed(n: int, window: int, ranks: int, params: dict) -> int:
    """A send buffer and one receive buffer, or one per message (recv_buffers=window)."""
    return n * (1 + (window if params.get("recv_buffers") == "window" else 1))


def _rma_buffers(n: int, window: int, ranks: int, params: dict) -> int:
    return 2 * n * window  # origin: its buffer, and accumulate's scratch


def _per_rank_blocks(n: int, window: int, ranks: int, params: dict) -> int:
    # a send and a receive block per rank, at the root; a mock-up (--as) adds up to one
    # more per rank, the buffer its calls go through (native/coll.h)
    return (3 if params.get("as") else 2) * n * ranks


def _ring_bytes(t: float, case) -> float:
    """Bytes each rank sends per iteration over t (IMB: Sendrecv 2n, Exchange 4n)."""
    per_iteration = {"ring": 2 * case.ranks, "sendrecv": 2, "exchange": 4}[case.params["pattern"]]
    return per_iteration * case.bytes / t


HALO_FIELD_MAX = 2**31 - 1  # doubles per rank: native/halo.c keeps MPI int strides and counts


def pair(text: str) -> tuple[int, int] | None:
    """AxB, both positive, or None."""
    m = re.fullmatch(r"([1-9]\d*)x([1-9]\d*)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _halo_tile(params: dict[str, str], name: Callable[[str], str]) -> tuple[int, int, int]:
    """(NX, NY, W) from tile and halo, each checked (docs/kernels-halo.md)."""
    tile, width = params["tile"], params["halo"]
    nx_ny = pair(tile)
    if nx_ny is None:
        raise UserError(f"{name('tile')} {tile}: give NXxNY interior points per rank, "
                        "e.g. 256x256")
    nx, ny = nx_ny
    if not width.isdigit() or not 1 <= int(width) <= min(nx, ny):
        raise UserError(f"{name('halo')} {width}: give a ghost width from 1 to {min(nx, ny)} "
                        f"(the smaller side of tile {tile})")
    w = int(width)
    if (nx + 2 * w) * (ny + 2 * w) > HALO_FIELD_MAX:
        raise UserError(f"{name('tile')} {tile}: over 2^31 - 1 doubles per rank with its "
                        "ghosts; give a smaller tile")
    return nx, ny, w


def _halo_bytes(params: dict[str, str], name: Callable[[str], str]) -> int:
    """What each rank sends per exchange: W columns of NY and W rows of NX, both ways, 8 B each."""
    nx, ny, w = _halo_tile(params, name)
    return 16 * w * (nx + ny)


def _per_call(t: float, case) -> float:
    return t


def _one(case) -> float:
    return 1.0


def _collective(total: bool, bus, memory=_per_rank_blocks) -> Meaning:
    """A collective's algorithm bandwidth S/t and bus factor, as nccl-tests defines them
    (NVIDIA/nccl-tests, doc/PERFORMANCE.md): S is the buffer of a reduction or broadcast
    (n), and the whole gathered, scattered or exchanged buffer where each rank holds one
    block of n (total: S = n·p). The bus factor makes the figure comparable with a link's
    bandwidth whatever the process count: allreduce 2(p-1)/p, the block collectives
    (p-1)/p, bcast and reduce 1."""
    def algbw(t: float, case) -> float:
        return case.bytes * (case.ranks if total else 1) / t
    return Meaning(_per_call, algbw, memory, bus_factor=bus)


def _ring_factor(p: int) -> float:
    return (p - 1) / p


MEANINGS = {
    "pingpong": Meaning(lambda t, c: t / 2, lambda t, c: c.bytes / (t / 2), _two_buffers,
                        ceiling=_one),
    "pingping": Meaning(_per_call, lambda t, c: c.bytes / t, _two_buffers, ceiling=_one),
    # A sample is one whole iteration of the LogGP parts; its phases are the figures
    # (models/loggp.py).
    "loggp": Meaning(_per_call, None, _two_buffers),
    "bw": Meaning(lambda t, c: t / c.window, lambda t, c: c.window * c.bytes / t, _windowed,
                  ceiling=_one, figure="bandwidth"),
    "bibw": Meaning(lambda t, c: t / c.window, lambda t, c: 2 * c.window * c.bytes / t,
                    _windowed, ceiling=lambda c: 2.0, figure="bandwidth"),
    "rma": Meaning(_per_call, lambda t, c: c.window * c.bytes / t, _rma_buffers, ceiling=_one),
    "fanin": Meaning(_per_call, lambda t, c: (c.ranks - 1) * c.bytes / t, _per_rank_blocks,
                     rank_times="fanin", ceiling=_one),
    # ring: 2n a step received two at a time; sendrecv counts 2n and receives n, exchange
    # counts 4n and receives 2n (IMB)
    "ring": Meaning(_per_call, _ring_bytes, lambda n, w, r, p: 6 * n, rank_times="samples",
                    ceiling=lambda c: 1.0 if c.params["pattern"] == "ring" else 2.0),
    # P/2 pairs: latency is the slowest pair's time per window slot; bandwidth the aggregate
    "mbw_mr": Meaning(lambda t, c: t / c.window,
                      lambda t, c: c.ranks // 2 * c.window * c.bytes / t,
                      lambda n, w, r, p: n, ceiling=None, figure="bandwidth",
                      streams=lambda c: (c.ranks // 2, c.ranks // 2 * c.window)),
    # pingpong of P partitions a message (MPI-4): half a round trip, as pingpong's
    "partitioned": Meaning(lambda t, c: t / 2, lambda t, c: c.bytes / (t / 2), _two_buffers,
                           ceiling=_one),
    # P/2 pairs ping-pong at once: pair 0's half round trip (osu_multi_lat's); each pair's own
    "multi_lat": Meaning(lambda t, c: t / 2, None, _two_buffers, rank_times="round_trip",
                         pair_phase="round_trip"),
    # The node-level patterns of `commscope health` (health.py reads each pair's phases); a
    # sample is the slowest rank's whole iteration, a send buffer and one receive buffer.
    "pairs": Meaning(_per_call, None, _two_buffers),
    "shift": Meaning(_per_call, None, _two_buffers),
    # `commscope congestion`'s canaries (congestion.py reads them): a sample is canary 0's
    # iteration; an aggressor holds 4 messages of aggressor_bytes in flight per stream, and
    # its group's first rank receives from each of the others (incast).
    "congestion": Meaning(_per_call, None, lambda n, w, r, p: 2 * n + 4 * r * int(
        p.get("aggressor_bytes", 1 << 20))),
    # A size is the vector's bytes: n 64-bit integers, given as --param n=N (default 10^6).
    "vector_sum": Meaning(_per_call, None, lambda n, w, r, p: 2 * n, length=("n", 8, 1_000_000)),
    # memory: the field follows from tile, not from bytes; _halo_tile bounds it.
    "halo": Meaning(_per_call, lambda t, c: c.bytes / t, lambda n, w, r, p: 0,
                    fixed_bytes=_halo_bytes, ceiling=_one),
    # A sample is one whole solve; bytes = the n x n float64 field; memory: three tiles per
    # rank and, with field=, the whole field gathered on rank 0 (docs/app-advection2d.md).
    "advection2d": Meaning(_per_call, None, lambda n, w, r, p: 3 * n // r + n),
    "barrier": Meaning(_per_call, None, lambda n, w, r, p: 0),
    "allreduce": _collective(False, lambda p: 2 * (p - 1) / p),
    "bcast": _collective(False, lambda p: 1.0),
    "reduce": _collective(False, lambda p: 1.0),
    # nccl-tests has no scan: an algorithm bandwidth over n, no bus factor.
    **{name: _collective(False, None) for name in ("scan", "exscan")},
    # The v-collectives with equal counts do their plain forms' jobs: the same figures.
    **{name: _collective(True, _ring_factor)
       for name in ("allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter",
                    "reduce_scatter_block", "gather", "gatherv", "scatter", "scatterv")},
}


# The nonblocking collectives (native/nbc.h): a sample is the `pure` phase, the collective
# started and waited for at once; the phases (pure, compute, overlapped) give the overlap
# (summary: overlap_pct); their buffers are the blocking ones'.
MEANINGS.update({f"i{name}": dataclasses.replace(MEANINGS[name], bandwidth=None, bus_factor=None)
                 for name in ("barrier", "bcast", "reduce", "allreduce", "allgather",
                              "alltoall")})


def meaning(name: str) -> Meaning:
    return MEANINGS[name]


def latency_scale(case) -> float:
    """Latency per second of sample for this case: the latency is linear in the sample."""
    return MEANINGS[case.kernel].latency(1.0, case)


def bandwidth_Bps(kernel_name: str, t: float, case) -> float | None:
    """Payload bytes per second from one sample t; None where the kernel defines no rate."""
    rate = MEANINGS[kernel_name].bandwidth
    if rate is None or t <= 0:
        return None
    return rate(t, case)
