"""Placement and transport in each launcher's own words: Open MPI's mpirun, MPICH's hydra, srun.

Each function returns the launcher's options (before the binary) and the
environment it needs; none of them runs anything, so every translation can
be checked without the launcher installed.
"""

from __future__ import annotations

import os

from . import slurm
from .placement import Placement, ranks_per_host

_PRRTE = {"socket": "package"}  # PRRTE's name for a socket
_SRUN_DISTRIBUTION = {"core": "block:block", "socket": "block:cyclic", "node": "cyclic"}
_SRUN_BIND = {"core": "cores", "socket": "sockets", "none": "none"}


def one_host(placement: Placement, ranks: int) -> bool:
    spread = ranks_per_host(placement, ranks)
    return spread is not None and len(spread) == 1


def openmpi_mca(placement: Placement, ranks: int) -> list[tuple[str, str]]:
    """Open MPI's MCA settings for the transport, then the library settings asked for: for
    mpirun's --mca or srun's OMPI_MCA_*."""
    return _transport_mca(placement, ranks) + list(placement.library)


def _transport_mca(placement: Placement, ranks: int) -> list[tuple[str, str]]:
    if placement.transport == "shm":
        return [("pml", "ob1"), ("btl", "self,sm")]
    if placement.transport == "tcp":
        tcp = [("pml", "ob1"), ("btl", "self,tcp")]
        # On one host TCP goes over loopback, which Open MPI skips unless told to use it;
        # across hosts loopback must stay excluded, or peers would be sought on it.
        return tcp + [("btl_tcp_if_include", "lo")] if one_host(placement, ranks) else tcp
    # btl/ofi costs about 1 s in MPI_Init on hosts without a fabric; sm and tcp remain.
    return [("btl", "^ofi")]


def mpirun(placement: Placement, ranks: int, oversubscribed: bool) -> tuple[list[str], dict]:
    args, env = ["-np", str(ranks)], {}
    if placement.hosts:
        args += ["--host", placement.hosts.spec()]
        for name, _ in placement.environment:  # local ranks inherit it; remote ones need -x
            args += ["-x", name]
    if placement.map_by:
        args += ["--map-by", _PRRTE.get(placement.map_by, placement.map_by)]
    if placement.bind_to:
        args += ["--bind-to", _PRRTE.get(placement.bind_to, placement.bind_to)]
    for name, value in openmpi_mca(placement, ranks):
        args += ["--mca", name, value]
    if oversubscribed:
        args.append("--oversubscribe")
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return args, env


def mpich_env(placement: Placement, oversubscribed: bool) -> dict[str, str]:
    env = dict(placement.library)
    if placement.transport == "shm":
        env["MPIR_CVAR_NOLOCAL"] = "0"
    elif placement.transport == "tcp":
        # Treat every rank as remote, over libfabric's TCP provider (MPICH's documented CVARs).
        env.update(MPIR_CVAR_NOLOCAL="1", MPIR_CVAR_CH4_NETMOD="ofi", FI_PROVIDER="tcp")
    # Hydra runs any number of ranks on a host, but CH4 then spins in its progress
    # loop while the rank it waits for has no core: 4 ranks on 2 cores took ~2.9 ms
    # per 8 B allgather here, ~15 us with progress throttled (usleep(1) after each
    # poll that found nothing; MPICH's documented CVARs). A user's own setting wins.
    if oversubscribed:
        for name, value in (("MPIR_CVAR_CH4_PROGRESS_THROTTLE", "1"),
                            ("MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT", "1")):
            if name not in os.environ:
                env[name] = value
    return env


def mpiexec(placement: Placement, ranks: int, oversubscribed: bool) -> tuple[list[str], dict]:
    args = ["-n", str(ranks)]
    if placement.hosts:
        # Slots are counts after the colon; hydra fills the hosts in this order.
        args += ["-hosts", placement.hosts.spec()]
    if placement.map_by:
        args += ["-map-by", placement.map_by]
    if placement.bind_to:
        args += ["-bind-to", placement.bind_to]
    return args, mpich_env(placement, oversubscribed)


def srun(family: str, placement: Placement, ranks: int, oversubscribed: bool,
         environ=os.environ, version_text: str = "") -> tuple[list[str], dict]:
    """srun inside an allocation: nodes from --hosts (else Slurm's), ranks per node from the
    slots, in --hosts' order."""
    args = ["--ntasks", str(ranks)]
    used = ranks_per_host(placement, ranks)  # only these: srun gives every listed node a rank
    if placement.hosts and not placement.map_by:
        # the ranks in the order --hosts gives, as mpirun and hydra place them (a screen's
        # pairs are its host order): a node a rank, in order (srun's distribution
        # "arbitrary"); a plain node list is taken in Slurm's own order
        args += ["--nodes", str(len(used)), "--distribution", "arbitrary", "--nodelist",
                 ",".join(name for name, n in used.items() for _ in range(n))]
    elif placement.hosts:
        args += ["--nodes", str(len(used)), "--nodelist", ",".join(used),
                 "--ntasks-per-node", str(placement.hosts.slots[0])]
    elif placement.ppn:
        args += ["--ntasks-per-node", str(placement.ppn)]
    if placement.map_by:
        args += ["--distribution", _SRUN_DISTRIBUTION[placement.map_by]]
    if placement.bind_to:
        args += ["--cpu-bind", _SRUN_BIND[placement.bind_to]]
    chosen = slurm.pmi(family, version_text, environ)  # refuses a PMI this MPI cannot speak
    if "SLURM_MPI_TYPE" not in environ:
        args += ["--mpi", chosen]
    if family == "openmpi":
        # srun passes its environment on: Open MPI reads MCA settings from OMPI_MCA_*.
        env = {f"OMPI_MCA_{name}": value for name, value in openmpi_mca(placement, ranks)}
    else:
        env = mpich_env(placement, oversubscribed)
    return args, env
