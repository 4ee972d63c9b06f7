"""Launch commands for the native binary: argv lists, never shell strings.

Placement (--map-by, --bind-to) and transport (--transport) requests are
translated per MPI family here, and refused before launching where the
family cannot honour them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError
from .mpi import Mpi

MAP_BY = ("core", "socket", "node")
BIND_TO = ("core", "socket", "none")
TRANSPORTS = ("auto", "shm", "tcp")
_LEVEL = {"core": 0, "socket": 1, "node": 2}


@dataclass(frozen=True)
class Placement:
    map_by: str | None = None  # None: the launcher's default
    bind_to: str | None = None
    transport: str = "auto"

    def as_dict(self) -> dict:
        return {"map_by": self.map_by, "bind_to": self.bind_to, "transport": self.transport}


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]
    oversubscribed: bool


def cores() -> int:
    return len(os.sched_getaffinity(0))


def check_placement(mpi: Mpi, ranks: int, placement: Placement) -> None:
    """Refuse, before launching, what this MPI cannot do."""
    where = f"{placement.map_by or 'default'} mapping"
    if placement.bind_to == "core" and ranks > cores():
        raise UserError(f"--bind-to core: {ranks} ranks cannot each have one of this host's "
                        f"{cores()} cores; run fewer ranks or use --bind-to none")
    if mpi.family == "openmpi" and placement.map_by and placement.bind_to not in (None, "none") \
            and _LEVEL[placement.bind_to] > _LEVEL[placement.map_by]:
        raise UserError(f"--bind-to {placement.bind_to}: Open MPI binds within the mapped "
                        f"object, so not with {where}; use --map-by {placement.bind_to} "
                        f"or --bind-to {placement.map_by}")
    if mpi.family == "mpich" and placement.map_by == "node":
        raise UserError("--map-by node: MPICH's hydra maps by hardware objects only; use "
                        "--map-by core or socket on one host")


def _openmpi(placement: Placement, ranks: int) -> tuple[list[str], dict[str, str]]:
    args, env = [], {}
    socket = {"socket": "package"}  # PRRTE's name for a socket
    if placement.map_by:
        args += ["--map-by", socket.get(placement.map_by, placement.map_by)]
    if placement.bind_to:
        args += ["--bind-to", socket.get(placement.bind_to, placement.bind_to)]
    if placement.transport == "shm":
        args += ["--mca", "pml", "ob1", "--mca", "btl", "self,sm"]
    elif placement.transport == "tcp":
        # One host: TCP over loopback, which Open MPI skips unless told to use it.
        args += ["--mca", "pml", "ob1", "--mca", "btl", "self,tcp",
                 "--mca", "btl_tcp_if_include", "lo"]
    else:
        # btl/ofi costs about 1 s in MPI_Init on hosts without a fabric; sm and tcp remain.
        args += ["--mca", "btl", "^ofi"]
    if ranks > cores():
        args.append("--oversubscribe")
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return args, env


def _mpich(placement: Placement, ranks: int) -> tuple[list[str], dict[str, str]]:
    args, env = [], {}
    if placement.map_by:
        args += ["-map-by", placement.map_by]
    if placement.bind_to:
        args += ["-bind-to", placement.bind_to]
    if placement.transport == "shm":
        env["MPIR_CVAR_NOLOCAL"] = "0"
    elif placement.transport == "tcp":
        # Treat every rank as remote, over libfabric's TCP provider (MPICH's documented CVARs).
        env.update(MPIR_CVAR_NOLOCAL="1", MPIR_CVAR_CH4_NETMOD="ofi", FI_PROVIDER="tcp")
    # Hydra runs any number of ranks on a host, but CH4 then spins in its progress
    # loop while the rank it waits for has no core: 4 ranks on 2 cores took ~2.9 ms
    # per 8 B allgather here, ~15 us with progress throttled (usleep(1) after each
    # poll that found nothing; MPICH's documented CVARs). A user's own setting wins.
    if ranks > cores():
        for name, value in (("MPIR_CVAR_CH4_PROGRESS_THROTTLE", "1"),
                            ("MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT", "1")):
            if name not in os.environ:
                env[name] = value
    return args, env


def launch(mpi: Mpi, ranks: int, binary: Path, args: list[str],
           placement: Placement = Placement()) -> Launch:
    """The argv and environment that run `binary args` on `ranks` ranks of this host."""
    check_placement(mpi, ranks, placement)
    if mpi.family == "openmpi":
        extra, env = _openmpi(placement, ranks)
        argv = [str(mpi.launcher), "-np", str(ranks), *extra]
    else:
        extra, env = _mpich(placement, ranks)
        argv = [str(mpi.launcher), "-n", str(ranks), *extra]
    return Launch(argv + [str(binary), *args], {**os.environ, **env}, ranks > cores())
