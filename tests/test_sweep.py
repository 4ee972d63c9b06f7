"""Sweep plans: checked whole before anything runs; interrupted sweeps resume without loss or
repeats."""

import signal
import sqlite3
import subprocess
import sys

import pytest

from commscope.system.mpi import find_mpi
from commscope.measure.sweep import load
from conftest import EMBEDDED, commscope, one_line_error
from test_interrupted import interruptible, wait_for_cases


def write(tmp_path, text, name="plan.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


RING = """
name = "rings"
launches = 2
iters = 10
[[experiment]]
kernel = "ring"
sizes = "8,1K"
np = [2, 3]
map_by = ["core", "socket"]
params = { pattern = ["ring", "exchange"] }
[[experiment]]
kernel = "pingpong"
modes = ["standard", "ready"]
sizes = "0,8"
"""


def case_keys(plan, launches):
    """Every case key of a sweep plan measured in `launches` launches."""
    return [plan.key(i, n, m, b) for n in range(1, launches + 1)
            for i, p in enumerate(plan.points) for m in p.modes for b in p.sizes]


def test_plan_expands_to_points_with_stable_case_ids(tmp_path):
    plan = load(write(tmp_path, RING), find_mpi(str(EMBEDDED)))
    # ring: 2 np x 2 map_by x 2 patterns, pingpong: 1; each launched twice.
    assert len(plan.points) == 8 + 1
    assert plan.cases == 8 * 2 + 1 * 4
    assert {p.sampling.launches for p in plan.points} == {2}
    found = case_keys(plan, 2)
    assert len(found) == len(set(found)) == plan.cases * 2
    again = load(write(tmp_path, RING, "same.toml"), find_mpi(str(EMBEDDED)))
    assert found == case_keys(again, 2)
    assert plan.hash == again.hash


@pytest.mark.parametrize("text, says", [
    ("[[experiment]]\nkernel = 'pong'\n", "experiment 1: unknown kernel 'pong'"),
    ("[[experiment]]\nkernel = 'ring'\ncolour = 1\n", "experiment 1: unknown key 'colour'"),
    ("speed = 3\n[[experiment]]\nkernel = 'ring'\n", "unknown key 'speed'"),
    ("[[experiment]]\nkernel = 'ring'\nsizes = '4QB'\n",
     "experiment 1: sizes: '4QB' is not a size"),
    ("[[experiment]]\nkernel = 'ring'\nnp = 'two'\n",
     "experiment 1: np: 'two' is not a process count"),
    ("[[experiment]]\nkernel = 'bcast'\nnp = [2, 4]\nparams = { root = 3 }\n",
     "experiment 1: params.root 3: give a rank from 0 to 1, or rotate"),
    ("[[experiment]]\nkernel = 'ring'\nparams = { op = 'sum' }\n",
     "params.op: kernel ring takes pattern"),
    ("[[experiment]]\nkernel = 'ring'\nmap_by = 'core'\nbind_to = 'socket'\n",
     "--bind-to socket: Open MPI binds within the mapped object"),
    ("[[experiment]]\nkernel = 'ring'\ntransport = 'infiniband'\n",
     "transport infiniband: choose from auto, shm, tcp"),
    ("[[experiment]]\nkernel = 'allreduce'\nsizes = '6'\nparams = { dtype = 'double' }\n",
     "not a whole number of double"),
    ("launches = 0\n[[experiment]]\nkernel = 'ring'\n", "launches 0: give a whole number"),
    ("[[experiment]\nkernel = 'ring'\n", "not valid TOML"),
    ("name = 'empty'\n", "no [[experiment]] tables"),
])
def test_bad_plans_are_refused_before_anything_runs(tmp_path, text, says):
    plan = write(tmp_path, text)
    db = tmp_path / "r.db"
    line = one_line_error(commscope("sweep", plan, "--db", db))
    assert str(plan) in line and says in line
    assert not db.exists()


def test_resume_needs_an_earlier_sweep_of_the_same_plan(tmp_path):
    plan = write(tmp_path, "[[experiment]]\nkernel = 'ring'\nsizes = '8'\n")
    line = one_line_error(commscope("sweep", plan, "--resume", "--db", tmp_path / "r.db"))
    assert "holds no sweep of" in line


@pytest.mark.mpi
def test_interrupted_sweep_resumes_with_no_case_lost_or_run_twice(tmp_path, mpi_prefix):
    plan = write(tmp_path, """
min_time = 0.1
launches = 2
[[experiment]]
kernel = "pingpong"
sizes = "0:4K"
""")
    db = tmp_path / "r.db"
    proc = subprocess.Popen([sys.executable, "-m", "commscope.cli", "sweep", str(plan), "--db",
                             str(db), "--mpi", str(mpi_prefix)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)
    wait_for_cases(db, 3, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err
    con = sqlite3.connect(db)
    before = {k for (k,) in con.execute("SELECT case_key FROM cases")}
    assert 3 <= len(before) < 28

    done = commscope("sweep", plan, "--resume", "--db", db, "--mpi", mpi_prefix)
    assert done.returncode == 0, done.stderr
    assert f"{len(before)} already stored, {28 - len(before)} to run" in done.stderr
    keys = [k for (k,) in con.execute("SELECT case_key FROM cases")]
    expected = set(case_keys(load(plan, find_mpi(str(mpi_prefix))), 2))
    assert len(keys) == len(set(keys)) == 28  # 14 sizes x 2 launches, none twice
    assert set(keys) == expected
    assert con.execute("SELECT count(DISTINCT sweep_id) FROM runs").fetchone()[0] == 1

    again = commscope("sweep", plan, "--resume", "--db", db, "--mpi", mpi_prefix)
    assert again.returncode == 0 and "28 already stored, 0 to run" in again.stderr
