"""Run one measurement plan: build, launch, ingest; every case committed as it lands."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from . import owner, stopping
from .build import native_binary
from .ingest import Ingest, RecordsError, case_label
from .launcher import launch
from .mpi import Mpi
from .plan import Plan, Step
from .progress import Progress
from .store import Store

KEEP_TMP = "COMMSCOPE_KEEP_TMP"  # set: each launch's folder (its records file) is kept
STOP_GRACE_S = 5.0  # the launcher's time to end its job on SIGTERM, before SIGKILL
# Every rank has finished once rank 0 writes its end record; a launcher that has not
# exited this long after is hung (a stopped prterun was seen), and is stopped.
LAUNCHER_EXIT_S = 10.0


@dataclass
class Outcome:
    """How one launch ended."""
    run_id: int
    launch_id: int
    status: str  # complete, interrupted or failed
    message: str | None
    ingest: Ingest
    oversubscribed: bool


def _drain(stream, lines) -> None:
    for line in stream:
        lines.append(line)


class CaseTimeout(Exception):
    """The job showed no progress (no record) for the plan's case timeout."""


class Records:
    """The records file rank 0 writes, read a whole line at a time as it grows."""

    def __init__(self, path: Path):
        self.path = path
        self.file = open(path, "a+")  # created here, so it exists before rank 0 opens it
        self.file.seek(0)
        self.partial = ""

    def feed(self, ingest: Ingest) -> None:
        """Every whole line written since the last call, each stored before the next is
        read. A stop signal waits until every line read is stored: a signal between
        reading the lines and storing them lost a case the ranks had finished (CI, once,
        SIGTERM in the fault matrix)."""
        with stopping.deferred():
            for line in self.file.readlines():
                self.partial += line
                if self.partial.endswith("\n"):
                    line, self.partial = self.partial, ""
                    ingest.feed(line)

    def close(self) -> None:
        self.file.close()


def _follow(records: Records, proc: subprocess.Popen, ingest: Ingest,
            timeout_s: float) -> int | None:
    """Feed the records as they are written until the job ends: its exit code, or None
    when every rank finished but the launcher did not exit (it is then stopped).

    Raises CaseTimeout when no record arrives for timeout_s: a hung case, a dead
    link, or a launch that never starts.
    """
    while True:
        exited = proc.poll() is not None  # read once more after exit: nothing is missed
        records.feed(ingest)
        if exited:
            return proc.returncode
        if ingest.ended and time.monotonic() - ingest.last_record > LAUNCHER_EXIT_S:
            return None
        if not ingest.ended and time.monotonic() - ingest.last_record > timeout_s:
            raise CaseTimeout
        time.sleep(0.005)  # a launch ends within 5 ms of its last record


_prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform == "linux" else None
PR_SET_PDEATHSIG = 1


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


def measure(store: Store, mpi: Mpi, plan: Plan, run_id: int, step: Step = Step(),
            case_key=None, progress: Progress | None = None) -> Outcome:
    """One launch of the plan, stored as a launch of run `run_id`. `case_key(record)` names
    sweep cases; `progress` may be shared."""
    binary = native_binary(mpi)
    tmp = owner.temp_folder(store.path, adopt=lambda db: Store(db).close())
    own_progress = progress is None
    if own_progress:
        progress = Progress(plan.cases, f"{plan.kernel.name} x{plan.ranks}")
    try:
        return _measure(store, mpi, plan, run_id, step, case_key, progress, binary, tmp)
    finally:
        if own_progress:
            progress.close()
        if not os.environ.get(KEEP_TMP):
            shutil.rmtree(tmp, ignore_errors=True)


