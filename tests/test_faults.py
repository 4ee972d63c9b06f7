"""Faults: a case that hangs is ended by --timeout, named, and finished later by --resume."""

import json
import signal
import sqlite3
import os
import subprocess
import sys

import pytest

from conftest import commscope
from test_interrupted import native_ranks, wait_for_cases

pytestmark = pytest.mark.mpi

PLAN = """
name = "hang"
launches = 1
min_time = 0.1
timeout = {timeout}
[[experiment]]
kernel = "pingpong"
sizes = "0:64KiB"
"""


def test_a_hung_case_times_out_keeps_the_rest_and_resumes(mpi_prefix, db, tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(timeout=2))
    proc = subprocess.Popen([sys.executable, "-m", "commscope.cli", "sweep", str(plan), "--db",
                             str(db), "--mpi", str(mpi_prefix)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    wait_for_cases(db, 3, proc)
    rank = native_ranks(proc.pid)[-1]
    os.kill(rank, signal.SIGSTOP)  # a rank that stops answering: the case hangs
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        try:
            os.kill(rank, signal.SIGCONT)
        except ProcessLookupError:
            pass
    assert proc.returncode == 1, err
    con = sqlite3.connect(db)
    status, message, in_flight = con.execute(
        "SELECT status, message, in_flight FROM runs").fetchone()
    kept = con.execute("SELECT count(*) FROM cases").fetchone()[0]
    assert status == "failed" and kept >= 3
    assert "timed out: pingpong standard" in message and "on ranks 0 and 1" in message
    assert "no progress for 2 s" in message and message in err
    assert json.loads(in_flight)["kernel"] == "pingpong"

    done = commscope("sweep", plan, "--resume", "--db", db, "--mpi", mpi_prefix)
    assert done.returncode == 0, done.stderr
    sizes = [b for (b,) in con.execute("SELECT bytes FROM cases ORDER BY bytes")]
    assert sizes == [0] + [1 << i for i in range(17)]  # every size once: none lost, none twice


def test_timeout_must_be_positive(db):
    done = commscope("run", "pingpong", "--timeout", "-1", "--db", db)
    assert done.returncode == 2 and "--timeout -1.0: give a positive number" in done.stderr
