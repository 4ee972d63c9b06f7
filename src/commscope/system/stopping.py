"""Stopping a command: Ctrl-C, SIGTERM and SIGHUP all end it the same way, at safe points.

`timeout`, Slurm's time limit, `docker stop`, systemd and a closed ssh session send
SIGTERM or SIGHUP, not SIGINT; each, like Ctrl-C, asks the command to stop. The handler
only records the signal: raising from it, at whatever bytecode the main thread was
running, once left a lock inside `Popen.poll()` held for ever (issue 25). The places
that may wait call `check()`, which raises Stopped (a KeyboardInterrupt) once: the
follow loop of a launch, the start of each launch, the store's retry loops and `main`.
The launch in flight is then ended, its finished cases kept and its run marked
interrupted (measure.py).

A second signal hurries the ending (`hurry()`: no grace for the MPI job before
SIGKILL, no more waiting for the results file). A third ends it at once, from the
handler: every job still registered with `track` is killed and the process exits,
whatever the main thread is blocked in. The command exits with 128 + the first
signal's number, as a shell reports a process that the signal killed.
"""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager
from typing import Callable

STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
LAST_RESORT = 3  # the signal that ends the command from the handler

_received: list[int] = []
_raised = False
_kills: dict[int, Callable[[], None]] = {}  # job -> how to kill it at once


class Stopped(KeyboardInterrupt):
    """The command was asked to stop by signal `signum`."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _handler(signum, frame) -> None:
    _received.append(signum)
    if len(_received) >= LAST_RESORT:
        for kill in list(_kills.values()):
            kill()
        os._exit(exit_code())


@contextmanager
def installed():
    """Handle every stop signal while the block runs, except one the command was started
    with ignored (a background job's SIGINT, nohup's SIGHUP): that stays ignored. The
    handlers before are restored after, and what was received is forgotten (a command
    run in-process, as the tests do, leaves nothing behind)."""
    global _raised
    before = {s: signal.getsignal(s) for s in STOPS}
    _received.clear()
    _raised = False
    for signum, old in before.items():
        if old is not signal.SIG_IGN:
            signal.signal(signum, _handler)
    try:
        yield
    finally:
        for signum, old in before.items():
            signal.signal(signum, old if old is not None else signal.SIG_DFL)
        _received.clear()
        _kills.clear()
        _raised = False


def requested() -> bool:
    """A stop signal came."""
    return bool(_received)


def check() -> None:
    """A safe point: raise Stopped if a stop signal came and has not been raised yet."""
    global _raised
    if _received and not _raised:
        _raised = True
        raise Stopped(_received[0])


def hurry() -> bool:
    """A second stop signal came: end without waiting."""
    return len(_received) > 1


def exit_code(default: int = 130) -> int:
    """128 + the first stop signal's number; `default` when none came (Ctrl-C's 130)."""
    return 128 + _received[0] if _received else default


def name() -> str:
    return signal.Signals(_received[0]).name if _received else "SIGINT"


def track(job: int, kill: Callable[[], None]) -> None:
    """`kill()` ends job `job` at once, should a third signal come while it runs."""
    _kills[job] = kill


def untrack(job: int) -> None:
    _kills.pop(job, None)
