"""`commscope info`: the MPI found, the native binary, the timer."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from .. import names, owner, stopping
from ..build import native_binary
from ..launcher import Placement
from ..launcher.job import current
from ..mpi import find_mpi
from .common import add_mpi, print_json

INFO_TIMEOUT_S = 120.0


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("info", help=summary)
    add_mpi(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def context_record(mpi, binary) -> dict:
    """The native context record of a one-rank launch: library, placement, timer."""
    with tempfile.TemporaryDirectory(prefix=owner.TMP_PREFIX) as tmp:
        job = current().start(mpi, 1, ["--info"], Placement(), Path(tmp) / "records.jsonl")
        try:
            deadline = time.monotonic() + INFO_TIMEOUT_S
            while job.poll() is None and time.monotonic() < deadline:
                stopping.check()
                time.sleep(0.01)
            lines = job.lines()
        finally:
            job.stop()
            job.close()
    for line in lines:
        if '"context"' in line:
            return json.loads(line)
    raise RuntimeError(f"{binary} --info gave no context record:\n"
                       + "".join(job.output()[1]))


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
        print_json(facts)
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
