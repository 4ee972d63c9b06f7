"""Persistent requests, partitioned communication, element types and vector layouts
(issue 18): validated at 2 and 4 ranks on both MPIs, refused before launch where the
build lacks an MPI-4 feature, and carried through sweeps, report and compare."""

import json
import os
import sqlite3

import pytest

from conftest import EMBEDDED, commscope, one_line_error
from commscope.system.kernels import catalog
from commscope.system.mpi import find_mpi
from commscope.measure.params import extent
from commscope.measure.plan import plans

QUICK = ["--iters", "6", "--validate", "--launches", "1", "--np", "2,4"]


def run_json(mpi_prefix, db, *args, env=None):
    done = commscope("run", *args, *QUICK, "--mpi", mpi_prefix, "--db", db, "--json",
                     env=env)
    assert done.returncode == 0, done.stderr
    cases = json.loads(done.stdout)["cases"]
    assert cases and all(c["n"] == 6 and c["validated"] for c in cases)
    launched = sqlite3.connect(db).execute("SELECT DISTINCT ranks FROM runs")
    assert {ranks for (ranks,) in launched} == {2, 4}  # 2 and 4 ranks in the job
    return cases


# Persistent collectives are validated beside the plain ones, in the same launches, at 3 and
# 4 ranks: test_many_rank.py's test_collectives.


@pytest.mark.mpi
def test_persistent_point_to_point(mpi_prefix, db):
    cases = run_json(mpi_prefix, db, "pingpong", "--persistent", "--modes", "all",
                     "--sizes", "0,8,64KiB")
    # all: the four modes that have a persistent form
    assert {c["send_mode"] for c in cases} == {"standard", "synchronous", "buffered", "ready"}
    cases = run_json(mpi_prefix, db, "bw", "--persistent", "--sizes", "8,64KiB")
    assert all(c["params"]["persistent"] == "yes" for c in cases)


@pytest.mark.mpi
def test_partitioned(mpi_prefix, db):
    cases = run_json(mpi_prefix, db, "partitioned", "--partitions", "3",
                     "--sizes", "0,48,3KiB,96KiB")
    assert sorted({c["bytes"] for c in cases}) == [0, 48, 3072, 98304]
    con = sqlite3.connect(db)
    for nbytes, extra in con.execute("SELECT bytes, extra FROM cases"):
        assert json.loads(extra)["partition_bytes"] == nbytes // 3


@pytest.mark.mpi
def test_element_types_and_vector_layouts(mpi_prefix, db):
    """--validate checks each block at its place in the layout: had a kernel sent the
    payload contiguous, the blocks past n would fail."""
    cases = run_json(mpi_prefix, db, "pingpong", "--dtype", "double", "--layout", "vector:4:2",
                     "--modes", "all", "--sizes", "0,16,4KiB,256KiB")
    assert len({c["send_mode"] for c in cases}) == 6
    run_json(mpi_prefix, db, "bw", "--dtype", "float", "--layout", "vector:3:1", "--persistent",
             "--sizes", "4,1KiB,64KiB")
    run_json(mpi_prefix, db, "pingping", "--dtype", "int", "--sizes", "4,4KiB")
    run_json(mpi_prefix, db, "bibw", "--dtype", "long", "--sizes", "8,4KiB")


@pytest.mark.mpi
@pytest.mark.parametrize("feature,args", [
    ("partitioned", ["partitioned"]),
    ("persistent_collectives", ["allreduce", "--persistent"]),
])
def test_refused_before_launch_where_the_build_lacks_a_feature(db, feature, args):
    """A build without the feature (as where the MPI lacks it): one line, exit 2, nothing
    launched or stored. The probes themselves find both in both wheels' builds. One build
    lacks both, for both cases: each refusal names its own."""
    assert catalog().features[feature].present
    env = {**os.environ, "COMMSCOPE_NATIVE_WITHOUT": "partitioned,persistent_collectives"}
    line = one_line_error(commscope("run", *args, "--mpi", EMBEDDED, "--db", db, env=env))
    assert "MPI-4" in line and "Open MPI 5.0" in line and "COMMSCOPE_NATIVE_WITHOUT" in line
    assert f"needs {catalog().features[feature].calls}" in line
    assert not db.exists()


