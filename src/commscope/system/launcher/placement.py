"""What a launch asks for (mapping, binding, transport, hosts, launcher); refusals up front."""

from __future__ import annotations

import contextvars
import os
from contextlib import contextmanager
from dataclasses import dataclass, replace

from ..errors import UserError, to_run
from ..mpi import Mpi
from . import slurm
from .hosts import Hosts, parse_hosts

MAP_BY = ("core", "socket", "node")
BIND_TO = ("core", "socket", "none")
TRANSPORTS = ("auto", "shm", "tcp")
LAUNCHERS = ("auto", "mpi", "srun")  # mpi: the MPI's own mpirun (Open MPI) or mpiexec (hydra)
_LEVEL = {"core": 0, "socket": 1, "node": 2}


@dataclass(frozen=True)
class Placement:
    map_by: str | None = None  # None: the launcher's default
    bind_to: str | None = None
    transport: str = "auto"
    hosts: Hosts | None = None  # None: the launcher's own choice (this host, or the allocation)
    ppn: int | None = None  # ranks per host; with hosts, already their slots
    launcher: str = "auto"  # one of LAUNCHERS, or the name it was resolved to
    # The MPI library's own settings for the launch, (name, value): Open MPI's MCA
    # parameters, MPICH's MPIR_CVAR_* (a rules file that `commscope tune` wrote).
    library: tuple[tuple[str, str], ...] = ()
    # Extra environment for the ranks, (name, value): one side of `compare --live` (a PMPI
    # wrapper preloaded, a library variable); recorded, but no part of a case's identity.
    environment: tuple[tuple[str, str], ...] = ()

    def as_dict(self) -> dict:
        """What is recorded; the multi-host fields and library settings only when used, so
        that other runs keep the settings (and sweep case ids) they had before them."""
        out = {"map_by": self.map_by, "bind_to": self.bind_to, "transport": self.transport}
        if self.hosts or self.ppn or self.launcher == "srun":
            out.update(hosts=self.hosts.spec() if self.hosts else None, ppn=self.ppn,
                       launcher=self.launcher)
        if self.library:
            out["library"] = dict(self.library)
        if self.environment:
            out["environment"] = dict(self.environment)
        return out


def cores() -> int:
    return len(os.sched_getaffinity(0))


def one_rank_each(placement: Placement, hosts) -> Placement:
    """`placement` on these hosts, one rank each: a start, or a look, of every host."""
    return replace(placement, hosts=parse_hosts(",".join(f"{h}:1" for h in hosts)), ppn=None)


def ranks_per_host(placement: Placement, ranks: int) -> dict[str, int] | None:
    """Ranks on each host, by name; {"": ranks} for this host alone; None when Slurm decides."""
    if placement.hosts:
        return placement.hosts.ranks_per_host(ranks, round_robin=placement.map_by == "node")
    if placement.launcher == "srun":
        return None
    return {"": ranks}


def most_per_host(placement: Placement, ranks: int) -> int | None:
    """The most ranks any one host runs (hosts are taken to have this host's cores)."""
    spread = ranks_per_host(placement, ranks)
    if spread is None:
        return placement.ppn
    return max(spread.values())


# Ranks one core may take on this host. Beyond it a launch either does not start (each
# rank holds tens of MB and several processes' worth of file descriptors) or measures
# little but waiting: 100000 ranks on 2 cores ran into the watchdog.
MAX_PER_CORE = 64


# The command's --oversubscribe and its words (main sets them for the command): whether
# more ranks than this host's cores may run, and the line that would run them.
# COMMSCOPE_OVERSUBSCRIBE=1 allows it for every command (a small CI runner's setting).
_OVERSUBSCRIBE: contextvars.ContextVar[tuple[bool, list[str]]] = contextvars.ContextVar(
    "oversubscribe", default=(False, []))


def _allowed() -> bool:
    return _OVERSUBSCRIBE.get()[0] or \
        os.environ.get("COMMSCOPE_OVERSUBSCRIBE", "") not in ("", "0")


@contextmanager
def oversubscribing(allowed: bool, argv: list[str]):
    token = _OVERSUBSCRIBE.set((allowed, argv))
    try:
        yield
    finally:
        _OVERSUBSCRIBE.reset(token)


