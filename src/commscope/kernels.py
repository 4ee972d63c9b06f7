"""What each native kernel's sample means, and what it needs, on the Python side.

The definitions are those of docs/native.md and docs/kernels-*.md: a sample `t`
is seconds per iteration; latency and bandwidth follow from it here, never in C.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .errors import UserError

SEND_MODES = ("standard", "synchronous", "buffered", "ready", "nonblocking", "sendrecv")
BW_WINDOW_BYTES = 1 << 30  # the native bw/bibw receiver keeps its window within 1 GiB
DTYPE_BYTES = {"int": 4, "long": 8, "float": 4, "double": 8}


def effective_window(window: int, nbytes: int) -> int:
    return max(1, min(window, BW_WINDOW_BYTES // nbytes)) if nbytes else window


@dataclass(frozen=True)
class Param:
    """A kernel parameter: a `commscope run --NAME` flag and a native `--param NAME=`."""
    name: str
    choices: tuple[str, ...]  # empty: an integer, or "rotate" where allowed
    default: str
    help: str


PARAMS = {p.name: p for p in (
    Param("order", ("rank", "arrival"), "rank",
          "fanin: root receives in rank order or with MPI_ANY_SOURCE"),
    Param("pattern", ("ring", "sendrecv", "exchange"), "ring",
          "ring: both-way forwarding ring (seed 001), IMB Sendrecv, or IMB Exchange"),
    Param("root", (), "0", "rooted collectives: a rank, or rotate"),
    Param("op", ("sum", "max", "min", "user"), "sum",
          "reductions: builtin op, or user (a commutative sum via MPI_Op_create)"),
    Param("dtype", tuple(DTYPE_BYTES), "int", "reductions: element type"),
    Param("distribute", ("p2p", "bcast", "scatter"), "p2p", "vector_sum: how rank 0's vector is spread"),
    Param("combine", ("p2p", "gather", "reduce", "reduce_user"), "p2p",
          "vector_sum: how partial sums come back"),
)}


@dataclass(frozen=True)
class Kernel:
    name: str
    description: str
    min_ranks: int
    # Latency reported per case, from one sample t: (t, case) -> seconds.
    latency: Callable[[float, "object"], float]
    # Payload bytes per second from one sample t, or None where a rate means nothing.
    bandwidth: Callable[[float, "object"], float] | None
    # Buffer bytes the busiest rank allocates for one case: (bytes, window, ranks).
    memory: Callable[[int, int, int], int]
    modes: tuple[str, ...] = ()  # empty: the kernel has no send modes
    params: tuple[str, ...] = ()
    two_ranks: bool = False  # only ranks 0 and 1 take part; the others idle
    dtype_sized: bool = False  # sizes must be whole elements of --dtype

    def bandwidth_Bps(self, t: float, case) -> float | None:
        if self.bandwidth is None or t <= 0:
            return None
        return self.bandwidth(t, case)


def _two_buffers(n: int, window: int, ranks: int) -> int:
    return 2 * n


def _windowed(n: int, window: int, ranks: int) -> int:
    return n * (1 + effective_window(window, n))


def _per_rank_blocks(n: int, window: int, ranks: int) -> int:
    return 2 * n * ranks  # a send and a receive block per rank, at the root


def _ring_bytes(t: float, case) -> float:
    """Bytes each rank sends per iteration over t (IMB: Sendrecv 2n, Exchange 4n)."""
    pattern = case.params.get("pattern", "ring")
    per_iteration = {"ring": 2 * case.ranks, "sendrecv": 2, "exchange": 4}[pattern]
    return per_iteration * case.bytes / t


def _collective(name: str, description: str, memory=_per_rank_blocks, **kw) -> Kernel:
    return Kernel(name, description, 2, lambda t, c: t, None, memory, **kw)


ROOTED = ("root",)
REDUCING = ("op", "dtype")

KERNELS = {k.name: k for k in (
    Kernel("pingpong", "round trip between two ranks, in every send mode", 2,
           lambda t, c: t / 2, lambda t, c: c.bytes / (t / 2), _two_buffers,
           modes=SEND_MODES, two_ranks=True),
    Kernel("pingping", "both ranks send at once, then receive (IMB PingPing)", 2,
           lambda t, c: t, lambda t, c: c.bytes / t, _two_buffers, two_ranks=True),
    Kernel("bw", "streaming bandwidth: a window of nonblocking sends, then an ack (OSU bw)", 2,
           lambda t, c: t / c.window, lambda t, c: c.window * c.bytes / t, _windowed,
           two_ranks=True),
    Kernel("bibw", "bidirectional streaming bandwidth (OSU bibw)", 2,
           lambda t, c: t / c.window, lambda t, c: 2 * c.window * c.bytes / t, _windowed,
           two_ranks=True),
    Kernel("fanin", "every rank sends to rank 0 (seed 000); per-rank send times", 2,
           lambda t, c: t, lambda t, c: (c.ranks - 1) * c.bytes / t, _per_rank_blocks,
           modes=SEND_MODES[:5], params=("order",)),
    Kernel("ring", "periodic ring: forwarding both ways (seed 001), sendrecv or exchange", 2,
           lambda t, c: t, _ring_bytes, lambda n, w, r: 6 * n, params=("pattern",)),
    Kernel("vector_sum", "seed 000's vector sum: distribute, compute, combine", 1,
           lambda t, c: t, None, lambda n, w, r: 2 * n, params=("distribute", "combine")),
    _collective("barrier", "MPI_Barrier", memory=lambda n, w, r: 0),
    _collective("bcast", "MPI_Bcast of the whole buffer", params=ROOTED),
    _collective("scatter", "MPI_Scatter, bytes per rank", params=ROOTED),
    _collective("gather", "MPI_Gather, bytes per rank", params=ROOTED),
    _collective("reduce", "MPI_Reduce of a vector", params=ROOTED + REDUCING, dtype_sized=True),
    _collective("allreduce", "MPI_Allreduce of a vector", params=REDUCING, dtype_sized=True),
    _collective("allgather", "MPI_Allgather, bytes per rank", params=()),
    _collective("alltoall", "MPI_Alltoall, bytes per rank pair", params=()),
    _collective("reduce_scatter", "MPI_Reduce_scatter_block, bytes each rank receives",
                params=REDUCING, dtype_sized=True),
    _collective("scan", "MPI_Scan of a vector", params=REDUCING, dtype_sized=True),
)}


def kernel(name: str) -> Kernel:
    try:
        return KERNELS[name]
    except KeyError:
        raise UserError(f"unknown kernel '{name}'; choose one of: {', '.join(KERNELS)}") from None


def modes_for(k: Kernel, spec: str | None) -> list[str | None]:
    """The send modes to run: the --modes list, checked against what the kernel takes."""
    if not k.modes:
        if spec:
            raise UserError(f"--modes: kernel {k.name} has no send modes; drop --modes")
        return [None]
    if not spec:
        return [k.modes[0]]
    if spec.strip() == "all":
        return list(k.modes)
    wanted = [m.strip() for m in spec.split(",") if m.strip()]
    if not wanted:
        raise UserError(f"--modes: '{spec}' names no send mode; choose from: {', '.join(k.modes)}")
    for m in wanted:
        if m not in k.modes:
            raise UserError(f"--modes: unknown send mode '{m}' for {k.name}; "
                            f"choose from: {', '.join(k.modes)}, or all")
    return list(dict.fromkeys(wanted))


def params_for(k: Kernel, given: dict[str, str], ranks: int, where: str = "--") -> dict[str, str]:
    """The kernel's parameters with defaults filled in, each value checked.

    `where` prefixes the name in messages: "--" for flags, "PLAN.toml: " for plans.
    """
    for name in given:
        if name not in k.params:
            takes = ", ".join(k.params) or "no parameters"
            raise UserError(f"{where}{name}: kernel {k.name} takes {takes}")
    values = {}
    for name in k.params:
        p = PARAMS[name]
        value = str(given.get(name, p.default)).strip()
        if p.choices and value not in p.choices:
            raise UserError(f"{where}{name} {value}: choose one of {', '.join(p.choices)}")
        if name == "root" and value != "rotate":
            if not value.isdigit() or int(value) >= ranks:
                raise UserError(f"{where}root {value}: give a rank from 0 to {ranks - 1}, or rotate")
        values[name] = value
    return values


def check_sizes(k: Kernel, sizes: list[int], params: dict[str, str]) -> None:
    if k.dtype_sized:
        unit = DTYPE_BYTES[params["dtype"]]
        odd = [s for s in sizes if s % unit]
        if odd:
            raise UserError(f"--sizes: {odd[0]} B is not a whole number of {params['dtype']} "
                            f"({unit} B) elements; give multiples of {unit}")
