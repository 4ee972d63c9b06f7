"""What each native kernel's sample means, and what it needs, on the Python side.

The definitions are those of docs/native.md and docs/kernels-*.md: a sample `t`
is seconds per iteration; latency and bandwidth follow from it here, never in C.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .errors import UserError

SEND_MODES = ("standard", "synchronous", "buffered", "ready", "nonblocking", "sendrecv")
BW_WINDOW_BYTES = 1 << 30  # the native bw/bibw receiver keeps its window within 1 GiB
DTYPE_BYTES = {"int": 4, "long": 8, "float": 4, "double": 8}
ACCUMULATE_BYTES = 8  # rma accumulates MPI_UINT64_T elements (docs/kernels-rma.md)


def effective_window(window: int, nbytes: int) -> int:
    return max(1, min(window, BW_WINDOW_BYTES // nbytes)) if nbytes else window


@dataclass(frozen=True)
class Param:
    """A kernel parameter: a `commscope run --NAME` flag and a native `--param NAME=`."""
    name: str
    choices: tuple[str, ...]  # empty: an integer, or "rotate" where allowed
    default: str
    help: str
    metavar: str = ""  # the flag's value as help shows it; default: the choices
    flag: bool = True  # False: no --NAME flag of its own (rma's epoch is given as --sync)


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
    Param("tile", (), "256x256", "halo: interior points per rank", "NXxNY"),
    Param("halo", (), "1", "halo: ghost width on every side, up to the tile's smaller side", "W"),
    Param("method", ("p2p", "sendrecv", "neighbor", "rma"), "p2p",
          "halo: Irecv/Isend, Sendrecv per face, Neighbor_alltoallw, or Put between fences"),
    Param("grid", (), "auto", "halo: process grid, PX*PY = ranks, or auto (MPI_Dims_create)",
          "PXxPY|auto"),
    Param("operation", ("put", "get", "accumulate"), "put",
          "rma: MPI_Put, MPI_Get, or MPI_Accumulate (MPI_SUM on uint64)"),
    Param("epoch", ("fence", "lock", "lock_all_flush", "pscw"), "fence",
          "rma: how each access epoch is opened and closed", flag=False),
    Param("win", ("allocate", "create"), "allocate",
          "rma: window memory from MPI_Win_allocate, or MPI_Win_create on our own"),
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
    default_window: int = 64  # --window when not given
    # The case's one size, from its parameters (--sizes does not apply): (params, where) -> bytes.
    fixed_bytes: Callable[[dict[str, str], str], int] | None = None
    app: bool = False  # an application: `commscope app NAME` runs it, not run or sweep

    def bandwidth_Bps(self, t: float, case) -> float | None:
        if self.bandwidth is None or t <= 0:
            return None
        return self.bandwidth(t, case)


def _two_buffers(n: int, window: int, ranks: int) -> int:
    return 2 * n


def _windowed(n: int, window: int, ranks: int) -> int:
    return n * (1 + effective_window(window, n))


def _rma_buffers(n: int, window: int, ranks: int) -> int:
    return 2 * n * effective_window(window, n)  # origin: its buffer, and accumulate's scratch


def _per_rank_blocks(n: int, window: int, ranks: int) -> int:
    return 2 * n * ranks  # a send and a receive block per rank, at the root


def _ring_bytes(t: float, case) -> float:
    """Bytes each rank sends per iteration over t (IMB: Sendrecv 2n, Exchange 4n)."""
    pattern = case.params.get("pattern", "ring")
    per_iteration = {"ring": 2 * case.ranks, "sendrecv": 2, "exchange": 4}[pattern]
    return per_iteration * case.bytes / t


HALO_FIELD_MAX = 2**31 - 1  # doubles per rank: native/halo.c keeps MPI int strides and counts


def _pair(text: str) -> tuple[int, int] | None:
    """AxB, both positive, or None."""
    m = re.fullmatch(r"([1-9]\d*)x([1-9]\d*)", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _halo_tile(params: dict[str, str], where: str) -> tuple[int, int, int]:
    """(NX, NY, W) from tile and halo, each checked (docs/kernels-halo.md)."""
    tile, width = params.get("tile", PARAMS["tile"].default), params.get("halo", PARAMS["halo"].default)
    pair = _pair(tile)
    if pair is None:
        raise UserError(f"{where}tile {tile}: give NXxNY interior points per rank, e.g. 256x256")
    nx, ny = pair
    if not width.isdigit() or not 1 <= int(width) <= min(nx, ny):
        raise UserError(f"{where}halo {width}: give a ghost width from 1 to {min(nx, ny)} "
                        f"(the smaller side of tile {tile})")
    w = int(width)
    if (nx + 2 * w) * (ny + 2 * w) > HALO_FIELD_MAX:
        raise UserError(f"{where}tile {tile}: over 2^31 - 1 doubles per rank with its ghosts; "
                        "give a smaller tile")
    return nx, ny, w


def _halo_bytes(params: dict[str, str], where: str) -> int:
    """What each rank sends per exchange: W columns of NY and W rows of NX, both ways, 8 B each."""
    nx, ny, w = _halo_tile(params, where)
    return 16 * w * (nx + ny)


def _check_grid(grid: str, ranks: int, where: str) -> None:
    if grid == "auto":
        return
    pair = _pair(grid)
    if pair is None:
        raise UserError(f"{where}grid {grid}: give PXxPY (e.g. 2x2) or auto")
    if pair[0] * pair[1] != ranks:
        raise UserError(f"{where}grid {grid}: a {grid} process grid is {pair[0] * pair[1]} ranks, "
                        f"but the run has {ranks}; give PXxPY with PX*PY = {ranks}, or auto")


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
    Kernel("rma", "one-sided put, get or accumulate of W operations per epoch (OSU put/get/acc)",
           2, lambda t, c: t, lambda t, c: c.window * c.bytes / t, _rma_buffers,
           params=("operation", "epoch", "win"), two_ranks=True, default_window=1),
    Kernel("fanin", "every rank sends to rank 0 (seed 000); per-rank send times", 2,
           lambda t, c: t, lambda t, c: (c.ranks - 1) * c.bytes / t, _per_rank_blocks,
           modes=SEND_MODES[:5], params=("order",)),
    Kernel("ring", "periodic ring: forwarding both ways (seed 001), sendrecv or exchange", 2,
           lambda t, c: t, _ring_bytes, lambda n, w, r: 6 * n, params=("pattern",)),
    Kernel("vector_sum", "seed 000's vector sum: distribute, compute, combine", 1,
           lambda t, c: t, None, lambda n, w, r: 2 * n, params=("distribute", "combine")),
    # memory: the field follows from --tile, not from bytes; _halo_tile bounds it.
    Kernel("halo", "2D periodic halo exchange of a tile's four faces; bytes = what a rank sends", 1,
           lambda t, c: t, lambda t, c: c.bytes / t, lambda n, w, r: 0,
           params=("tile", "halo", "method", "grid"), fixed_bytes=_halo_bytes),
    # A sample is one whole solve; bytes = the n x n float64 field; memory: three tiles per rank
    # and, with field=, the whole field gathered on rank 0 (docs/app-advection2d.md).
    Kernel("advection2d", "seed 003's 2D advection app: one Beam-Warming solve per sample", 1,
           lambda t, c: t, None, lambda n, w, r: 3 * n // r + n, app=True),
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


def runnable(name: str) -> Kernel:
    """A kernel `run` and `sweep` measure; an application is refused with the verb that runs it."""
    k = kernel(name)
    if k.app:
        raise UserError(f"{name} is an application with its own checks; run it with "
                        f"`commscope app {name}`")
    return k


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
    if "tile" in values:
        _halo_tile(values, where)
        _check_grid(values["grid"], ranks, where)
    return values


def _element(k: Kernel, params: dict[str, str]) -> tuple[str, int] | None:
    """The element every size must be a whole number of, as (name, bytes); None: any size."""
    if k.dtype_sized:
        return params["dtype"], DTYPE_BYTES[params["dtype"]]
    if params.get("operation") == "accumulate":
        return "accumulate's uint64", ACCUMULATE_BYTES  # MPI_SUM is not defined on MPI_BYTE
    return None


def check_sizes(k: Kernel, sizes: list[int], params: dict[str, str]) -> None:
    element = _element(k, params)
    if element:
        name, unit = element
        odd = [s for s in sizes if s % unit]
        if odd:
            raise UserError(f"--sizes: {odd[0]} B is not a whole number of {name} "
                            f"({unit} B) elements; give multiples of {unit}")
