"""The native binary: built by the MPI's own wrapper, cached per MPI, rebuilt on change."""

import shutil
import sys
from pathlib import Path

import pytest

from commscope.system import build
from commscope.system.mpi import find_mpi

pytestmark = pytest.mark.mpi  # builds with a real MPI's mpicc


@pytest.fixture
def private_build(tmp_path, monkeypatch):
    """A throwaway cache and a copy of the native sources that the test may edit."""
    monkeypatch.setenv("COMMSCOPE_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "native"
    shutil.copytree(build.native_sources_dir(), src)
    monkeypatch.setattr(build, "native_sources_dir", lambda: src)
    return src


def test_cached_until_sources_change(private_build):
    mpi = find_mpi(sys.prefix)
    first = build.native_binary(mpi)
    stamp = first.stat().st_mtime_ns
    assert build.native_binary(mpi) == first
    assert first.stat().st_mtime_ns == stamp  # no rebuild
    main_c = private_build / "main.c"
    main_c.write_text(main_c.read_text() + "\n/* changed */\n")
    assert build.native_binary(mpi) == first
    assert first.stat().st_mtime_ns != stamp  # rebuilt


def test_each_mpi_gets_its_own_binary(mpi_prefix):
    """Keyed by the MPI (the sources unchanged: the cache every other test builds into)."""
    ours = build.native_binary(find_mpi(sys.prefix))
    theirs = build.native_binary(find_mpi(str(mpi_prefix)))
    assert (ours == theirs) == (Path(mpi_prefix) == Path(sys.prefix))


def test_compile_errors_are_reported(private_build):
    (private_build / "broken.c").write_text("int f(void) { return undeclared; }\n")
    with pytest.raises(build.BuildError, match="undeclared"):
        build.native_binary(find_mpi(sys.prefix))
