"""Run one measurement plan: build, launch, ingest; every case committed as it lands."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from . import host
from .advice import case_advice, run_advice
from .build import native_binary
from .ingest import Ingest, RecordsError, case_label
from .launcher import launch
from .mpi import Mpi
from .plan import Plan
from .progress import Progress
from .store import Store
from .summary import case_summary


@dataclass
class Outcome:
    run_id: int
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
            time.sleep(0.02)


def measure(store: Store, mpi: Mpi, plan: Plan, command: list[str], sweep_id: int | None = None,
            launch_no: int | None = None, case_key=None, progress: Progress | None = None) -> Outcome:
    """One launch of the plan. `case_key(record)` names sweep cases; `progress` may be shared."""
    binary = native_binary(mpi)
    with tempfile.TemporaryDirectory(prefix="commscope-") as tmp:
        # Rank 0 writes records to a file: launchers relay long stdout lines slowly.
        # Other ranks' error records still come on stdout.
        records = Path(tmp, "records.jsonl")
        how = launch(mpi, plan.ranks, binary, plan.native_args() + ["--output", str(records)],
                     plan.placement)
        run_id = store.begin_run(command, plan.kernel.name, plan.ranks, how.oversubscribed,
                                 plan.settings(), sweep_id, launch_no, plan.kernel.described,
                                 host.facts())
        own_progress = progress is None
        if own_progress:
            progress = Progress(plan.cases, f"{plan.kernel.name} x{plan.ranks}")
        ingest = Ingest(store, run_id, on_case=lambda rec: progress.advance(case_label(rec)),
                        case_key=case_key)
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
            code = _follow(records, proc, ingest, plan.sampling.case_timeout)
        except (KeyboardInterrupt, CaseTimeout, RecordsError) as stopped:
            _stop(proc)
            if own_progress:
                progress.close()
            status = "interrupted" if isinstance(stopped, KeyboardInterrupt) else "failed"
            message = _stopped_message(status, ingest)
            if isinstance(stopped, CaseTimeout):
                message += "; " + _timeout_reason(plan, ingest)
            if isinstance(stopped, RecordsError):
                message += f"; {stopped}"
            _finish(store, run_id, how.oversubscribed, status, message)
            return Outcome(run_id, status, message, ingest, how.oversubscribed)
        for r in readers:
            r.join(timeout=5)
        for line in stdout_lines:
            ingest.feed(line)
    if own_progress:
        progress.close()
    if code == 0 and ingest.ended and not ingest.errors:
        _finish(store, run_id, how.oversubscribed, "complete")
        return Outcome(run_id, "complete", None, ingest, how.oversubscribed)
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
    _finish(store, run_id, how.oversubscribed, "failed", message)
    return Outcome(run_id, "failed", message, ingest, how.oversubscribed)


def _finish(store: Store, run_id: int, oversubscribed: bool, status: str,
            message: str | None = None) -> None:
    """Store the warnings about what was measured, then the run's end."""
    run = store.run(run_id)
    timer = json.loads(run["context"] or "{}").get("timer") or {}
    advice = run_advice(oversubscribed, run["ranks"])
    for case in store.cases(run_id):
        advice += case_advice(case, case_summary(case), timer.get("resolution_s"))
    store.add_warnings(run_id, advice)
    store.finish_run(run_id, status, message)


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


def _timeout_reason(plan: Plan, ingest: Ingest) -> str:
    """Which case hung, on which ranks, and what to do."""
    ranks = "ranks 0 and 1" if plan.kernel.two_ranks else f"ranks 0-{plan.ranks - 1}"
    where = (f"{case_label(ingest.in_flight)} on {ranks}" if ingest.in_flight
             else f"the launch of {plan.ranks} ranks, before its first case")
    return (f"timed out: {where} made no progress for {plan.sampling.case_timeout:g} s "
            "(--timeout); "
            "check the ranks' hosts and links, then --resume a sweep or rerun")


def _stopped_message(status: str, ingest: Ingest) -> str:
    kept = len(ingest.case_ids)
    flight = f"; {case_label(ingest.in_flight)} was in flight" if ingest.in_flight else ""
    return f"{status}: {kept} finished case{'s' * (kept != 1)} kept{flight}"
