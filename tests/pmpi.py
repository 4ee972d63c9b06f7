"""PMPI wrappers that slow a call by a known time, for the sensitivity tests
(test_sensitivity.py, test_check.py): C source with `delay(us)`, a busy wait on the
clock, built without libmpi, so that preloading it into python and the launcher, which
make no MPI calls, costs nothing; the ranks resolve PMPI_* in their libmpi on first use."""

from __future__ import annotations

import subprocess
from pathlib import Path

HEADER = r"""
#include <mpi.h>
#include <time.h>

static void delay(double us)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do
        clock_gettime(CLOCK_MONOTONIC, &now);
    while ((now.tv_sec - start.tv_sec) * 1e6 + (now.tv_nsec - start.tv_nsec) / 1e3 < us);
}
"""


def preloadable(mpi_prefix: Path, where: Path, name: str, wrappers: str) -> str:
    """lib<name>.so of HEADER and `wrappers` (MPI_* functions calling delay and PMPI_*),
    for LD_PRELOAD."""
    source, obj, lib = where / f"{name}.c", where / f"{name}.o", where / f"lib{name}.so"
    source.write_text(HEADER + wrappers)
    subprocess.run([str(mpi_prefix / "bin" / "mpicc"), "-O2", "-fPIC", "-D_GNU_SOURCE", "-c",
                    str(source), "-o", str(obj)], check=True)
    subprocess.run(["gcc", "-shared", "-Wl,-z,lazy", "-o", str(lib), str(obj)], check=True)
    return str(lib)


# Every MPI_Allreduce of launch LAUNCH alone (the launch whose ranks were given
# `--shuffle LAUNCH`: plan.Step) takes FACTOR times its own time: a launch in another state,
# its neighbours untouched.
ONE_LAUNCH = r"""
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

static int slow = -1;

static int in_the_launch(void)
{
    if (slow >= 0)
        return slow;
    char argv[8192];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f ? fread(argv, 1, sizeof argv - 1, f) : 0;
    if (f)
        fclose(f);
    argv[n] = 0;
    slow = 0;
    for (size_t i = 0; i + 1 < n; i += strlen(argv + i) + 1)
        if (!strcmp(argv + i, "--shuffle"))
            slow = atoi(argv + i + strlen(argv + i) + 1) == %(launch)d;
    return slow;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    double start = PMPI_Wtime();
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    if (in_the_launch())
        delay((%(factor)g - 1) * (PMPI_Wtime() - start) * 1e6);
    return rc;
}
"""


def one_launch_slower(mpi_prefix: Path, where: Path, launch: int, factor: float) -> str:
    """A library that makes every MPI_Allreduce of launch `launch` `factor` times slower."""
    return preloadable(mpi_prefix, where, f"launch{launch}x{factor:g}",
                       ONE_LAUNCH % {"launch": launch, "factor": factor})


# Every MPI_Allreduce takes FACTOR times its own time: the call timed, then a wait of
# (FACTOR - 1) times it. A collective's sample is one call from a barrier, the slowest
# rank's (docs/native.md), so its time grows by FACTOR exactly: no rank's wait reaches
# into another's call.
EVERY_CALL = r"""
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    double start = PMPI_Wtime();
    int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    delay((%(factor)g - 1) * (PMPI_Wtime() - start) * 1e6);
    return rc;
}
"""


def every_call_slower(mpi_prefix: Path, where: Path, factor: float) -> str:
    """A library that makes every MPI_Allreduce `factor` times slower."""
    return preloadable(mpi_prefix, where, f"every{factor:g}", EVERY_CALL % {"factor": factor})
