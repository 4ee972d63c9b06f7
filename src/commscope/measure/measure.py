"""Run one launch of a plan: start it through the launch seam (system/launcher/job.py), ingest
its records as they come, every case committed as it lands."""

from __future__ import annotations

import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..system import owner
from . import recovery
from ..system import stopping
from .ingest import Ingest, RecordsError, case_label
from ..system.launcher.job import Job, current
from ..system.mpi import Mpi
from .plan import Plan, Step
from ..system.progress import Progress
from ..store.store import Store

KEEP_TMP = "COMMSCOPE_KEEP_TMP"  # set: each launch's folder (its records file) is kept
# Every rank has finished once rank 0 writes its end record; a launcher that has not
# exited this long after is hung (a stopped prterun was seen), and is stopped.
LAUNCHER_EXIT_S = 10.0
POLL_S = 0.005  # a launch ends within 5 ms of its last record


@dataclass
class Outcome:
    """How one launch ended."""
    run_id: int
    launch_id: int
    status: str  # complete, interrupted or failed
    message: str | None
    ingest: Ingest
    oversubscribed: bool


class CaseTimeout(Exception):
    """The job showed no progress (no record) for the plan's case timeout."""


def _feed(job: Job, ingest: Ingest) -> None:
    for line in job.lines():
        ingest.feed(line)


def _follow(job: Job, ingest: Ingest, timeout_s: float) -> int | None:
    """Feed the records as they are written until the job ends: its exit code, or None
    when every rank finished but the launcher did not exit (it is then stopped).

    Raises CaseTimeout when no record arrives for timeout_s: a hung case, a dead
    link, or a launch that never starts; Stopped at a stop signal.
    """
    while True:
        stopping.check()
        exited = job.poll()  # read once more after exit: nothing is missed
        _feed(job, ingest)
        if exited is not None:
            return exited
        if ingest.ended and time.monotonic() - ingest.last_record > LAUNCHER_EXIT_S:
            return None
        if not ingest.ended and time.monotonic() - ingest.last_record > timeout_s:
            raise CaseTimeout
        time.sleep(POLL_S)


def measure(store: Store, mpi: Mpi, plan: Plan, run_id: int, step: Step = Step(),
            case_key=None, progress: Progress | None = None) -> Outcome:
    """One launch of the plan, stored as a launch of run `run_id`. `case_key(record)` names
    sweep cases; `progress` may be shared."""
    tmp = owner.temp_folder(store.path, adopt=recovery.recover_file)
    own_progress = progress is None
    if own_progress:
        progress = Progress(plan.cases, f"{plan.kernel.name} x{plan.ranks}")
    try:
        return _measure(store, mpi, plan, run_id, step, case_key, progress, tmp)
    finally:
        if own_progress:
            progress.close()
        if not os.environ.get(KEEP_TMP):
            shutil.rmtree(tmp, ignore_errors=True)


def _measure(store: Store, mpi: Mpi, plan: Plan, run_id: int, step: Step, case_key,
             progress: Progress, tmp: Path) -> Outcome:
    timeout_s = step.case_timeout(plan.sampling)
    records = tmp / "records.jsonl"
    job = current().start(mpi, plan.ranks, plan.native_args(step), plan.placement, records)
    try:
        # Where the records are, and the sweep's case keys: a later command adopts the
        # cases the ranks finish after this one dies (recovery.py).
        launch_id = store.begin_launch(run_id, step.number, job.oversubscribed,
                                       {**step.settings(), **recovery.launch_settings(
                                           records, plan.modes, plan.sizes, case_key)})
        ingest = Ingest(store, run_id, launch_id,
                        on_case=lambda rec: progress.advance(case_label(rec)),
                        case_key=case_key)
        return _outcome(store, plan, job, ingest, timeout_s, step.number)
    except BaseException:  # the store failed, say: the job must not outlive the command
        job.stop()
        raise
    finally:
        job.close()


def _outcome(store: Store, plan: Plan, job: Job, ingest: Ingest, timeout_s: float,
             number: int) -> Outcome:
    def ended(status, message=None):
        store.finish_launch(ingest.launch_id, status, message)
        return Outcome(ingest.run_id, ingest.launch_id, status, message, ingest,
                       job.oversubscribed)

    try:
        code = _follow(job, ingest, timeout_s)
    except (KeyboardInterrupt, CaseTimeout, RecordsError) as stopped:
        job.stop()
        if not isinstance(stopped, RecordsError):
            _feed(job, ingest)  # what the ranks finished before they were stopped
        status = "interrupted" if isinstance(stopped, KeyboardInterrupt) else "failed"
        message = _stopped_message(status, ingest)
        if isinstance(stopped, CaseTimeout):
            message += "; " + _timeout_reason(plan, ingest, timeout_s)
        if isinstance(stopped, RecordsError):
            message += f"; {stopped}"
        return ended(status, message)
    if code is None:
        job.stop()
        code = 0
        print(f"commscope: launch {number}: every rank finished, but the launcher had not "
              f"exited {LAUNCHER_EXIT_S:g} s later; it was stopped, and the launch is "
              "complete", file=sys.stderr)
    stdout, stderr = job.output()
    for line in stdout:
        ingest.feed(line)
    if code == 0 and ingest.ended and not ingest.errors:
        return ended("complete")
    if ingest.errors:
        e = ingest.errors[0]
        reason = f"rank {e.get('rank')} reported: {e.get('message')}"
    else:
        # The native core's own line says most; else the launcher's last words.
        lines = "".join(stderr).strip().splitlines()
        ours = [line for line in lines if line.startswith("commscope-native")]
        last = ours[:1] or [line.strip() for line in lines if line.strip(" -")][-2:]
        reason = f"MPI job exited with code {code}" + (": " + " | ".join(last) if last else "")
    return ended("failed", _stopped_message("failed", ingest) + "; " + reason)


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
