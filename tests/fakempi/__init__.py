"""A fake MPI for tests that need commscope's whole path but not real messages: an MPI
prefix whose `mpicc` "builds" the fake native binary (native.py) and whose `mpirun` starts
it once, as if it were every rank. The binary writes records as the real one does
(docs/native.md), synthesized from a latency model, so measure, ingest, the store and
every verb run for real, in a fraction of the time and without MPI.

Knobs (environment, read by the fake native at launch): COMMSCOPE_FAKE_SCHEMA (the
context record's schema), COMMSCOPE_FAKE_FAIL_AFTER (an error record after N cases,
then exit 1), COMMSCOPE_FAKE_HANG_AFTER (sleep for ever after N cases).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERSION = "mpirun (Open MPI) 5.0.0 (commscope's fake MPI for tests)"


def _script(path: Path, body: str) -> None:
    path.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(HERE.parent)!r})\n"
                    + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def make_prefix(root: Path, description: dict) -> Path:
    """A fake MPI installation under root; `description` is the real native binary's
    --describe output, which the fake binary repeats."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    (root / "describe.json").write_text(json.dumps(description))
    _script(bin_dir / "mpicc", "from fakempi.tools import mpicc\nmpicc(sys.argv[1:])\n")
    _script(bin_dir / "mpirun", "from fakempi.tools import mpirun\nmpirun(sys.argv[1:])\n")
    return root


def environ_for(prefix: Path) -> dict[str, str]:
    """Where the fake binary finds its description."""
    return {**os.environ, "COMMSCOPE_FAKE_PREFIX": str(prefix)}
