"""Read the native JSON Lines stream and commit each record as it arrives."""

from __future__ import annotations

import json
import sys
import time
from typing import Callable

from ..store import names
from ..stats import skew
from ..system.provenance import with_pairs
from ..store.store import Store

RECORDS_SCHEMAS = (1,)  # the native record schemas this commscope reads (docs/native.md)


class RecordsError(Exception):
    """The native side writes records this commscope cannot read."""


def case_label(rec: dict) -> str:
    return names.case(rec["kernel"], rec.get("send_mode"), rec["bytes"])


class Ingest:
    """One run's records into the store; remembers what was in flight."""

    def __init__(self, store: Store, run_id: int, launch_id: int,
                 on_case: Callable[[dict], None] | None = None,
                 case_key: Callable[[dict], str] | None = None):
        self.store = store
        self.case_key = case_key
        self.run_id = run_id
        self.launch_id = launch_id
        self.on_case = on_case
        self.context: dict | None = None
        self.in_flight: dict | None = None
        self.case_ids: list[int] = []
        self.skips: list[dict] = []
        self.errors: list[dict] = []
        self.ended = False
        self.sampling_s = 0.0  # what the cases spent sampling; the rest the launch cost
        self.last_record = time.monotonic()  # when the job last showed progress

    def feed(self, line: str) -> None:
        if not line.startswith("{"):
            sys.stderr.write(line)  # the MPI library's own chatter: pass it on untouched
            return
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            sys.stderr.write(line)  # a record cut by a dying rank: nothing to keep
            return
        kind = rec.get("type")
        self.last_record = time.monotonic()
        if kind == "context":
            if rec.get("schema") not in RECORDS_SCHEMAS:
                raise RecordsError(
                    f"the native binary writes records of schema {rec.get('schema')}, this "
                    f"commscope reads schema {', '.join(map(str, RECORDS_SCHEMAS))}; rebuild "
                    "it from these sources (remove the COMMSCOPE_CACHE directory)")
            self.context = with_pairs(rec)
            self.store.set_context(self.launch_id, self.context)
        elif kind == "case_start":
            self.in_flight = rec
            self.store.set_in_flight(self.launch_id, rec)
        elif kind == "case":
            if "late" in rec:  # --late: the punctual samples are the case's (skew.split)
                rec = skew.split(rec)
            key = self.case_key(rec) if self.case_key else None
            self.case_ids.append(self.store.add_case(self.launch_id, rec, key))
            self.sampling_s += rec.get("sampling_s") or 0.0
            self.in_flight = None
            if self.on_case:
                self.on_case(rec)
        elif kind == "skip":
            self.skips.append(rec)
            self.store.add_skip(self.run_id, rec)
            self.in_flight = None
            if self.on_case:
                self.on_case(rec)
        elif kind == "error":
            self.errors.append(rec)
        elif kind == "end":
            self.ended = True
