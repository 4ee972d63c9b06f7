"""The multi-host flags (--hosts, --hostfile, --ppn, --launcher), shared by launching verbs."""

from __future__ import annotations

import argparse

from ..system.launcher import LAUNCHERS


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


def host_args(args: argparse.Namespace) -> dict:
    """The host flags as the plan builder's keywords."""
    return {"hosts": args.hosts, "hostfile": args.hostfile, "ppn": args.ppn,
            "launcher": args.launcher}
