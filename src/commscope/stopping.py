"""Stopping a command: Ctrl-C, SIGTERM and SIGHUP all end it the same way.

`timeout`, Slurm's time limit, `docker stop`, systemd and a closed ssh session send
SIGTERM or SIGHUP, not SIGINT; each of them, like Ctrl-C, raises Stopped (a
KeyboardInterrupt) once, so the launch in flight is ended, its finished cases kept
and its run marked interrupted (measure.py). A later signal raises nothing, so the
ending itself is never cut short: it asks the ending to hurry (no grace for the MPI
job before SIGKILL). The command exits with 128 + the first signal's number, as a
shell reports a process that the signal killed.

Store writes run `deferred()`: a signal that arrives inside one is raised when the
write is done, so a case the ranks finished is never lost to a rolled-back commit.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager

STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_received: list[int] = []
_deferring = 0
_pending = False


class Stopped(KeyboardInterrupt):
    """The command was asked to stop by signal `signum`."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _handler(signum, frame) -> None:
    global _pending
    _received.append(signum)
    if len(_received) > 1:
        return  # hurry() now says so; the ending under way finishes
    if _deferring:
        _pending = True
    else:
        raise Stopped(signum)


def install() -> None:
    """Handle every stop signal, except one the command was started with ignored (a
    background job's SIGINT, nohup's SIGHUP): that stays ignored."""
    for signum in STOPS:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _handler)


def hurry() -> bool:
    """A second stop signal came, or the first during a block that runs whole: end
    without waiting."""
    return len(_received) > 1 or _pending


def exit_code(default: int = 130) -> int:
    """128 + the first stop signal's number; `default` when none came (Ctrl-C's 130)."""
    return 128 + _received[0] if _received else default


def name() -> str:
    return signal.Signals(_received[0]).name if _received else "SIGINT"


def hold() -> None:
    """Hold stop signals until release(): as a deferred() block that spans two places."""
    global _deferring
    _deferring += 1


def release() -> None:
    """End what hold() began (if it did), raising a stop signal that came meanwhile."""
    global _deferring, _pending
    if _deferring:
        _deferring -= 1
    if not _deferring and _pending:
        _pending = False
        raise Stopped(_received[0])


@contextmanager
def deferred():
    """Run a block whole: a stop signal inside it is raised when it ends."""
    global _deferring, _pending
    _deferring += 1
    try:
        yield
    finally:
        release()
