"""What the profiling library (native/profile/) left in its directory: one
rank-R.json per rank, rewritten whole every second and at MPI_Finalize, read into a
Profile. A rank whose file is missing made no MPI_Init under the library (or died
before its first write); one whose file says not finished ended without MPI_Finalize."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from . import Profile, Row


@dataclass(frozen=True)
class Recorded:
    profile: Profile
    hosts: tuple[str, ...]  # each rank's host, "" where its file is missing
    missing: tuple[int, ...]  # ranks that wrote nothing
    unfinished: tuple[int, ...]  # ranks that did not reach MPI_Finalize
    mpi: str | None = None  # the first line of MPI_Get_library_version


def read(directory: Path, program: list[str], ranks: int) -> Recorded:
    rows, wall, hosts, missing, unfinished, mpi = [], [], [], [], [], None
    for rank in range(ranks):
        path = directory / f"rank-{rank}.json"
        try:
            table = json.loads(path.read_text())
        except (OSError, ValueError):  # none written: no MPI_Init, or killed before
            missing.append(rank)
            wall.append(0.0)
            hosts.append("")
            continue
        wall.append(float(table["wall_s"]))
        mpi = mpi or table.get("mpi")
        hosts.append(table["host"])
        if not table["finished"]:
            unfinished.append(rank)
        rows += [Row(call, size, nbytes, peer, count, time_s, rank, total, overlap)
                 for call, size, nbytes, peer, count, time_s, total, overlap in table["rows"]]
    profile = Profile(tuple(program), ranks, tuple(wall), tuple(rows), {"tool": "commscope"})
    return Recorded(profile, tuple(hosts), tuple(missing), tuple(unfinished), mpi)
