"""Which stored runs a verb works on: `3`, `3,4,5`, `3-5`, `sweep:2`, or a comma list of
these; the same syntax for every verb that takes runs (results, fit, predict, compare,
report). Without a selection, a verb takes the latest command's runs."""

from __future__ import annotations

import re

from ..system.errors import UserError
from .store import Store

ITEM = re.compile(r"(\d+)(?:-(\d+))?|sweep:(\d+)")
SYNTAX = "a run (3), runs (3,4,5 or 3-5), or every run of a sweep (sweep:2)"


def parse(spec: str, store: Store, name: str) -> list[int]:
    """Run ids from `spec`, each checked to be stored; `name` is the flag or argument
    to name in a message."""
    runs: list[int] = []
    for item in (i.strip() for i in str(spec).split(",")):
        m = ITEM.fullmatch(item)
        if not m:
            raise UserError(f"{name} {spec}: '{item}' is not a run; give RUN, RUN,RUN, "
                            "FIRST-LAST or sweep:N")
        if m.group(3):
            found = store.sweep_runs(int(m.group(3)))
            if not found:
                raise UserError(f"{name} {spec}: no runs of sweep {m.group(3)} in {store.path}")
        else:
            first, last = int(m.group(1)), int(m.group(2) or m.group(1))
            if last < first:
                raise UserError(f"{name} {spec}: range {item} ends below its start")
            found = list(range(first, last + 1))
        for run_id in found:
            store.run(run_id)  # an unknown run is a UserError naming it
        runs += [r for r in found if r not in runs]
    return runs


def runs(specs: list[str], store: Store, name: str = "RUN", each_kernel: bool = False
         ) -> list[int]:
    """Every run the specs select, in order, each once; the latest command's runs when
    none is given (of each kernel: store.latest_command_runs)."""
    chosen: list[int] = []
    for spec in specs:
        chosen += [r for r in parse(spec, store, name) if r not in chosen]
    return chosen or store.latest_command_runs(each_kernel)
