"""Profiles as runs of the results file: the run (kernel 'profile') carries the program,
its ranks and their wall times in its settings; profile_rows its rows per rank."""

from __future__ import annotations

import json

from ..errors import UserError
from ..store import Store, utc_now
from . import Profile, Row

KERNEL = "profile"
FAMILY = "profile"


def settings_of(profile: Profile, hosts=()) -> dict:
    """The run's settings: the program, each rank's wall time and host (where known)."""
    return {"profile": {"program": list(profile.program), "wall_s": list(profile.wall_s),
                        "hosts": list(hosts)}}


def begin(store: Store, command: list[str], program: list[str], ranks: int,
          oversubscribed: bool) -> int:
    """A profile run started, its rows to come (a program's run: stored as it ends)."""
    return store.begin_run(command, KERNEL, ranks, oversubscribed,
                           settings_of(Profile(tuple(program), ranks, (), ())),
                           kernel_facts={"family": FAMILY})


def finish(store: Store, run_id: int, recorded, status: str,
           message: str | None = None) -> None:
    """The rows, wall times, hosts and MPI the ranks recorded (profiles.recorded.Recorded),
    whatever the program's end."""
    store.add_profile_rows(run_id, recorded.profile.rows)
    store.note_run(run_id, profile=settings_of(recorded.profile, recorded.hosts)["profile"])
    if recorded.mpi:
        store.set_mpi_version(run_id, recorded.mpi)
    store.finish_run(run_id, status, message)


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
    settings = json.loads(store.run(run_id)["settings"] or "{}")
    return settings.get("profile", {}).get("hosts", [])


def load(store: Store, run_id: int, flag: str = "--profile") -> Profile:
    """The profile of run `run_id`; a run that is not a profile, or one without rows, is
    the user's to fix."""
    run = store.run(run_id)
    if run["kernel"] != KERNEL:
        raise UserError(f"{flag} {run_id}: run {run_id} is a {run['kernel']} run, not a "
                        "profile; give a run that `commscope profile` or `commscope import` "
                        "of an mpisee or mpiP file stored")
    settings = json.loads(run["settings"] or "{}").get("profile", {})
    rows = tuple(Row(r["call"], r["comm_size"], r["bytes"], r["peer"], r["count"],
                     r["time_s"], r["rank"], r["bytes_sum"], r["overlap_s"])
                 for r in store.profile_rows(run_id))
    if not rows:
        raise UserError(f"{flag} {run_id}: the profile has no MPI calls (the program made "
                        "none, or ended before its ranks wrote any); profile a run of the "
                        "program that communicates")
    source = json.loads(run["source"]) if run["source"] else {"tool": "commscope"}
    return Profile(tuple(settings.get("program", ())), run["ranks"],
                   tuple(settings.get("wall_s", ())), rows, source)
