"""`commscope study`: each seed report's experiment in one command, written up with its figure."""

import json
import re
import sqlite3
import subprocess

import pytest

from conftest import commscope, one_line_error
from fakempi.inprocess import FakeLauncher

STUDIES = ["send-modes", "latency-convergence", "transports", "collectives-vs-p2p", "ring-model",
           "advection"]


def test_list_names_every_study_with_its_seed():
    done = commscope("study", "--list")
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines()]
    assert names == STUDIES
    assert all(" seed 00" in line for line in done.stdout.splitlines())


@pytest.mark.parametrize("args, says", [
    (["nonesuch", "-o", "x"], "study nonesuch: choose one of send-modes"),
    (["ring-model"], "-o DIR: name the directory"),
    (["ring-model", "-o", "x", "--np", "0"], "--np: '0' is not a process count"),
])
def test_bad_study_requests_are_one_line(tmp_path, db, args, says):
    assert says in one_line_error(commscope("study", *args, "--db", db, cwd=tmp_path))


# Each study's plans and figure, on the fake MPI (tests/fakempi: its kernels are tested
# for real elsewhere); the transports study on the real one, whose transports it compares.
@pytest.mark.parametrize("name, np", [("send-modes", "3"), ("latency-convergence", "2"),
                                      pytest.param("transports", "2", marks=pytest.mark.mpi),
                                      ("collectives-vs-p2p", "2,3"), ("ring-model", "2,3"),
                                      ("advection", "1,2")])
def test_each_study_runs_and_writes_its_figure_first(tmp_path, db, name, np, fake_mpi):
    out = tmp_path / "out"
    mpi = [] if name == "transports" else ["--mpi", fake_mpi]
    done = commscope("study", name, "--np", np, "--max-time", "0.3", "-o", out, "--db", db,
                     "--on", "local", *mpi,
                     launcher=None if name == "transports" else FakeLauncher())
    assert done.returncode == 0, done.stderr
    html = (out / "report.html").read_text()
    sections = re.findall(r"<h2>(.*?)</h2>", html)
    assert sections[0].startswith("Study: ") and name.split("-")[0] in sections[0].lower()
    first = html.split("<h2>", 2)[1]
    assert first.count("data:image/png;base64,") == 1  # the seed's figure


def test_many_rank_studies_run_on_a_namespace_cluster_as_root(tmp_path, db, mpi_prefix):
    """As root, ring-model makes one namespace host per rank, says so, and its runs' ranks
    sit on hosts of their own (their own host names); the cluster is gone afterwards."""
    from commscope.system.cluster import PREFIX, unavailable
    why = unavailable()
    if why:
        pytest.skip(why)
    out = tmp_path / "out"
    done = commscope("study", "ring-model", "--np", "2,3", "--max-time", "0.3", "-o", out,
                     "--db", db, "--mpi", mpi_prefix)
    assert done.returncode == 0, done.stderr
    assert "on a namespace cluster of 3 hosts" in done.stderr
    with sqlite3.connect(db) as con:
        runs = [(json.loads(s), json.loads(c)) for s, c in
                con.execute("SELECT settings, context FROM runs ORDER BY id")]
    assert len(runs) == 3  # pingping, then the ring at P = 2 and 3
    for settings, context in runs:
        assert settings["hosts"] == f"{PREFIX}-h0:1,{PREFIX}-h1:1,{PREFIX}-h2:1"
        hosts = [r["host"] for r in context["placement"]]
        assert len(set(hosts)) == len(hosts) == context["ranks"]  # a host of its own each
    assert "Ranks ran across the hosts" in (out / "report.html").read_text()
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"{PREFIX}-" not in left
