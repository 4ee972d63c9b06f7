"""`commscope info`: the MPI found, the native binary, the timer."""

from __future__ import annotations

import argparse

from ..store import names
from ..system.build import native_binary
from ..system.launcher import Placement
from ..system.launcher.job import context_of
from ..system.mpi import find_mpi
from .common import add_mpi, print_json

INFO_TIMEOUT_S = 120.0


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("info", help=summary)
    add_mpi(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def context_record(mpi, binary) -> dict:
    """The native context record of a one-rank launch: library, placement, timer."""
    _, context, said = context_of(mpi, 1, Placement(), INFO_TIMEOUT_S)
    if context:
        return context
    raise RuntimeError(f"{binary} --info gave no context record:\n" + "".join(said))


def run(args: argparse.Namespace, argv: list[str]) -> int:
    mpi = find_mpi(args.mpi)
    binary = native_binary(mpi)
    ctx = context_record(mpi, binary)
    facts = {
        "mpi_library": ctx["mpi_library"],
        "mpi_version": ctx["mpi_library_version"],
        "mpi_standard": ctx["mpi_standard"],
        "large_count": ctx["large_count"],
        "found_by": mpi.found_by,
        "mpicc": str(mpi.mpicc),
        "launcher": str(mpi.launcher),
        "native_binary": str(binary),
        "compiler": ctx["compiler"],
        "timer": ctx["timer"],
        "host": ctx["hosts"][0],
    }
    if args.json:
        print_json("info", facts)
        return 0
    print(f"MPI          {facts['mpi_library']} ({facts['mpi_version'].splitlines()[0]})")
    print(f"standard     MPI {facts['mpi_standard']}, large-count calls: "
          f"{'yes' if facts['large_count'] else 'no (derived datatypes over 2 GiB)'}")
    print(f"found by     {facts['found_by']}")
    print(f"mpicc        {facts['mpicc']}")
    print(f"launcher     {facts['launcher']}")
    print(f"binary       {facts['native_binary']}")
    print(f"compiler     {facts['compiler']}")
    print(f"timer        {names.timer(facts['timer'])}")
    return 0
