"""`commscope predict --profile` (profiles/price.py) on the fake MPI's runs: a profile's
rows priced at the measured mean cost of one call (a message at ping-pong's one-way time,
an Isend/Irecv exchange at ping-ping's), between measured sizes, or by the Hockney fit;
the rows no measurement prices listed with the command that would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commscope.profiles import Profile, Row
from commscope.profiles.stored import save_imported
from commscope.store.store import Store
from conftest import commscope, one_line_error, validator
from fakempi.inprocess import FakeLauncher


def measured(fake_mpi, db, kernel, sizes, np_=2):
    done = commscope("run", kernel, "--np", np_, "--sizes", sizes, "--mpi", fake_mpi,
                     "--db", db, "--launches", 3, launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr


def profile_run(db, rows, ranks=2) -> int:
    profile = Profile(("./app",), ranks, (1.0,) * ranks, tuple(rows), {"tool": "test"})
    return save_imported(Store(db, append=True), ["test"], profile)


def mean_cost(db, kernel, nbytes) -> float:
    """The newest run's figure at this size, as `results show RUN --json` gives it: one
    call's price."""
    store = Store(db)
    run = max(r.id for r in store.runs() if r.kernel == kernel)
    shown = commscope("results", "show", str(run), "--json", "--db", db)
    (case,) = [c for c in json.loads(shown.stdout)["cases"] if c["bytes"] == nbytes]
    return case["median_s"]


