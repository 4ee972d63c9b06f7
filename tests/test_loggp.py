"""The loggp kernel and the LogGP model: its parts measured on both MPIs, the constants
drawn from them as docs/models.md defines, and predict using them."""

import json

import numpy as np
import pytest

from conftest import commscope

SIZES = "0,1KiB,64KiB"


@pytest.fixture
def loggp_run(mpi_prefix, db):
    done = commscope("run", "loggp", "--sizes", SIZES, "--validate", "--mpi", mpi_prefix,
                     "--db", db)
    assert done.returncode == 0, done.stderr
    assert "o_s us" in done.stdout and "o_r us" in done.stdout  # the phases' table
    return db


def test_the_parts_and_the_constants(loggp_run):
    done = commscope("fit", "--json", "--db", loggp_run)
    assert done.returncode == 0, done.stderr
    (model,) = json.loads(done.stdout)
    assert model["model"] == "loggp" and model["window"] == 32
    parts = model["parts"]
    assert [p["bytes"] for p in parts] == [0, 1024, 65536]
    for p in parts:
        assert 0 < p["o_s_s"] <= p["rtt_s"] and p["o_r_s"] > 0 and p["g_s"] > 0
    assert parts[-1]["g_s"] > parts[0]["g_s"]  # 64 KiB takes longer to stream than nothing
    first = parts[0]
    assert model["o_s_s"] == first["o_s_s"] and model["o_r_s"] == first["o_r_s"]
    assert model["g_s"] == first["g_s"]
    latency = first["rtt_s"] / 2 - first["g_s"]
    assert model["L_s"] == (pytest.approx(latency) if latency >= 0 else None)
    # G: the least-squares physical slope of g(m), here over three sizes
    x, y = np.array([p["bytes"] for p in parts], float), np.array([p["g_s"] for p in parts])
    assert model["G_s_per_byte"] == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-6)
    assert 1e8 < 1 / model["G_s_per_byte"] < 1e12  # bytes per second a copy could move


def test_predict_takes_a_message_time_from_loggp(loggp_run, mpi_prefix):
    done = commscope("predict", "ring", "--from", "1", "--np", "2", "--sizes", "1KiB",
                     "--json", "--db", loggp_run)
    assert done.returncode == 0, done.stderr
    model = json.loads(commscope("fit", "--json", "--db", loggp_run).stdout)[0]

    def message(m):  # LogGP: o_s + (m - 1) G + L + o_r
        return model["o_s_s"] + (m - 1) * model["G_s_per_byte"] + (model["L_s"] or 0) \
            + model["o_r_s"]
    rows = {r["algorithm"]: r["predicted_s"] for r in json.loads(done.stdout)}
    # seed 001's ring, P = 2: 2P messages one after another, or P of 2n bytes at once
    assert rows["serial"] == pytest.approx(4 * message(1024), rel=1e-9)
    assert rows["concurrent"] == pytest.approx(2 * message(2048), rel=1e-9)
