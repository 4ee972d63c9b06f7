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