@pytest.mark.mpi
@pytest.mark.parametrize("args,says", [
    (["pingpong", "--persistent", "--modes", "nonblocking"], "give --modes standard,"),
    (["bw", "--persistent", "--cold-cache"], "drop --cold-cache"),
    (["pingpong", "--persistent", "maybe"], "choose one of yes, no"),
    (["bw", "--layout", "vector:1:2"], "STRIDE >= BLOCK >= 1"),
    (["pingpong", "--dtype", "double", "--layout", "vector:4:2", "--sizes", "8"],
     "vector:4:2 blocks (16 B)"),
    (["partitioned", "--sizes", "10"], "4 equal partitions"),
    (["pingpong", "--dtype", "short"], "choose one of char, int, long, float, double"),
])
def test_bad_combinations_are_one_line(db, args, says):
    line = one_line_error(commscope("run", *args, "--mpi", EMBEDDED, "--db", db))
    assert says in line
    assert not db.exists()


@pytest.mark.mpi
def test_default_sizes_keep_those_the_parameters_split():
    mpi = find_mpi(str(EMBEDDED))
    known = catalog(mpi)
    (plan,) = plans(known, mpi, kernel="pingpong", params={"dtype": "double",
                                                             "layout": "vector:3:2"})
    assert plan.sizes[0] == 0 and plan.sizes[1] == 16 and all(s % 16 == 0 for s in plan.sizes)
    (plan,) = plans(known, mpi, kernel="partitioned", params={"partitions": "3"})
    assert all(s % 3 == 0 for s in plan.sizes) and 3 * 2**20 not in plan.sizes
    (plan,) = plans(known, mpi, kernel="allreduce")  # int: from 4 B
    assert plan.sizes[:3] == [0, 4, 8]
    # a switch given as no is the switch not given: one identity
    (off,) = plans(known, mpi, kernel="bw", params={"persistent": False})
    (default,) = plans(known, mpi, kernel="bw")
    assert off.params == default.params
    # a vector spans (blocks - 1) strides and a block: 4 doubles in blocks of 2, stride 3
    assert extent(known.kernel("pingpong"), 32, {"dtype": "double", "layout": "vector:3:2"}) \
        == (3 + 2) * 8


@pytest.mark.mpi
def test_sweep_report_and_compare(tmp_path, db):
    plan = tmp_path / "mpi4.toml"
    plan.write_text('launches = 1\niters = 6\nvalidate = true\n'
                    '[[experiment]]\nkernel = "allreduce"\nsizes = "8,4KiB"\n'
                    'params = { persistent = [false, true] }\n'
                    '[[experiment]]\nkernel = "partitioned"\nsizes = "64,4KiB"\n')
    done = commscope("sweep", plan, "--mpi", EMBEDDED, "--db", db)
    assert done.returncode == 0, done.stderr
    con = sqlite3.connect(db)
    runs = {r: json.loads(p) for r, p in con.execute(
        "SELECT id, json_extract(settings, '$.params') FROM runs ORDER BY id")}
    assert list(runs.values()) == [{"op": "sum", "dtype": "int"},
                                   {"op": "sum", "dtype": "int", "persistent": "yes"},
                                   {"partitions": "4"}]
    out = tmp_path / "mpi4.html"
    done = commscope("report", "--sweep", "1", "-o", out, "--db", db)
    assert done.returncode == 0, done.stderr
    assert "partitioned" in out.read_text() and "persistent=yes" in out.read_text()
    # a later command of each new form is the same measurement: matched size by size
    again = ["--iters", "6", "--launches", "1", "--validate", "--mpi", EMBEDDED, "--db", db]
    for run, later, args in ((2, 4, ["allreduce", "--persistent", "--sizes", "8,4KiB"]),
                             (3, 5, ["partitioned", "--sizes", "64,4KiB"])):
        assert commscope("run", *args, *again).returncode == 0
        done = commscope("compare", str(run), str(later), "--json", "--db", db)
        assert done.returncode in (0, 1, 3), done.stderr
        cases = json.loads(done.stdout)["cases"]
        assert sorted(c["bytes"] for c in cases) == [8 if run == 2 else 64, 4096]
