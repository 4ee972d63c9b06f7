"""The multi-host flags (--hosts, --hostfile, --ppn, --launcher), shared by the verbs that launch."""

from __future__ import annotations

import argparse

from .. import launcher
from ..launcher import LAUNCHERS


def add_host_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hosts", metavar="LIST",
                   help="hosts and their slots, a:2,b:2 (ranks fill them in order; "
                        "default: this host, or srun's allocation)")
    p.add_argument("--hostfile", metavar="FILE",
                   help="hosts one per line: `name slots=N` or `name:N`")
    p.add_argument("--ppn", type=int, metavar="N",
                   help="ranks per host: the slots of hosts given without a count")
    p.add_argument("--launcher", choices=LAUNCHERS, default="auto",
                   help="mpi: the MPI's own mpirun/mpiexec; srun: Slurm's; auto: srun inside "
                        "an allocation (SLURM_JOB_ID set), else mpi (default auto)")


def host_fields(args: argparse.Namespace, mpi) -> dict:
    """Placement's hosts, ppn and launcher from the flags, checked."""
    return launcher.host_fields(args.hosts, args.hostfile, args.ppn, args.launcher, mpi)
