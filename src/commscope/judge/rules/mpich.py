"""MPICH's collective selection JSON (src/mpi/coll/src/csel.c, MPICH 4.0 and later):
the library's own selection, as compiled into it, with the tuned collectives' choices
put in, for MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE.

The selection is a tree of objects: "collective=NAME", "comm_type=intra", tests such as
"comm_size<N", "comm_size<=N", "avg_msg_size<N" (a rank's buffer in bytes; one block for
alltoall), "total_msg_size<N" (allgather's whole result) and "X=any", down to a leaf
"algorithm=MPIR_Allreduce_intra_ring": {}. Siblings are tried in order, the first that
holds is taken. MPICH needs every collective in the file, so the library's own tree is
the starting point: it is compiled into libmpi as a string, read from there. Among the
ranks of one node the CH4 device runs allreduce, bcast and reduce by its own shared-memory
selection (MPIR_CVAR_CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE), where a branch that
selects nothing hands the call to the tree above: a second file does that where a choice
was made, so that it runs on one node too.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from ...system.errors import UserError
from ..tune import Range
from . import Rules

MPIR = "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"
POSIX = "MPIR_CVAR_CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE"
TOTAL = ("allgather",)  # keyed by total_msg_size (avg_msg_size is not defined for them)


def _nothing(r: Range, own: dict) -> dict:
    """A branch that holds for no program, single- or multi-threaded: the shared-memory
    level then selects nothing and hands the call on. (Its end must be an algorithm, or
    MPICH refuses the file: "unexpected NULL success path".)"""
    return {"is_multi_threaded=yes": {"is_multi_threaded=no": own}}


def _library(binary: Path) -> Path:
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    found = re.search(r"libmpi\.so[.\d]*\s+=>\s+(\S+)", out)
    if not found:
        raise UserError(f"tune: cannot find the MPI library {binary} is linked to (ldd)")
    return Path(found[1])


def selection(binary: Path) -> tuple[dict, dict, bytes]:
    """The library's own selection trees, (MPIR's, the shared-memory level's), from the
    strings compiled into the libmpi `binary` is linked to; and those strings."""
    data = _library(binary).read_bytes()
    trees = []
    for at in {data.rfind(b"\0", 0, m.start()) + 1
               for m in re.finditer(rb'\{\s*"collective=', data)}:
        try:
            trees.append(json.loads(data[at:data.index(b"\0", at)]))
        except ValueError:
            continue
    mpir = [t for t in trees if "algorithm=MPIR_" in json.dumps(t)]
    posix = [t for t in trees if "algorithm=MPIDI_POSIX_" in json.dumps(t)]
    if len(mpir) != 1:
        raise UserError("tune: this MPICH has no collective selection compiled in that "
                        "commscope can find (MPICH 4.0 or later has one)")
    return mpir[0], (posix[0] if posix else {}), data


def _leaves(tree: dict) -> dict[str, dict]:
    """Every algorithm the tree names, with the parameters its leaf gives it."""
    found = {}
    for key, value in tree.items():
        if key.startswith("algorithm="):
            found[key.split("=", 1)[1]] = value
        elif isinstance(value, dict):
            found.update(_leaves(value))
    return found


def _name(kernel: str, algorithm: str) -> tuple[str, ...]:
    """The selection's names of a CVAR choice: MPIR_<Coll>_intra_<choice>, or _allcomm_
    for those that serve any communicator (nb)."""
    coll = kernel[0].upper() + kernel[1:]
    return f"MPIR_{coll}_intra_{algorithm}", f"MPIR_{coll}_allcomm_{algorithm}"


def writable(binary: Path) -> dict[str, set[str]]:
    """Per collective, the algorithms a selection file can name: those the library's own
    tree names. A leaf of an algorithm with parameters (a tree's kind and radix, a
    radix k) must give them, or the algorithm runs with zeros (MPICH 5.0 died of SIGFPE
    with a bare MPIR_Bcast_intra_tree here); the library's own leaves show which
    parameters, and commscope takes them from there, never from a table of its own."""
    mpir, _, _ = selection(binary)
    names = list(_leaves(mpir))
    out: dict[str, set[str]] = {}
    for key in mpir:
        kernel = key.split("=", 1)[1]
        coll = kernel[0].upper() + kernel[1:]
        out[kernel] = {m[1] for m in (re.fullmatch(rf"MPIR_{coll}_(?:intra|allcomm)_(\w+)", n)
                                      for n in names) if m}
    return out


def _leaf(kernel: str, algorithm: str, known: dict) -> dict:
    """The leaf of a CVAR choice, with the parameters the library's own leaf gives it."""
    for name in _name(kernel, algorithm):
        if name in known:
            return {f"algorithm={name}": known[name]}
    raise UserError(f"tune: this MPICH's own selection never names {kernel}'s {algorithm}, "
                    "so commscope cannot write its leaf; tune without it")


