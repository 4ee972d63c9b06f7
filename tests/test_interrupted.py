"""A run stopped by Ctrl-C or by a crashed rank keeps every finished case and names the one
in flight."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.mpi

# Many sizes at 0.3 s each: the run is still going when the test stops it.
LONG_RUN = ["run", "pingpong", "--sizes", "0:1MiB", "--min-time", "0.3"]


def interruptible():
    """Ctrl-C as a terminal delivers it: a shell that starts the suite in the background
    hands its children SIGINT ignored, and Python then never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(mpi_prefix, db):
    return subprocess.Popen([sys.executable, "-m", "commscope.cli", *LONG_RUN, "--mpi",
                             str(mpi_prefix), "--db", str(db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, preexec_fn=interruptible)


def wait_for_cases(db, count, proc, limit=120):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            con = sqlite3.connect(db)
            if con.execute("SELECT count(*) FROM cases").fetchone()[0] >= count:
                return
        except sqlite3.OperationalError:
            pass  # not created yet
        time.sleep(0.1)
    pytest.fail("the run never stored its first cases")


def descendants(pid):
    """Every process below pid, from /proc (children of children included)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def native_ranks(pid):
    ranks = []
    for p in descendants(pid):
        try:
            if b"commscope-native" in Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[0]:
                ranks.append(p)
        except OSError:
            pass
    return ranks


def stored(db):
    con = sqlite3.connect(db)
    status, in_flight, message = con.execute(
        "SELECT status, in_flight, message FROM runs").fetchone()
    cases = con.execute("SELECT count(*) FROM cases").fetchone()[0]
    return status, in_flight, message, cases


def test_ctrl_c_keeps_finished_cases(mpi_prefix, db):
    proc = start(mpi_prefix, db)
    wait_for_cases(db, 2, proc)
    ranks = native_ranks(proc.pid)
    assert len(ranks) == 2
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in err
    status, in_flight, message, cases = stored(db)
    assert status == "interrupted" and cases >= 2
    assert f"{cases} finished cases kept" in err and "was in flight" in err
    assert in_flight is not None and message in err
    deadline = time.monotonic() + 5
    while [p for p in ranks if Path(f"/proc/{p}").exists()] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in ranks if Path(f"/proc/{p}").exists()], "ranks left running"


def test_crashed_rank_keeps_finished_cases(mpi_prefix, db):
    proc = start(mpi_prefix, db)
    wait_for_cases(db, 2, proc)
    os.kill(max(native_ranks(proc.pid)), signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in err
    status, in_flight, message, cases = stored(db)
    assert status == "failed" and cases >= 2
    assert "finished cases kept" in message
    # the launcher's word, or the surviving rank's MPI error when it notices first (MPICH)
    assert "MPI job exited with code" in message or "rank 0 reported" in message
    assert in_flight is not None and "pingpong standard" in message
