"""Profiles as runs of the results file: the run (kernel 'profile') carries the program,
its ranks and their wall times in its settings; profile_rows its rows per rank."""

from __future__ import annotations

from ..store import names
from ..store.rows import RunRow
from ..system.errors import UserError
from ..store.store import Store, utc_now
from . import Profile, Row

KERNEL = "profile"
FAMILY = "profile"


def settings_of(profile: Profile, hosts=()) -> dict:
    """The run's settings: the program, each rank's wall time and host (where known)."""
    return {"profile": {"program": list(profile.program), "wall_s": list(profile.wall_s),
                        "hosts": list(hosts)}}


def save(store: Store, command: list[str], program: list[str], ranks: int,
         oversubscribed: bool, started_utc: str, recorded, status: str,
         message: str | None = None) -> int:
    """A profiled program's run, stored once it ended: the rows, wall times, hosts and MPI
    its ranks recorded (profiles.recorded.Recorded), whatever the program's end."""
    run_id = store.begin_run(command, KERNEL, ranks, oversubscribed,
                             settings_of(recorded.profile, recorded.hosts),
                             kernel_facts={"family": FAMILY}, started_utc=started_utc)
    store.add_profile_rows(run_id, recorded.profile.rows)
    if recorded.mpi:
        store.set_mpi_version(run_id, recorded.mpi)
    store.finish_run(run_id, status, message)
    return run_id


def save_imported(store: Store, command: list[str], profile: Profile) -> int:
    """A profile read from another tool's file, stored whole."""
    (run_id,) = store.add_imported([({"started_utc": utc_now(), "command": command,
                                      "kernel": KERNEL, "ranks": profile.ranks,
                                      "settings": settings_of(profile), "family": FAMILY,
                                      "source": profile.source}, [])])
    store.add_profile_rows(run_id, profile.rows)
    return run_id


def hosts_of(store: Store, run_id: int) -> list[str]:
    """Each rank's host, as the profiling library read it ([] for an imported profile)."""
    return store.run(run_id).settings.get("profile", {}).get("hosts", [])


def load(store: Store, run_id: int, flag: str = "--profile") -> Profile:
    """The profile of run `run_id`, for the verbs that price it: a run that is not a
    profile, or one without rows, is the user's to fix."""
    run = store.run(run_id)
    if run.kernel != KERNEL:
        raise UserError(f"{flag} {run_id}: run {run_id} is a {run.kernel} run, not a "
                        "profile; give a run that commscope profile or commscope import "
                        "of an mpisee or mpiP file stored")
    found = recorded(store, run_id)
    if not found.rows:
        raise UserError(f"{flag} {run_id}: the profile has no MPI calls (the program made "
                        "none, or ended before its ranks wrote any); profile a run of the "
                        "program that communicates")
    return found


def recorded(store: Store, run_id: int) -> Profile:
    """What profile run `run_id` holds, rows or none: the read verbs show a failed one."""
    run = store.run(run_id)
    settings = run.settings.get("profile", {})
    rows = tuple(Row(r["call"], r["comm_size"], r["bytes"], r["peer"], r["count"],
                     r["time_s"], r["rank"], r["bytes_sum"], r["overlap_s"])
                 for r in store.profile_rows(run_id))
    return Profile(tuple(settings.get("program", ())), run.ranks,
                   tuple(settings.get("wall_s", ())), rows, run.source or {"tool": "commscope"})


def no_calls(run_id: int, row: RunRow, p: Profile) -> str:
    """The line a read verb shows for a profile run that recorded no MPI call."""
    what = " ".join(p.program) or p.source.get("file", "")
    return (f"run {run_id}: profile of {what} on {names.ranks(p.ranks)}, {names.status(row)}: "
            f"{row.message or 'no message'}; no MPI call recorded")