def _by_size(kernel: str, np_: int, rules: list[Range], chosen, own) -> dict:
    """Tests on the message size from range to range; `chosen(range, own)` the subtree of
    a range with a choice, `own` that of the library's own choice."""
    key = "total_msg_size" if kernel in TOTAL else "avg_msg_size"
    scale = np_ if kernel in TOTAL else 1
    tree = {}
    for r, following in zip(rules, rules[1:] + [None]):
        test = f"{key}<{following.low * scale}" if following else f"{key}=any"
        tree[test] = chosen(r, own) if r.choice else own
    return tree


def _put(tree: dict, kernel: str, ranges: list[Range], chosen, reduces: bool) -> None:
    """Replaces `kernel`'s intra-communicator branch of `tree` with the ranges' choices at
    their communicator sizes, the library's own branch everywhere else."""
    section = tree.get(f"collective={kernel}")
    if section is None or "comm_type=intra" not in section:
        return
    own = section["comm_type=intra"]
    branch = {}
    for np_ in sorted({r.np for r in ranges}):
        rules = [r for r in ranges if r.np == np_]
        # Nothing chosen: the library's own branch, named for the size it was tuned at.
        sized = own if all(r.choice is None for r in rules) else \
            _by_size(kernel, np_, rules, chosen, own)
        # Measured with a commutative operation: others keep the library's own choice.
        branch[f"comm_size<{np_}"] = own
        branch[f"comm_size<={np_}"] = {"is_commutative=yes": sized, "is_commutative=no": own} \
            if reduces else sized
    if branch:
        section["comm_type=intra"] = {**branch, "comm_size=any": own}


def write(ranges: list[Range], kernels: dict, binary: Path) -> tuple[str, str | None]:
    """The MPIR file, and the shared-memory level's (None where it is not needed)."""
    mpir, posix, _ = selection(binary)
    known = _leaves(mpir)
    for kernel in sorted({r.kernel for r in ranges}):
        mine = [r for r in ranges if r.kernel == kernel]
        reduces = "op" in kernels[kernel].params
        _put(mpir, kernel, mine, lambda r, own: _leaf(r.kernel, r.choice, known), reduces)
        _put(posix, kernel, mine, _nothing, reduces)
    changed = any(r.choice for r in ranges if f"collective={r.kernel}" in posix)
    return json.dumps(mpir, indent=1) + "\n", (json.dumps(posix, indent=1) + "\n"
                                                if changed else None)


SUFFIX = ".json"


def posix_path(path: Path) -> Path:
    """Where the shared-memory level's file goes beside the MPIR file."""
    return path.with_name(path.stem + ".posix" + path.suffix)


def files(path: Path, ranges: list[Range], kernels: dict, binary: Path) -> dict:
    """What to write where, {path: text}; None: a stale file to remove, which the
    library would otherwise still be told to read."""
    text, posix = write(ranges, kernels, binary)
    return {path: text, posix_path(path): posix}


def settings(path: Path) -> list[tuple[str, str]]:
    """The environment that makes a launch use the files."""
    extra = posix_path(path)
    return [(MPIR, str(path))] + ([(POSIX, str(extra))] if extra.is_file() else [])


def use(path: Path) -> str:
    return " ".join(f"{n}={v}" for n, v in settings(path)) + " mpiexec ..."


def read(text: str, name: str) -> Rules:
    """The collectives and communicator sizes a selection file sets: those whose intra
    branch tests comm_size<=N."""
    try:
        tree = json.loads(text)
    except ValueError as e:
        raise UserError(f"--verify {name}: not JSON ({e}); give the MPICH selection file "
                        "commscope tune wrote") from None
    if not isinstance(tree, dict) or not any(k.startswith("collective=") for k in tree):
        raise UserError(f"--verify {name}: no \"collective=NAME\" key; give the MPICH "
                        "selection file commscope tune wrote")
    covered, boundaries = {}, {}
    for key, section in tree.items():
        intra = section.get("comm_type=intra", {}) if isinstance(section, dict) else {}
        kernel = key.split("=", 1)[1]
        sizes = tuple(int(k.split("<=")[1]) for k in intra if re.fullmatch(r"comm_size<=\d+", k))
        if sizes:
            covered[kernel] = sizes
        for np_ in sizes:
            boundaries[kernel, np_] = _boundaries(intra[f"comm_size<={np_}"], kernel, np_)
    return Rules(covered, boundaries)


def _boundaries(branch, kernel: str, np_: int) -> tuple[int, ...]:
    """The message sizes (commscope's) where _by_size's tests move to the next range."""
    if isinstance(branch, dict) and "is_commutative=yes" in branch:
        branch = branch["is_commutative=yes"]
    scale = np_ if kernel in TOTAL else 1
    tests = [re.fullmatch(r"(?:avg|total)_msg_size<(\d+)", k) for k in branch] \
        if isinstance(branch, dict) else []
    return tuple(sorted(int(m[1]) // scale for m in tests if m))
