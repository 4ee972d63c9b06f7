"""The real launcher: the MPI's mpirun, hydra's mpiexec or srun, as a process this
command owns, and the records file its rank 0 writes, read a whole line at a time."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path

from .. import stopping
from ..build import native_binary
from ..mpi import Mpi
from . import launch
from .placement import Placement

STOP_GRACE_S = 5.0  # the launcher's time to end its job on SIGTERM, before SIGKILL
REAP_S = 10.0  # a killed launcher not reaped by then is left to init

_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
PR_SET_PDEATHSIG = 1


class MpiLauncher:
    def start(self, mpi: Mpi, ranks: int, args: list[str], placement: Placement,
              records: Path) -> "MpiJob":
        how = launch(mpi, ranks, native_binary(mpi), args + ["--output", str(records)],
                     placement)
        return MpiJob(how.argv, how.env, how.oversubscribed, records)


def _drain(stream, lines) -> None:
    for line in stream:
        lines.append(line)


def _start(argv: list[str], env: dict) -> subprocess.Popen:
    """The launcher, in a session of its own (Ctrl-C reaches only us, and we end the whole
    job deliberately), sent SIGTERM by the kernel when this process dies however it dies,
    SIGKILL included: on SIGTERM mpirun and hydra end their ranks, remote ones too. The
    ranks themselves die with their launcher (native/main.c), should it be killed."""
    parent = os.getpid()

    def die_with_parent():
        if _prctl:
            _prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
            if os.getppid() != parent:  # died before the request: no signal would come
                os._exit(1)

    return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=die_with_parent)


def _session(sid: int) -> list[int]:
    """Processes of a session; launchers put ranks in process groups of their own."""
    members = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and \
                    int((entry / "stat").read_text().rsplit(")", 1)[1].split()[3]) == sid:
                members.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return members


class MpiJob:
    """The launcher process and rank 0's records file. Launchers relay long stdout lines
    slowly, so rank 0 writes its records to a file; other ranks' error records still
    come on stdout."""

    def __init__(self, argv: list[str], env: dict, oversubscribed: bool, records: Path):
        self.oversubscribed = oversubscribed
        self.file = open(records, "a+")  # created here, so it exists before rank 0 opens it
        self.file.seek(0)
        self.partial = ""
        self.stdout: list[str] = []
        self.stderr: deque[str] = deque(maxlen=20)
        self.proc = _start(argv, env)
        stopping.track(id(self), self.kill)
        self.readers = [threading.Thread(target=_drain, args=(self.proc.stdout, self.stdout),
                                         daemon=True),
                        threading.Thread(target=_drain, args=(self.proc.stderr, self.stderr),
                                         daemon=True)]
        for r in self.readers:
            r.start()

    def lines(self) -> list[str]:
        whole = []
        for line in self.file.readlines():
            self.partial += line
            if self.partial.endswith("\n"):
                whole.append(self.partial)
                self.partial = ""
        return whole

    def poll(self) -> int | None:
        return self.proc.poll()

    def stop(self) -> None:
        """SIGTERM to the launcher, so it can end its job cleanly; whatever of the job's
        session is left after STOP_GRACE_S, or at once when hurried, gets SIGKILL."""
        try:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + STOP_GRACE_S
        while self.proc.poll() is None and time.monotonic() < deadline \
                and not stopping.hurry():
            time.sleep(0.02)
        self.kill()
        deadline = time.monotonic() + REAP_S
        while self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)

    def kill(self) -> None:
        """SIGKILL to every process of the job's session (the launcher leads it; a pid
        stays taken while a session bears its number, so no stranger is hit)."""
        for pid in _session(self.proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def output(self) -> tuple[list[str], list[str]]:
        for r in self.readers:
            r.join(timeout=5)
        return list(self.stdout), list(self.stderr)

    def close(self) -> None:
        stopping.untrack(id(self))
        self.file.close()
