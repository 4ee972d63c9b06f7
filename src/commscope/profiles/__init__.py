"""An MPI program's communication, as `commscope profile` records it and as other
profilers' files (mpisee, mpiP) are read into it: per rank, rows of (call, communicator
size, message-size bucket, peer distance) with their call count and the time spent in
them, and each rank's wall time (docs/profile.md). Pure data: the store keeps it
(profiles/stored.py), predict prices it (profiles/price.py)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field


def bucket(nbytes: int) -> int:
    """The power-of-two bucket of a message size: the largest power of two not above it
    (0 for 0)."""
    return 0 if nbytes <= 0 else 1 << (int(nbytes).bit_length() - 1)


@dataclass(frozen=True)
class Row:
    call: str  # the MPI name: MPI_Allreduce, MPI_Isend, ...
    comm_size: int  # processes in the call's communicator
    bytes: int  # the bucket (bucket()): for a collective, what commscope's kernel of the
    # same operation calls its size (kernels.py); for point-to-point, the message
    peer: str | None  # point-to-point: "local" (same host) or "remote"; None otherwise
    count: int
    time_s: float  # in the call, with a nonblocking call's share of its completion
    rank: int | None = None  # None: summed over ranks
    bytes_sum: int | None = None  # the sizes of its calls added up, where known
    # nonblocking: the program's own time between each call's return and the call that
    # completed it, added up (None: not recorded, as in imported profiles)
    overlap_s: float | None = None

    @property
    def mean_bytes(self) -> float:
        """The mean size of its calls: the bucket's lower end where their sum is unknown."""
        return self.bytes_sum / self.count if self.bytes_sum is not None and self.count \
            else float(self.bytes)

    @property
    def key(self) -> tuple:
        return (self.call, self.comm_size, self.bytes, self.peer)


def added(rows, per_rank: bool = True) -> list[Row]:
    """One row per key (and per rank, or over all ranks): counts, times and bytes added, the
    bytes unknown where one of the rows does not know them. A tool's rows per communicator
    or call site meet in one key where two communicators have one size."""
    count: dict[tuple, int] = defaultdict(int)
    time: dict[tuple, float] = defaultdict(float)
    total: dict[tuple, int | None] = defaultdict(int)
    overlap: dict[tuple, float | None] = defaultdict(float)
    for r in rows:
        at = (r.rank if per_rank else None, *r.key)
        count[at] += r.count
        time[at] += r.time_s
        total[at] = _plus(total[at], r.bytes_sum)
        overlap[at] = _plus(overlap[at], r.overlap_s)
    return [Row(*key, count[(rank, *key)], time[(rank, *key)], rank, total[(rank, *key)],
                overlap[(rank, *key)]) for rank, *key in count]


def _plus(a, b):
    """A sum that is unknown where one of its parts is."""
    return None if a is None or b is None else a + b


@dataclass(frozen=True)
class Profile:
    program: tuple[str, ...]  # the command profiled, or the imported file
    ranks: int
    wall_s: tuple[float, ...]  # each rank's, MPI_Init to MPI_Finalize (or its last flush)
    rows: tuple[Row, ...]  # per rank
    source: dict = field(default_factory=dict)  # {"tool": "commscope" | "mpisee" | "mpip", ...}

    def summed(self) -> list[Row]:
        """The rows summed over ranks, the most time first."""
        return sorted(added(self.rows, per_rank=False), key=lambda r: (-r.time_s, r.key))

    def mpi_s(self) -> float:
        """Time in MPI per rank, the mean over ranks: what the program spent communicating."""
        return sum(r.time_s for r in self.rows) / max(self.ranks, 1)
