"""`commscope results` on a stored run (the fake launcher's: the verbs read the store),
and `commscope info` on each real MPI."""

import csv
import io
import json

import numpy as np
import pytest

from conftest import commscope
from fakempi.inprocess import FakeLauncher


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory, fake_mpi):
    db = tmp_path_factory.mktemp("results") / "r.db"
    done = commscope("run", "pingpong", "--modes", "standard,ready", "--sizes", "8,1K",
                     "--iters", "12", "--db", db, "--mpi", fake_mpi, launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr
    return db


def test_list(stored_run):
    out = commscope("results", "list", "--db", stored_run).stdout.splitlines()
    assert out[0].split()[:3] == ["run", "started", "(UTC)"]
    fields = out[1].split()
    assert fields[0] == "1" and "complete" in fields and "pingpong" in fields
    # ranks, launches (auto: three with --iters), cases (four, in each launch)
    assert fields[fields.index("pingpong") + 1:fields.index("pingpong") + 4] == ["2", "3", "12"]


def test_show_and_csv_agree(stored_run):
    show = commscope("results", "show", "1", "--db", stored_run).stdout
    assert "ready" in show and "MB/s: 10^6 B/s" in show
    rows = list(csv.DictReader(io.StringIO(
        commscope("results", "export", "1", "--csv", "--db", stored_run).stdout)))
    assert [(r["send_mode"], r["bytes"], r["launches"], r["n"]) for r in rows] == [
        ("standard", "8", "3", "36"), ("standard", "1024", "3", "36"), ("ready", "8", "3", "36"),
        ("ready", "1024", "3", "36")]
    median_us = f"{float(rows[0]['median_s']) * 1e6:.3f}"
    assert median_us in show


def test_json_export_has_context_and_raw_samples(stored_run):
    (data,) = json.loads(commscope("results", "export", "1", "--json", "--db",
                                  stored_run).stdout)["runs"]
    assert data["run"]["status"] == "complete"
    assert data["command"][:3] == ["commscope", "run", "pingpong"]
    ctx = data["context"]
    assert ctx["mpi_library"] == "Open MPI" and ctx["ranks"] == 2
    assert [p["rank"] for p in ctx["placement"]] == [0, 1]
    assert ctx["timer"]["overhead_s"] > 0
    assert [launch["number"] for launch in data["launches"]] == [1, 2, 3]
    assert all(launch["context"]["ranks"] == 2 for launch in data["launches"])
    case = data["cases"][0]
    assert [len(s) for s in case["samples_s"]] == [12, 12, 12] and case["n"] == 36
    # Each launch's median is the half round trip, half its median raw sample; the case's
    # median is the typical launch's, exp(mean log launch median) (docs/statistics.md).
    medians = [(sorted(raw)[5] + sorted(raw)[6]) / 4 for raw in case["samples_s"]]
    assert sorted(case["launch_medians_s"]) == pytest.approx(sorted(medians), rel=1e-12)
    assert case["median_s"] == pytest.approx(float(np.exp(np.mean(np.log(medians)))),
                                             rel=1e-12)


def test_info_json(mpi_prefix):
    done = commscope("info", "--json", "--mpi", mpi_prefix)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["mpi_library"] in ("Open MPI", "MPICH")
    assert facts["mpicc"] == str(mpi_prefix / "bin" / "mpicc")
    assert facts["launcher"].startswith(str(mpi_prefix / "bin"))
    assert 0 < facts["timer"]["resolution_s"] < 1e-3
