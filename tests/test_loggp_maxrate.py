"""The loggp and mbw_mr kernels with their models, LogGP and max-rate: measured on both
MPIs, the constants drawn from them as docs/models.md defines, and predict using them."""

import json

import numpy as np
import pytest

from conftest import EMBEDDED, _mpich_prefix, commscope

pytestmark = pytest.mark.mpi

SIZES = "0,1KiB,64KiB"


@pytest.fixture(scope="module", params=["openmpi", "mpich"])
def loggp_run(request, tmp_path_factory):
    """One loggp run on each MPI, measured once: the constants, the report and predict
    below read the same stored run (conftest's mpi_prefix, at module scope)."""
    prefix = EMBEDDED if request.param == "openmpi" else _mpich_prefix()
    if prefix is None:
        pytest.skip("COMMSCOPE_TEST_MPICH is not set: run the suite with `make test`")
    db = tmp_path_factory.mktemp(f"loggp-{request.param}") / "results.db"
    done = commscope("run", "loggp", "--sizes", SIZES, "--validate", "--mpi", prefix,
                     "--db", db)
    assert done.returncode == 0, done.stderr
    assert "o_s us" in done.stdout and "o_r us" in done.stdout  # the phases' table
    return db


def test_the_parts_and_the_constants(loggp_run):
    done = commscope("fit", "--json", "--db", loggp_run)
    assert done.returncode == 0, done.stderr
    (model,) = json.loads(done.stdout)["fits"]
    assert model["model"] == "loggp" and model["window"] == 32
    parts = model["parts"]
    assert [p["bytes"] for p in parts] == [0, 1024, 65536]
    for p in parts:
        # g is the gap beyond the round trip, clipped at 0 (models/loggp.py): at 0 bytes on a
        # busy machine the gap can sit within the round trip's noise, so only >= 0 holds
        assert 0 < p["o_s_s"] <= p["rtt_s"] and p["o_r_s"] > 0 and p["g_s"] >= 0
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


def report_section(db, tmp_path, kernel: str) -> str:
    """The report's LogGP and max-rate section in `kernel`'s group, its markup."""
    out = tmp_path / "report.html"
    done = commscope("report", "-o", out, "--db", db)
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    start = page.index(f'<section id="{kernel}-message-models">')
    return page[start:page.index("</section>", start)]


def test_the_report_shows_loggp(loggp_run, tmp_path):
    model = json.loads(commscope("fit", "--json", "--db", loggp_run).stdout)["fits"][0]
    shown = report_section(loggp_run, tmp_path, "loggp")
    assert shown.count("<img") == 1 and "LogGP parts vs size" in shown
    for name in ("o_s_s", "o_r_s", "g_s"):  # the constants fit prints, in the table
        assert f"<td class=\"num\">{model[name] * 1e6:.3f}</td>" in shown


def test_predict_takes_a_message_time_from_loggp(loggp_run):
    done = commscope("predict", "ring", "--from", "1", "--np", "2", "--sizes", "1KiB",
                     "--json", "--db", loggp_run)
    assert done.returncode == 0, done.stderr
    model = json.loads(commscope("fit", "--json", "--db", loggp_run).stdout)["fits"][0]

    def message(m):  # LogGP: o_s + (m - 1) G + L + o_r
        return model["o_s_s"] + (m - 1) * model["G_s_per_byte"] + (model["L_s"] or 0) \
            + model["o_r_s"]
    rows = {r["algorithm"]: r["predicted_s"] for r in json.loads(done.stdout)["predictions"]}
    # seed 001's ring, P = 2: 2P messages one after another, or P of 2n bytes at once
    assert rows["serial"] == pytest.approx(4 * message(1024), rel=1e-9)
    assert rows["concurrent"] == pytest.approx(2 * message(2048), rel=1e-9)


def test_max_rate_from_mbw_mr_at_two_rank_counts(mpi_prefix, db, tmp_path):
    """mbw_mr at 2 and 4 ranks (1 and 2 pairs, validated): fit adds the max-rate model over
    both, and predict mbw_mr charges T(k, n) = alpha + k n / min(R_N, k R_C)."""
    done = commscope("run", "mbw_mr", "--np", "2,4", "--sizes", "64KiB,1MiB", "--validate",
                     "--mpi", mpi_prefix, "--db", db)
    assert done.returncode == 0, done.stderr
    fits = json.loads(commscope("fit", "1", "2", "--json", "--db", db).stdout)["fits"]
    (model,) = [f for f in fits if f.get("model") == "max-rate"]
    assert model["k"] == [1, 2] and model["alpha_s"] >= 0
    process = model["rate_process_MBps"] or np.inf
    node = model["rate_node_MBps"] or np.inf
    assert min(process, node) < np.inf  # one rate at least is told
    for p in model["points"]:
        expected = model["alpha_s"] + p["k"] * p["bytes"] / (min(node, p["k"] * process) * 1e6)
        assert p["model_s"] == pytest.approx(expected, rel=1e-9)
    predicted = commscope("predict", "mbw_mr", "--from", "1,2", "--compare", "1,2", "--json",
                          "--db", db)
    assert predicted.returncode == 0, predicted.stderr
    rows = json.loads(predicted.stdout)["predictions"]
    assert {(r["ranks"], r["bytes"]) for r in rows} == {(2, 65536), (2, 1 << 20), (4, 65536),
                                                         (4, 1 << 20)}
    for r in rows:
        (p,) = [p for p in model["points"]
                if p["k"] == r["ranks"] // 2 and p["bytes"] == r["bytes"]]
        assert r["predicted_s"] == pytest.approx(p["model_s"], rel=1e-9)
    one = commscope("predict", "mbw_mr", "--from", "1", "--np", "2", "--sizes", "8", "--db", db)
    assert one.returncode == 2 and "two rank counts" in one.stderr
    shown = report_section(db, tmp_path, "mbw_mr")
    assert shown.count("<img") == 1 and "k = 1, 2" in shown
    assert f"<td class=\"num\">{model['alpha_s'] * 1e6:.3f}</td>" in shown