def predict(db, *args):
    done = commscope("predict", "--profile", *args, "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_rows_are_priced_at_their_case_s_figure_and_the_rest_say_what_to_run(fake_mpi, tmp_path):
    db = tmp_path / "p.db"
    measured(fake_mpi, db, "pingpong", "4096")
    measured(fake_mpi, db, "pingping", "65536")
    measured(fake_mpi, db, "allreduce", "8")
    run = profile_run(db, [
        Row("MPI_Send", 2, 4096, "local", 100, 2e-3, 0, 409600),
        Row("MPI_Recv", 2, 4096, "local", 100, 3e-3, 1, 409600),
        Row("MPI_Allreduce", 2, 8, None, 50, 1e-3, 0, 400),
        Row("MPI_Allreduce", 2, 8, None, 50, 1e-3, 1, 400),
        Row("MPI_Irecv", 2, 65536, "local", 10, 4e-3, 0, 655360),
        Row("MPI_Isend", 2, 65536, "local", 10, 1e-5, 1, 655360),
        Row("MPI_Bcast", 2, 1024, None, 7, 1e-4, 0, 7168),
        Row("MPI_Waitall", 0, 0, None, 3, 1e-4, 0)])
    out = predict(db, run)
    rows = {r["call"]: r for r in out["rows"]}
    one_way = mean_cost(db, "pingpong", 4096)
    assert rows["MPI_Send"]["predicted_s"] == pytest.approx(100 * one_way)
    assert rows["MPI_Recv"]["efficiency"] == pytest.approx(100 * one_way / 3e-3)
    assert rows["MPI_Allreduce"]["predicted_s"] == pytest.approx(
        100 * mean_cost(db, "allreduce", 8))
    assert rows["MPI_Irecv"]["predicted_s"] == pytest.approx(  # an exchange: both ways
        10 * mean_cost(db, "pingping", 65536))
    assert rows["MPI_Isend"]["source"] == "with MPI_Irecv"
    assert rows["MPI_Isend"]["predicted_s"] == 0
    assert sum(r["share"] for r in out["rows"]) == pytest.approx(1)
    lo, hi = rows["MPI_Send"]["predicted_ci_s"]
    assert lo <= rows["MPI_Send"]["predicted_s"] <= hi
    unpriced = {r["call"]: r for r in out["unpriced"]}
    assert unpriced["MPI_Bcast"]["command"] == \
        f"commscope run bcast --np 2 --sizes 1024 --db {db}"  # the file it prices from
    assert unpriced["MPI_Waitall"]["command"] is None
    assert out["predicted_s"] == pytest.approx(sum(r["predicted_s"] for r in out["rows"]))
    validator("urn:commscope:predict-profile:2").validate(out)


def test_an_irecv_beside_blocking_sends_is_an_exchange_unless_they_are_a_ping_pong(
        fake_mpi, tmp_path):
    """Irecv, Send, Wait on every rank: one ping-ping a message, its sends priced with it
    and its efficiency over both rows. With a blocking MPI_Recv of that size and peer the
    sends are a ping-pong's: each message at one-way time. A persistent request's start
    is priced as its mode's nonblocking call; a size a few bytes off the one measured, with
    none the other side, takes its figure."""
    db = tmp_path / "p.db"
    measured(fake_mpi, db, "pingpong", "8192,102641")
    measured(fake_mpi, db, "pingping", "8192,512")
    exchange = profile_run(db, [Row("MPI_Irecv", 2, 8192, "local", 10, 1e-4, 0, 81920),
                                Row("MPI_Send", 2, 8192, "local", 10, 3e-4, 0, 81920),
                                Row("MPI_Recv_init", 2, 512, "local", 4, 1e-4, 0, 2048),
                                Row("MPI_Send_init", 2, 512, "local", 4, 1e-5, 0, 2048),
                                Row("MPI_Send", 2, 65536, "local", 3, 1e-4, 0, 307857)])
    rows = {(r["call"], r["bytes"]): r for r in predict(db, exchange)["rows"]}
    irecv, send = rows[("MPI_Irecv", 8192)], rows[("MPI_Send", 8192)]
    assert irecv["predicted_s"] == pytest.approx(10 * mean_cost(db, "pingping", 8192))
    assert send["source"] == "with MPI_Irecv" and send["predicted_s"] == 0
    assert irecv["efficiency"] == pytest.approx(irecv["predicted_s"] / 4e-4)
    assert rows[("MPI_Recv_init", 512)]["predicted_s"] == pytest.approx(
        4 * mean_cost(db, "pingping", 512))
    assert rows[("MPI_Send_init", 512)]["source"] == "with MPI_Irecv"
    near = rows[("MPI_Send", 65536)]  # 102,619 B a call against 102,641 measured
    assert near["source"] == "nearest" and near["predicted_s"] == pytest.approx(
        3 * mean_cost(db, "pingpong", 102641))
    pingpong = profile_run(db, [Row("MPI_Irecv", 2, 8192, "local", 10, 1e-4, 0, 81920),
                                Row("MPI_Send", 2, 8192, "local", 10, 3e-4, 0, 81920),
                                Row("MPI_Recv", 2, 8192, "local", 10, 1e-4, 1, 81920),
                                Row("MPI_Send", 2, 8192, "local", 10, 3e-4, 1, 81920)])
    rows = {r["call"]: r for r in predict(db, pingpong)["rows"]}
    one_way = mean_cost(db, "pingpong", 8192)
    assert rows["MPI_Irecv"]["predicted_s"] == pytest.approx(10 * one_way)
    assert rows["MPI_Send"]["predicted_s"] == pytest.approx(20 * one_way)


def test_a_size_between_measured_ones_is_interpolated_and_beyond_them_fitted(fake_mpi,
                                                                             tmp_path):
    db = tmp_path / "p.db"
    measured(fake_mpi, db, "pingpong", "1:1MiB")
    run = profile_run(db, [Row("MPI_Send", 2, 4096, "local", 1, 1e-3, 0, 6000),
                           Row("MPI_Send", 2, 4194304, "local", 1, 1e-3, 0, 4194304)])
    rows = {r["bytes"]: r for r in predict(db, run)["rows"]}
    between = rows[4096]
    assert between["source"] == "interpolated"
    assert mean_cost(db, "pingpong", 4096) < between["predicted_s"] < \
        mean_cost(db, "pingpong", 8192)
    assert rows[4194304]["source"] == "hockney"
    assert rows[4194304]["predicted_s"] > mean_cost(db, "pingpong", 1048576)


def test_twice_the_bandwidth_halves_the_cost_of_large_messages(fake_mpi, tmp_path):
    db = tmp_path / "p.db"
    measured(fake_mpi, db, "pingpong", "1:4MiB")
    run = profile_run(db, [Row("MPI_Send", 2, 4194304, "local", 10, 1e-2, 0, 41943040)])
    out = predict(db, run, "--scale-bandwidth", "2")
    (what_if,) = out["what_if"]
    assert what_if["predicted_s"] / out["predicted_s"] == pytest.approx(0.5, abs=0.05)


def test_what_cannot_be_priced_or_asked_is_one_line(fake_mpi, tmp_path):
    db = tmp_path / "p.db"
    measured(fake_mpi, db, "pingpong", "8")
    run = profile_run(db, [Row("MPI_Alltoall", 4, 64, None, 5, 1e-3, 0, 320)], ranks=4)
    err = one_line_error(commscope("predict", "--profile", run, "--db", db))
    assert "no row of the profile can be priced" in err
    assert "commscope run alltoall --np 4 --sizes 64" in err
    assert "not a profile" in one_line_error(commscope("predict", "--profile", 1, "--db", db))
    one_line_error(commscope("predict", "--profile", run, "--db", db, "--scale-bandwidth", "0"))
    one_line_error(commscope("predict", "allreduce", "--profile", run, "--db", db))
    one_line_error(commscope("predict", "--db", db, "--on", "1"))


def test_under_a_rules_file_the_collectives_are_priced_on_the_runs_under_it(fake_mpi,
                                                                           tmp_path):
    """tune writes a rules file, --verify measures default and rules in alternate launches
    (the fake's rules launches 0.8x as long): the what-if prices the allreduce row on the
    runs under the file, the baseline on the plain runs alone (not tune's forced
    algorithms, not the rules' launches)."""
    from test_tune import RulesLauncher, ring_halves_large
    db, rules = tmp_path / "p.db", tmp_path / "tuned.rules"
    assert commscope("tune", "allreduce", "--np", 4, "--sizes", "64,4KiB", "--launches", 3,
                     "--mpi", fake_mpi, "--db", db, "-o", rules,
                     launcher=FakeLauncher(factor=ring_halves_large)).returncode == 0
    launcher = RulesLauncher()
    launcher.rules_scale = 0.8
    assert commscope("tune", "--verify", rules, "--sizes", "4KiB", "--launches", 4, "--mpi",
                     fake_mpi, "--db", db, launcher=launcher).returncode in (0, 1, 3)
    run = profile_run(db, [Row("MPI_Allreduce", 4, 4096, None, 100, 1e-2, r, 409600)
                           for r in range(4)], ranks=4)
    out = predict(db, run, "--rules", rules)
    (what_if,) = out["what_if"]
    assert what_if["unpriced"] == 0
    assert what_if["predicted_s"] / out["predicted_s"] == pytest.approx(0.8, abs=0.1)


def test_an_imported_mpip_profile_is_priced_and_an_empty_one_refused(fake_mpi, tmp_path):
    db = tmp_path / "p.db"
    report = Path(__file__).parent / "data" / "profiles" / "mpip-3.5-halo-np8.txt"
    assert commscope("import", report, "--db", db).returncode == 0
    refused = one_line_error(commscope("predict", "--profile", 1, "--db", db))
    assert "no row of the profile can be priced" in refused
    for command in refused.split("`")[1].split("; "):  # what it says to run, run
        argv = command.split()[1:]
        assert commscope(*argv, "--mpi", fake_mpi, "--db", db, "--launches", 3,
                         launcher=FakeLauncher()).returncode == 0, command
    priced = predict(db, 1)
    assert priced["rows"] and priced["predicted_s"] > 0
    empty = profile_run(db, [])
    assert "no MPI calls" in one_line_error(commscope("predict", "--profile", empty, "--db", db))


def test_the_report_prices_each_profile_among_its_runs(fake_mpi, tmp_path):
    db, html = tmp_path / "p.db", tmp_path / "r.html"
    measured(fake_mpi, db, "pingpong", "1:64KiB")
    run = profile_run(db, [Row("MPI_Send", 2, 4096, "local", 100, 2e-3, 0, 409600),
                           Row("MPI_Recv", 2, 4096, "local", 100, 3e-3, 1, 409600)])
    done = commscope("report", "1,2", "--db", db, "-o", html)
    assert done.returncode == 0, done.stderr
    page = html.read_text()
    section = page[page.index('id="profiles"'):]
    assert f"Profile {run}" in section and "MPI_Send" in section and "what if bandwidth x2" \
        in section


def test_a_row_is_unexplained_only_where_its_efficiency_interval_lies_below_the_bound():
    """100 calls priced at 50 us against 10 ms profiled: efficiency 0.5. Its claim is told
    by the interval (the cost's over the profiled time) against LOW_EFFICIENCY, and only
    `unexplained` sets --json's flag and the table's `!`."""
    from commscope.profiles.price import LOW_EFFICIENCY, Priced
    from commscope.views.profile import predict_json, prediction_table
    row = Row("MPI_Recv", 2, 4096, "local", 100, 1e-2)

    def priced(cost, ci):
        return Priced(row, None, cost, ci, "measured", "run 1")
    told = {"unexplained": priced(5e-5, (4e-5, 6e-5)), "undetermined": priced(5e-5, (4e-5, 9e-5)),
            "explained": priced(9e-5, (8.5e-5, 9.5e-5)), "inconclusive": priced(5e-5, None)}
    assert LOW_EFFICIENCY == 0.8
    assert {word: x.efficiency.word for word, x in told.items()} == {w: w for w in told}
    assert priced(0.0, (0.0, 0.0)).efficiency.word == "unexplained"
    assert Priced(row, None, 0.0, (0.0, 0.0), "with MPI_Irecv", "").efficiency is None
    profile = Profile(("./app",), 2, (1.0, 1.0), (row,), {"tool": "test"})
    for word, x in told.items():
        (shown,) = predict_json(1, profile, "here", [x], [])["rows"]
        assert shown["unexplained"] == (word == "unexplained")
        assert shown["efficiency"] == pytest.approx(x.predicted_s / 1e-2)
        assert shown["efficiency_ci"] == (None if x.cost_ci_s is None else pytest.approx(
            [x.cost_ci_s[0] * 100 / 1e-2, x.cost_ci_s[1] * 100 / 1e-2]))
        marked = prediction_table([x], x.predicted_s).text().count(" !")
        assert marked == (word == "unexplained"), word
