"""A second Ctrl-C with the launcher stopped (SIGSTOP), repeated: how often the command ends
at once (exit 130 within 3 s, nothing of its job left), per MPI.

The scenario of tests/test_fault_matrix.py::test_a_second_ctrl_c_ends_at_once, run many
times: a stop that waits on a lock or a process that never answers shows up here as a
repetition that hangs. Prints one line per MPI: passes out of repetitions, and the time
from the first Ctrl-C to the command's end (median and maximum).

    python bench/signals.py [--mpi PREFIX ...] [--repeat 50]
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUN = ["run", "pingpong", "--sizes", "0:1MiB", "--min-time", "0.5"]
LAUNCHERS = (b"mpirun", b"prterun", b"mpiexec", b"mpiexec.hydra")
ENDED_WITHIN_S = 3.0


def children(pid: int) -> list[int]:
    """Every process below pid."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError):
                continue
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return sorted(found)


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return b""


def cases(db: Path) -> int:
    try:
        return sqlite3.connect(db).execute("SELECT count(*) FROM cases").fetchone()[0]
    except sqlite3.Error:
        return 0


def once(mpi: str, folder: Path) -> tuple[bool, float, str]:
    """One repetition: (ended at once with nothing left, seconds, what went wrong)."""
    db = folder / "results.db"
    proc = subprocess.Popen([sys.executable, "-m", "commscope.cli", *RUN, "--mpi", mpi,
                             "--db", str(db)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            env={**os.environ, "TMPDIR": str(folder)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while cases(db) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    below = children(proc.pid)
    launcher = next((p for p in below if cmdline(p).endswith(LAUNCHERS)), None)
    if launcher is None or proc.poll() is not None:
        proc.kill()
        return False, 0.0, "the run never got going"
    os.kill(launcher, signal.SIGSTOP)
    began = time.monotonic()
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return False, 60.0, "still running 60 s after the second Ctrl-C"
    took = time.monotonic() - began
    time.sleep(0.5)
    left = [p for p in below if cmdline(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    if proc.returncode != 130 or "Traceback" in err:
        return False, took, f"exit {proc.returncode}: {err.strip()[-200:]}"
    if took >= ENDED_WITHIN_S:
        return False, took, f"took {took:.2f} s"
    if left:
        return False, took, f"{len(left)} processes left"
    return True, took, ""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mpi", action="append", default=[],
                   help="an MPI prefix (repeatable; default: the venv's Open MPI)")
    p.add_argument("--repeat", type=int, default=50)
    args = p.parse_args()
    for mpi in args.mpi or [sys.prefix]:
        results = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as folder:
                results.append(once(mpi, Path(folder)))
        passed = [r for r in results if r[0]]
        took = [r[1] for r in results if r[1]]
        print(f"second Ctrl-C, launcher stopped, {mpi}: {len(passed)}/{len(results)} ended "
              f"at once (exit 130 within {ENDED_WITHIN_S:g} s, nothing left); first Ctrl-C "
              f"to end: median {statistics.median(took):.2f} s, max {max(took):.2f} s")
        for ok, _, why in results:
            if not ok:
                print(f"  failed: {why}")


if __name__ == "__main__":
    main()
