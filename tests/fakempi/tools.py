"""The fake MPI's compiler wrapper and launcher (see __init__)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from . import VERSION, _script


def mpicc(args: list[str]) -> None:
    """`mpicc ... -o OUT`: OUT becomes the fake native binary, bound to this prefix."""
    out = Path(args[args.index("-o") + 1])
    prefix = Path(sys.argv[0]).resolve().parent.parent
    _script(out, f"import os\nos.environ.setdefault('COMMSCOPE_FAKE_PREFIX', {str(prefix)!r})\n"
                 "from fakempi.native import main\nmain(sys.argv[1:])\n")


def mpirun(args: list[str]) -> None:
    """`mpirun --version`, or `mpirun [-np N and other options] BINARY ARGS...`."""
    if args == ["--version"]:
        print(VERSION)
        return
    ranks = int(args[args.index("-np") + 1]) if "-np" in args else 1
    at = next(i for i, a in enumerate(args) if Path(a).name == "commscope-native")
    os.environ["COMMSCOPE_FAKE_RANKS"] = str(ranks)
    os.execv(args[at], args[at:])
