"""Run one measurement plan: build, launch, ingest; every case committed as it lands."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from .build import native_binary
from .ingest import Ingest, RecordsError, case_label
from .launcher import launch
from .mpi import Mpi
from .plan import Plan, Step
from .progress import Progress
from .store import Store


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


def _follow(path: Path, proc: subprocess.Popen, ingest: Ingest, timeout_s: float) -> int:
    """Feed each whole line of the records file as it is written, until the job ends.

    Raises CaseTimeout when no record arrives for timeout_s: a hung case, a dead
    link, or a launch that never starts.
    """
    partial = ""
    with open(path, "a+") as records:  # created here, so it exists before rank 0 opens it
        records.seek(0)
        while True:
            exited = proc.poll() is not None  # read once more after exit: nothing is missed
            for line in records.readlines():
                partial += line
                if partial.endswith("\n"):
                    ingest.feed(partial)
                    partial = ""
            if exited:
                return proc.returncode
            if time.monotonic() - ingest.last_record > timeout_s:
                raise CaseTimeout
            time.sleep(0.005)  # a launch ends within 5 ms of its last record


def measure(store: Store, mpi: Mpi, plan: Plan, run_id: int, step: Step = Step(),
            case_key=None, progress: Progress | None = None) -> Outcome:
    """One launch of the plan, stored as a launch of run `run_id`. `case_key(record)` names
    sweep cases; `progress` may be shared."""
    binary = native_binary(mpi)
    timeout_s = step.case_timeout(plan.sampling)
    with tempfile.TemporaryDirectory(prefix="commscope-") as tmp:
        # Rank 0 writes records to a file: launchers relay long stdout lines slowly.
        # Other ranks' error records still come on stdout.
        records = Path(tmp, "records.jsonl")
        how = launch(mpi, plan.ranks, binary,
                     plan.native_args(step) + ["--output", str(records)], plan.placement)
        launch_id = store.begin_launch(run_id, step.number, how.oversubscribed, step.settings())
        own_progress = progress is None
        if own_progress:
            progress = Progress(plan.cases, f"{plan.kernel.name} x{plan.ranks}")
        ingest = Ingest(store, run_id, launch_id,
                        on_case=lambda rec: progress.advance(case_label(rec)), case_key=case_key)
        stdout_lines: list[str] = []
        stderr_tail: deque[str] = deque(maxlen=20)
        # Own session: Ctrl-C reaches only us, and we end the whole MPI job deliberately.
        proc = subprocess.Popen(how.argv, env=how.env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        readers = [threading.Thread(target=_drain, args=(proc.stdout, stdout_lines), daemon=True),
                   threading.Thread(target=_drain, args=(proc.stderr, stderr_tail), daemon=True)]
        for r in readers:
            r.start()
        try:
            code = _follow(records, proc, ingest, timeout_s)
        except (KeyboardInterrupt, CaseTimeout, RecordsError) as stopped:
            _stop(proc)
            if own_progress:
                progress.close()
            status = "interrupted" if isinstance(stopped, KeyboardInterrupt) else "failed"
            message = _stopped_message(status, ingest)
            if isinstance(stopped, CaseTimeout):
                message += "; " + _timeout_reason(plan, ingest, timeout_s)
            if isinstance(stopped, RecordsError):
                message += f"; {stopped}"
            store.finish_launch(launch_id, status, message)
            return Outcome(run_id, launch_id, status, message, ingest, how.oversubscribed)
        for r in readers:
            r.join(timeout=5)
        for line in stdout_lines:
            ingest.feed(line)
    if own_progress:
        progress.close()
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

    The launcher gets SIGTERM first, so it can end its job cleanly; whatever of
    the job's session is left after 5 s gets SIGKILL.
    """
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
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
    return f"{status}: {kept} finished case{'s' * (kept != 1)} kept{flight}"