def room(placement: Placement) -> int | None:
    """The most ranks this placement holds: the hosts' slots, this host's cores (or as
    many as commscope starts, oversubscribing); None where Slurm decides."""
    if placement.hosts is not None:
        return placement.hosts.total
    if placement.launcher == "srun":
        return None
    return MAX_PER_CORE * cores() if _allowed() else cores()


def _check_oversubscription(ranks: int, placement: Placement) -> None:
    """Refuse more ranks than this host's cores unless asked for, as Open MPI's mpirun
    does: they time-slice, and each latency with them. Other hosts' cores are not known
    here, so ranks placed on named hosts or by Slurm are theirs to judge."""
    argv = _OVERSUBSCRIBE.get()[1]
    if _allowed() or placement.hosts is not None or placement.launcher == "srun" \
            or ranks <= cores():
        return
    # the flag before a program's own arguments (profile's `-- PROGRAM ARGS`), which it
    # would otherwise reach instead of commscope
    at = argv.index("--") if "--" in argv else len(argv)
    again = to_run(*argv[:at], "--oversubscribe", *argv[at:]) if argv else "--oversubscribe"
    raise UserError(f"--np {ranks}: more ranks than this host's {cores()} cores would "
                    f"time-slice, and every latency with them; run at most {cores()} here, "
                    f"spread them with --hosts, or measure it anyway: {again}")


def check_placement(mpi: Mpi, ranks: int, placement: Placement) -> None:
    """Refuse, before launching, what this MPI and launcher cannot do."""
    _check_hosts(ranks, placement)
    _check_oversubscription(ranks, placement)
    if placement.hosts is None:  # inside an allocation, its tasks bound the ranks
        slurm.check_ranks(ranks)
    if placement.launcher == "srun":
        slurm.pmi(mpi.family, mpi.version_text)
    if placement.hosts is None and placement.launcher != "srun" \
            and ranks > MAX_PER_CORE * cores():
        raise UserError(f"--np {ranks}: this host offers {cores()} core"
                        f"{'s' * (cores() != 1)}, and commscope starts at most "
                        f"{MAX_PER_CORE} ranks per core ({MAX_PER_CORE * cores()}); run "
                        "fewer ranks, or spread them over hosts with --hosts or --hostfile")
    where = f"{placement.map_by or 'default'} mapping"
    per_host = most_per_host(placement, ranks)
    if placement.bind_to == "core" and per_host is not None and per_host > cores():
        raise UserError(f"--bind-to core: {per_host} ranks cannot each have one of this host's "
                        f"{cores()} cores; run fewer ranks per host or use --bind-to none")
    if mpi.family == "openmpi" and placement.map_by and placement.bind_to not in (None, "none") \
            and _LEVEL[placement.bind_to] > _LEVEL[placement.map_by]:
        raise UserError(f"--bind-to {placement.bind_to}: Open MPI binds within the mapped "
                        f"object, so not with {where}; use --map-by {placement.bind_to} "
                        f"or --bind-to {placement.map_by}")
    if mpi.family == "mpich" and placement.map_by == "node" and placement.launcher != "srun":
        raise UserError("--map-by node: MPICH's hydra maps by hardware objects only; use "
                        "--map-by core or socket on one host")


def _check_hosts(ranks: int, placement: Placement) -> None:
    hosts = placement.hosts
    if placement.ppn and not hosts and placement.launcher != "srun":
        raise UserError(f"--ppn {placement.ppn}: name the hosts too, with --hosts or "
                        "--hostfile (only srun takes the hosts from its allocation)")
    if hosts is None:
        return
    if ranks > hosts.total:
        raise UserError(f"--np {ranks}: the hosts {hosts.spec()} have {hosts.total} "
                        f"slot{'s' * (hosts.total != 1)}; "
                        "run fewer ranks, or give more hosts or slots (a:4 or --ppn)")
    spread = ranks_per_host(placement, ranks)
    if placement.transport == "shm" and len(spread) > 1:
        raise UserError(f"--transport shm: ranks on {len(spread)} hosts cannot share memory; "
                        "use --transport tcp or auto, or put every rank on one host")
    if placement.launcher == "srun" and len(set(hosts.slots)) > 1:
        raise UserError(f"--hosts {hosts.spec()}: srun takes one count of ranks per node "
                        "for all nodes; give every host the same slots, e.g. with --ppn")
