"""A run whose command died: what a launch leaves for a later command, and how that
command ends the run with every case its ranks finished.

A launch writes down where its ranks' records go and how its cases are named in a
sweep (`launch_settings`); a command that dies (SIGKILL, a power cut, an OOM kill)
leaves its run `running` and its ranks may finish a case or two before they end with
their launcher. `recover` finds such runs (their owner process is gone, owner.py),
stores the cases in their records files past those already stored, and marks them
interrupted. Writing verbs call it when they open the results file, and so does
`commscope results recover`; reading verbs never write (they show such a run as
`interrupted (process gone)`: names.status).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from ..store import names
from ..system import owner
from .ingest import Ingest
from ..store.rows import RunRow
from ..store.store import Store


def _case_key_name(send_mode: str | None, nbytes: int) -> str:
    return f"{send_mode}|{nbytes}"


def launch_settings(records: Path, modes, sizes,
                    case_key: Callable[[dict], str] | None) -> dict:
    """What a later command needs to adopt this launch's orphans: its records file, and
    each case's sweep key."""
    keys = {_case_key_name(m, b): case_key({"send_mode": m, "bytes": b})
            for m in modes for b in sizes} if case_key else None
    return {"records": str(records), "case_keys": keys}


def recover(store: Store) -> list[int]:
    """End every run of this host whose command is gone, with the cases its ranks
    finished after; the runs so ended."""
    ended = []
    for row in store.running_runs():
        if owner.gone(row.owner):
            _adopt_orphans(store, row.id)
            _end_gone(store, row)
            ended.append(row.id)
    return ended


def recover_file(path: str | Path) -> None:
    """`recover` on the results file at `path` (a dead command's, found by its temporary
    folder before the folder is removed)."""
    store = Store(path)
    try:
        recover(store)
    finally:
        store.close()


def _adopt_orphans(store: Store, run_id: int) -> None:
    """Store the cases the ranks of the run's unfinished launches wrote after its command
    died: those past the ones stored, in the records file the launch names, while it is
    there."""
    for launch in store.running_launches(run_id):
        settings = launch.settings
        try:
            lines = Path(settings.get("records", "")).read_text().splitlines(keepends=True)
        except (OSError, UnicodeDecodeError):
            continue
        keys = settings.get("case_keys")
        ingest = Ingest(store, run_id, launch.id, case_key=keys and (
            lambda rec: keys.get(_case_key_name(rec.get("send_mode"), rec["bytes"]))))
        done = store.count_cases(launch_id=launch.id)
        for line in lines:
            try:
                case = json.loads(line).get("type") == "case" and line.endswith("\n")
            except ValueError:
                continue  # a line cut by the ranks' end, or the library's chatter
            if case:
                if done:
                    done -= 1  # stored while its command lived
                else:
                    ingest.feed(line)


def _end_gone(store: Store, row: RunRow) -> None:
    who, flight = row.owner, row.in_flight
    kept = store.count_cases(run_id=row.id)
    message = (f"{names.GONE}: its command (pid {who['pid']} on {who['host']}) ended without "
               f"finishing it; {kept} finished case{'s' * (kept != 1)} kept"
               + (f"; {names.case(flight['kernel'], flight.get('send_mode'), flight['bytes'])}"
                  " was in flight" if flight else ""))
    store.end_running(row.id, "interrupted", message)
