"""Inside a Slurm allocation (salloc, sbatch): what it offers, and which PMI srun speaks.

Slurm tells a job's processes about their allocation in the environment (sbatch(1) and
salloc(1), "OUTPUT ENVIRONMENT VARIABLES"): SLURM_JOB_ID, SLURM_JOB_NODELIST,
SLURM_JOB_NUM_NODES, SLURM_NTASKS when tasks were asked for, and SLURM_JOB_CPUS_PER_NODE
(`2(x3),1`: three nodes of 2 CPUs, then one of 1), which bounds the tasks otherwise.

srun starts ranks through a PMI plugin (`--mpi`, or SLURM_MPI_TYPE). Measured on the
test cluster with Slurm 22.05: the Open MPI 5 wheel needs PMIx (under pmi2 each rank
starts alone, a world of 1: Open MPI 5 speaks PMIx only); the MPICH wheel needs PMI-2
(under PMIx it aborts: "unsupported PMI version PMIx"). An MPICH configured
--with-pmix speaks PMIx instead; hydra's `mpiexec --version` lists the configure
options.
"""

from __future__ import annotations

import os
import re

from ..errors import UserError

PMIX = re.compile(r"pmix(_v\d+)?$")  # Slurm's names of its PMIx plugin


def _speaks(family: str, version_text: str) -> str:
    """The PMI this MPI speaks: pmix or pmi2."""
    return "pmix" if family == "openmpi" or "--with-pmix" in version_text else "pmi2"


def allocation(environ=os.environ) -> dict | None:
    """The allocation this command runs in, as Slurm describes it; None outside one."""
    job = environ.get("SLURM_JOB_ID")
    if not job:
        return None
    tasks = environ.get("SLURM_NTASKS")
    return {"job_id": job, "nodes": environ.get("SLURM_JOB_NODELIST"),
            "num_nodes": _int(environ.get("SLURM_JOB_NUM_NODES")),
            "ntasks": _int(tasks), "cpus": _cpus(environ.get("SLURM_JOB_CPUS_PER_NODE", "")),
            "cluster": environ.get("SLURM_CLUSTER_NAME")}


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


def _cpus(spec: str) -> int | None:
    """The CPUs of SLURM_JOB_CPUS_PER_NODE's `2(x3),1`: 7."""
    total = 0
    for part in filter(None, spec.split(",")):
        m = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", part)
        if not m:
            return None
        total += int(m[1]) * int(m[2] or 1)
    return total or None


def check_ranks(ranks: int, environ=os.environ) -> None:
    """Refuse more ranks than the allocation offers: its tasks, else its CPUs."""
    a = allocation(environ)
    if a is None:
        return
    offered, what = (a["ntasks"], "tasks") if a["ntasks"] else (a["cpus"], "CPUs")
    if offered and ranks > offered:
        raise UserError(f"--np {ranks}: Slurm job {a['job_id']} offers {offered} {what} on "
                        f"{a['num_nodes'] or '?'} node(s) ({a['nodes']}); run fewer ranks, or "
                        f"ask salloc or sbatch for more (-n {ranks})")


def pmi(family: str, version_text: str = "", environ=os.environ) -> str:
    """The PMI plugin srun will use: SLURM_MPI_TYPE where set (refused if this MPI cannot
    speak it), else the one this MPI speaks."""
    own = _speaks(family, version_text)
    chosen = environ.get("SLURM_MPI_TYPE")
    if chosen is None:
        return own
    if not (PMIX.match(chosen) if own == "pmix" else chosen == "pmi2"):
        name = "Open MPI" if family == "openmpi" else "MPICH"
        raise UserError(f"SLURM_MPI_TYPE={chosen}: this {name} starts under srun with "
                        f"--mpi={own} only; unset SLURM_MPI_TYPE (commscope then passes "
                        f"--mpi={own}) or set it to {own}")
    return chosen
