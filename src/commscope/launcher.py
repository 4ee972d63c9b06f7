"""Launch commands for the native binary: argv lists, never shell strings."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .mpi import Mpi


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    oversubscribed: bool


def cores() -> int:
    return len(os.sched_getaffinity(0))


def launch(mpi: Mpi, ranks: int, binary: Path, args: list[str]) -> Launch:
    """The argv and environment that run `binary args` on `ranks` ranks of this host."""
    env = dict(os.environ)
    oversubscribed = ranks > cores()
    if mpi.family == "openmpi":
        # btl/ofi costs about 1 s in MPI_Init on hosts without a fabric; sm and tcp remain.
        argv = [str(mpi.launcher), "-np", str(ranks), "--mca", "btl", "^ofi"]
        if oversubscribed:
            argv.append("--oversubscribe")
        if os.geteuid() == 0:
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    else:
        # Hydra runs any number of ranks on a host; nothing to ask for oversubscription.
        argv = [str(mpi.launcher), "-n", str(ranks)]
    return Launch(argv + [str(binary), *args], env, oversubscribed)
