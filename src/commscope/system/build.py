"""Build the native binary with the MPI's own compiler wrapper, cached per MPI.

The cache key is the wrapper's resolved path and the launcher's version text,
so two MPIs never share a binary; inside, a hash of the native sources decides
whether to rebuild. Beside the binary is its own description of its kernels
(`commscope-native --describe`), read once when it is built.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
from pathlib import Path

from .. import __version__
from .errors import BuildError
from .mpi import Mpi

BINARY = "commscope-native"
DESCRIPTION = "describe.json"
CFLAGS = ("-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE")
PROBES = "probes"  # native/probes/FEATURE.c: links if the MPI has FEATURE (native/mpi_features.h)
PROFILE = "profile"  # native/profile/: the profiling library (profiles/library.py), not the binary
# Features to build without although the MPI has them, e.g. "partitioned": to see what a
# user of an MPI without them gets (docs/native.md, "MPI-4 features").
WITHOUT = "COMMSCOPE_NATIVE_WITHOUT"


def left_out() -> list[str]:
    """The features COMMSCOPE_NATIVE_WITHOUT names (a comma or space list)."""
    return os.environ.get(WITHOUT, "").replace(",", " ").split()


def native_sources_dir() -> Path:
    """native/ of a source checkout (editable install), else the copy in the wheel."""
    here = Path(__file__).resolve().parents[1]  # the commscope package
    for candidate in (here.parents[1] / "native", here / "native"):
        if (candidate / "main.c").is_file():
            return candidate
    raise BuildError(f"native sources not found beside {here}")


def _sources(src: Path) -> list[Path]:
    return sorted(p for p in src.rglob("*") if p.suffix in (".c", ".h"))


def _cache_root() -> Path:
    if os.environ.get("COMMSCOPE_CACHE"):
        return Path(os.environ["COMMSCOPE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "commscope"


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=4)
def _source_hash(src: Path, files: tuple[tuple[str, int, int], ...]) -> str:
    """The sources' content hash, worked out once per state of the files (`files`: each
    one's path, size and modification time) however often a process launches."""
    return _digest(__version__.encode(), *(Path(f).read_bytes() for f, _, _ in files),
                   *(str(Path(f).relative_to(src)).encode() for f, _, _ in files))


def native_binary(mpi: Mpi) -> Path:
    """Path of an up-to-date native binary for this MPI, compiling it if needed."""
    src = native_sources_dir()
    files = [f for f in _sources(src) if f.parent.name != PROFILE]
    source_hash = _source_hash(src, tuple((str(f), (st := f.stat()).st_size, st.st_mtime_ns)
                                          for f in files))
    without = left_out()
    mpi_key = _digest(str(mpi.mpicc.resolve()).encode(), mpi.version_text.encode(),
                      *sorted(w.encode() for w in without))
    out_dir = _cache_root() / mpi_key
    binary = out_dir / BINARY
    stamp = out_dir / "build.json"
    if binary.is_file() and stamp.is_file() and (out_dir / DESCRIPTION).is_file():
        if json.loads(stamp.read_text()).get("source_hash") == source_hash:
            return binary
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f"{BINARY}.{os.getpid()}.tmp"
    cmd = [str(mpi.mpicc), *CFLAGS, f'-DCOMMSCOPE_VERSION="{__version__}"', f"-I{src}",
           *_feature_flags(mpi, src / PROBES, out_dir, without),
           *(str(f) for f in files if f.suffix == ".c" and f.parent.name != PROBES),
           "-o", str(tmp), "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BuildError(f"building the native core with {mpi.mpicc} failed:\n{done.stderr}")
    _describe(tmp, out_dir / DESCRIPTION)
    os.replace(tmp, binary)  # atomic: a concurrent run never sees a half-written binary
    stamp.write_text(json.dumps({"source_hash": source_hash, "mpicc": str(mpi.mpicc),
                                 "mpi": mpi.version_text.splitlines()[0], "command": cmd}))
    return binary


def _feature_flags(mpi: Mpi, probes: Path, out_dir: Path, without: list[str]) -> list[str]:
    """-DCOMMSCOPE_HAVE_<FEATURE>=0|1 for each probe: whether it compiles and links against
    this MPI. A library may have a feature its MPI_VERSION predates (Open MPI 5.0: 3.1)."""
    flags = []
    for probe in sorted(probes.glob("*.c")):
        exe = out_dir / f"probe-{probe.stem}.{os.getpid()}"
        # Only a missing declaration or symbol counts; warnings do not.
        done = subprocess.run([str(mpi.mpicc), "-std=c11", "-D_GNU_SOURCE",
                               "-Werror=implicit-function-declaration", str(probe),
                               "-o", str(exe)],
                              capture_output=True, stdin=subprocess.DEVNULL)
        exe.unlink(missing_ok=True)
        have = done.returncode == 0 and probe.stem not in without
        flags.append(f"-DCOMMSCOPE_HAVE_{probe.stem.upper()}={int(have)}")
    return flags


def _describe(binary: Path, out: Path) -> None:
    """The binary's description of its kernels, written atomically beside it."""
    done = subprocess.run([str(binary), "--describe"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    try:
        description = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise BuildError(f"{binary} --describe gave no description (exit {done.returncode}):"
                         f"\n{done.stderr}") from None
    tmp = out.with_name(f"{out.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(description))
    os.replace(tmp, out)


def native_description(mpi: Mpi) -> dict:
    """What the native binary says its kernels are (commscope-native --describe)."""
    return json.loads((native_binary(mpi).parent / DESCRIPTION).read_text())


PROFILE_LIBRARY = "libcommscope-profile.so"


def profile_library(mpi: Mpi) -> Path:
    """The profiling library (native/profile/, `commscope profile`) for this MPI, built
    with its mpicc as a shared object to preload into a program, rebuilt when its
    sources change."""
    src = native_sources_dir() / PROFILE
    files = _sources(src)
    source_hash = _digest(__version__.encode(), *(f.read_bytes() for f in files))
    out_dir = _cache_root() / _digest(str(mpi.mpicc.resolve()).encode(),
                                      mpi.version_text.encode()) / PROFILE
    library, stamp = out_dir / PROFILE_LIBRARY, out_dir / "build.json"
    if library.is_file() and stamp.is_file() and \
            json.loads(stamp.read_text()).get("source_hash") == source_hash:
        return library
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f"{PROFILE_LIBRARY}.{os.getpid()}.tmp"
    cmd = [str(mpi.mpicc), *CFLAGS, "-shared", "-fPIC", f"-I{src}",
           *(str(f) for f in files if f.suffix == ".c"), "-o", str(tmp)]
    done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BuildError(f"building the profiling library with {mpi.mpicc} failed:\n"
                         f"{done.stderr}")
    os.replace(tmp, library)
    stamp.write_text(json.dumps({"source_hash": source_hash, "command": cmd}))
    return library
