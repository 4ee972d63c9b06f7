"""What the readers of other profilers' files (mpisee.py, mpip.py) share: the MPI name of
a call, one row per rank and key, and the one-line refusal of a file."""

from __future__ import annotations

from pathlib import Path

from ..system.errors import UserError
from ..profiles import Row, added


def mpi_call(name: str) -> str:
    """The MPI name of a call as the tools print it: mpisee's `Allreduce` and mpiP's
    `Allreduce` (mpiP drops the `MPI_` of its lookup names) are both MPI_Allreduce."""
    return name if name.startswith("MPI_") else f"MPI_{name}"


def merged(rows) -> tuple[Row, ...]:
    """One row per rank and key (profiles.added), in rank and key order."""
    return tuple(sorted(added(rows), key=lambda r: (r.rank, *r.key[:3], r.peer or "")))


def refused(path: Path | str, what: str, expected: str) -> UserError:
    """A file that is not what it claims, or is cut short: nothing of it is stored."""
    return UserError(f"{path}: {what}; expected {expected}")
