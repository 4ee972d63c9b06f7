"""The launch seam: a launch takes the native arguments of a plan and gives back a stream
of record lines and an exit status.

`measure.py` follows a `Job` and never asks what runs it. The real `Launcher` starts
the MPI's launcher (launcher/process.py); the tests' in-process fake
(tests/fakempi/inprocess.py) writes the records the native binary would, from a latency
model, with failures and hangs on request, in the test's own process. `using()` swaps
the launcher for the length of a block.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from ..mpi import Mpi
from .placement import Placement


class Job(Protocol):
    """One launch in flight."""
    oversubscribed: bool  # more ranks on a host than it has cores

    def lines(self) -> list[str]:
        """Every whole record line rank 0 wrote since the last call."""

    def poll(self) -> int | None:
        """The exit status once the job has ended, else None."""

    def stop(self) -> None:
        """End the job and all it started: a grace to end cleanly, none once hurried."""

    def output(self) -> tuple[list[str], list[str]]:
        """Once ended: the lines on stdout (other ranks' error records) and the last
        lines on stderr (the launcher's own words)."""

    def close(self) -> None:
        """Release what the job held (its records file)."""


class Launcher(Protocol):
    def start(self, mpi: Mpi, ranks: int, args: list[str], placement: Placement,
              records: Path) -> Job:
        """`ranks` ranks of the native binary with `args`, as placed; rank 0 writes its
        records to `records`."""


_current: list[Launcher] = []


def current() -> Launcher:
    if not _current:
        from .process import MpiLauncher  # the real one, unless a block chose another
        _current.append(MpiLauncher())
    return _current[-1]


@contextmanager
def using(launcher: Launcher):
    """Launch with `launcher` inside the block."""
    current()
    _current.append(launcher)
    try:
        yield launcher
    finally:
        _current.pop()


def context_of(mpi: Mpi, ranks: int, placement: Placement,
               timeout_s: float) -> tuple[int | None, dict | None, list[str]]:
    """The native binary's --info on `ranks` ranks as placed, through the current launcher:
    its exit status (None: still running at the timeout, then stopped), its context record
    (None: none was written) and the launcher's last words on stderr."""
    import json
    import tempfile
    import time

    from .. import owner, stopping

    with tempfile.TemporaryDirectory(prefix=owner.TMP_PREFIX) as tmp:
        job = current().start(mpi, ranks, ["--info"], placement, Path(tmp) / "records.jsonl")
        try:
            deadline, lines = time.monotonic() + timeout_s, []
            while job.poll() is None and time.monotonic() < deadline:
                stopping.check()
                lines += job.lines()
                time.sleep(0.01)
            status = job.poll()
            lines += job.lines()
        finally:
            job.stop()
            job.close()
    context = next((json.loads(x) for x in lines if '"context"' in x), None)
    return status, context, job.output()[1]
