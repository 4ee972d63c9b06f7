"""Launch commands for the native binary: argv lists, never shell strings.

Placement (--map-by, --bind-to, --hosts, --hostfile, --ppn) and transport
(--transport) requests are translated per launcher (Open MPI's mpirun,
MPICH's hydra mpiexec, Slurm's srun) in `commands`, and refused before
launching where the launcher cannot honour them (`placement`).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import UserError
from ..mpi import Mpi
from . import commands
from .hosts import Hosts, hosts_from, parse_hosts, read_hostfile
from .placement import (BIND_TO, LAUNCHERS, MAP_BY, TRANSPORTS, Placement, check_placement, cores,
                        most_per_host)

__all__ = ["BIND_TO", "LAUNCHERS", "MAP_BY", "TRANSPORTS", "Hosts", "Launch", "Placement",
           "check_placement", "cores", "host_fields", "hosts_from", "launch", "parse_hosts",
           "read_hostfile", "resolve_launcher"]


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    oversubscribed: bool


def own_launcher(mpi: Mpi) -> str:
    return "mpirun" if mpi.family == "openmpi" else "mpiexec"


def resolve_launcher(requested: str, mpi: Mpi, environ=os.environ, which=shutil.which) -> str:
    """mpirun, mpiexec or srun. `auto` is srun inside a Slurm allocation (SLURM_JOB_ID
    set) when srun is on PATH, else the MPI's own launcher."""
    if requested == "srun":
        if not which("srun"):
            raise UserError("--launcher srun: no srun on PATH; run inside a Slurm allocation "
                            "or use --launcher mpi")
        return "srun"
    if requested == "auto" and environ.get("SLURM_JOB_ID") and which("srun"):
        return "srun"
    if requested in ("auto", "mpi"):
        return own_launcher(mpi)
    return requested  # already resolved


def host_fields(hosts: str | None, hostfile: str | None, ppn: int | None, launcher: str,
                mpi: Mpi, flags: tuple[str, str, str, str] = ("--hosts", "--hostfile", "--ppn",
                                                              "--launcher")) -> dict:
    """Placement's hosts, ppn and launcher, checked; `flags` name them in messages."""
    if launcher not in LAUNCHERS:
        raise UserError(f"{flags[3]} {launcher}: choose from {', '.join(LAUNCHERS)}")
    return {"hosts": hosts_from(hosts, hostfile, ppn, flags[:3]), "ppn": ppn,
            "launcher": resolve_launcher(launcher, mpi)}


def launch(mpi: Mpi, ranks: int, binary: Path, args: list[str],
           placement: Placement = Placement()) -> Launch:
    """The argv and environment that run `binary args` on `ranks` ranks, as placed."""
    name = resolve_launcher(placement.launcher, mpi)
    placement = replace(placement, launcher=name)
    check_placement(mpi, ranks, placement)
    per_host = most_per_host(placement, ranks)
    oversubscribed = per_host is not None and per_host > cores()
    if name == "srun":
        extra, env = commands.srun(mpi.family, placement, ranks, oversubscribed,
                                   version_text=mpi.version_text)
        argv = [shutil.which("srun") or "srun", *extra]
    elif mpi.family == "openmpi":
        extra, env = commands.mpirun(placement, ranks, oversubscribed)
        argv = [str(mpi.launcher), *extra]
    else:
        extra, env = commands.mpiexec(placement, ranks, oversubscribed)
        argv = [str(mpi.launcher), *extra]
    return Launch(argv + [str(binary), *args],
                  {**os.environ, **env, **dict(placement.environment)}, oversubscribed)