def _measure(store: Store, mpi: Mpi, plan: Plan, run_id: int, step: Step, case_key,
             progress: Progress, binary: Path, tmp: Path) -> Outcome:
    timeout_s = step.case_timeout(plan.sampling)
    # Rank 0 writes records to a file: launchers relay long stdout lines slowly.
    # Other ranks' error records still come on stdout.
    records = Records(tmp / "records.jsonl")
    how = launch(mpi, plan.ranks, binary,
                 plan.native_args(step) + ["--output", str(records.path)], plan.placement)
    # Where the records are, and the sweep's case keys: a later command adopts the cases
    # the ranks finish after this one dies (Store.adopt_orphans).
    keys = {f"{m}|{b}": case_key({"send_mode": m, "bytes": b})
            for m in plan.modes for b in plan.sizes} if case_key else None
    launch_id = store.begin_launch(run_id, step.number, how.oversubscribed,
                                   {**step.settings(), "records": str(records.path),
                                    "case_keys": keys})
    ingest = Ingest(store, run_id, launch_id,
                    on_case=lambda rec: progress.advance(case_label(rec)), case_key=case_key)
    stdout_lines: list[str] = []
    stderr_tail: deque[str] = deque(maxlen=20)
    proc = None
    try:
        proc = _start(how.argv, how.env)
        readers = [threading.Thread(target=_drain, args=(proc.stdout, stdout_lines), daemon=True),
                   threading.Thread(target=_drain, args=(proc.stderr, stderr_tail), daemon=True)]
        for r in readers:
            r.start()
        code = _follow(records, proc, ingest, timeout_s)
    except (KeyboardInterrupt, CaseTimeout, RecordsError) as stopped:
        if proc:
            _stop(proc)
        if not isinstance(stopped, RecordsError):
            records.feed(ingest)  # what the ranks finished before they were stopped
        records.close()
        status = "interrupted" if isinstance(stopped, KeyboardInterrupt) else "failed"
        message = _stopped_message(status, ingest)
        if isinstance(stopped, CaseTimeout):
            message += "; " + _timeout_reason(plan, ingest, timeout_s)
        if isinstance(stopped, RecordsError):
            message += f"; {stopped}"
        store.finish_launch(launch_id, status, message)
        return Outcome(run_id, launch_id, status, message, ingest, how.oversubscribed)
    except BaseException:  # the store failed, say: the job must not outlive the command
        if proc:
            _stop(proc)
        raise
    records.close()
    if code is None:
        _stop(proc)
        code = 0
        print(f"commscope: launch {step.number}: every rank finished, but the launcher had "
              f"not exited {LAUNCHER_EXIT_S:g} s later; it was stopped, and the launch is "
              "complete", file=sys.stderr)
    for r in readers:
        r.join(timeout=5)
    for line in stdout_lines:
        ingest.feed(line)
    if code == 0 and ingest.ended and not ingest.errors:
        store.finish_launch(launch_id, "complete")
        return Outcome(run_id, launch_id, "complete", None, ingest, how.oversubscribed)
    if ingest.errors:
        e = ingest.errors[0]
        reason = f"rank {e.get('rank')} reported: {e.get('message')}"
    else:
        # The native core's own line says most; else the launcher's last words.
        lines = "".join(stderr_tail).strip().splitlines()
        ours = [l for l in lines if l.startswith("commscope-native")]
        last = ours[:1] or [l.strip() for l in lines if l.strip(" -")][-2:]
        reason = f"MPI job exited with code {code}" + (": " + " | ".join(last) if last else "")
    message = _stopped_message("failed", ingest) + "; " + reason
    store.finish_launch(launch_id, "failed", message)
    return Outcome(run_id, launch_id, "failed", message, ingest, how.oversubscribed)


def _session(sid: int) -> list[int]:
    """Processes of a session; launchers put ranks in process groups of their own."""
    members = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[3]) == sid:
                members.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return members


def _stop(proc: subprocess.Popen) -> None:
    """End the launcher and every rank it started.

    The launcher gets SIGTERM first, so it can end its job cleanly; whatever of the
    job's session is left after STOP_GRACE_S, or at once when a second stop signal
    asks to hurry, gets SIGKILL. A stop signal during this waits until it is done.
    """
    with stopping.deferred():
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + STOP_GRACE_S
        while proc.poll() is None and time.monotonic() < deadline and not stopping.hurry():
            time.sleep(0.02)
        for pid in _session(proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()


def _timeout_reason(plan: Plan, ingest: Ingest, timeout_s: float) -> str:
    """Which case hung, on which ranks, and what to do."""
    ranks = "ranks 0 and 1" if plan.kernel.two_ranks else f"ranks 0-{plan.ranks - 1}"
    where = (f"{case_label(ingest.in_flight)} on {ranks}" if ingest.in_flight
             else f"the launch of {plan.ranks} ranks, before its first case")
    return (f"timed out: {where} made no progress for {timeout_s:g} s "
            "(--timeout); "
            "check the ranks' hosts and links, then --resume a sweep or rerun")


def _stopped_message(status: str, ingest: Ingest) -> str:
    kept = len(ingest.case_ids)
    flight = f"; {case_label(ingest.in_flight)} was in flight" if ingest.in_flight else ""
    how = f" by {stopping.name()}" if status == "interrupted" else ""
    return f"{status}{how}: {kept} finished case{'s' * (kept != 1)} kept{flight}"
