"""Reading a watch (watch/history.py, `results history`, the report's history section, the
Prometheus and JUnit outputs): histories of probes stored as `commscope watch` stores them,
runs labelled watch=NAME and probe=N, made here with `commscope run --info` on the fake
launcher (its launches differ by 2%, each probe's command by its seed)."""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
from xml.etree import ElementTree

import numpy as np
import pytest

from commscope.watch import history as watch
from commscope.stats.advice import Advice
from commscope.watch import points as stored
from commscope.store.store import Store
from commscope.system import units
from conftest import commscope, one_line_error
from fakempi.inprocess import FakeLauncher

STEP_AT = 11  # the first probe of the slower level
STEPPED = 1024  # the case that steps; the 8-byte case stays as it was


def probe(fake_mpi, db, number: int, factor=lambda value, nbytes: 1.0, name: str = "w",
          sizes: str = "8,1024", seed: int = 0) -> None:
    """Probe `number` of watch `name`: a command of its own noise (the fake's seed)."""
    done = commscope("run", "pingpong", "--sizes", sizes, "--launches", "3", "--info",
                     f"watch={name}", "--info", f"probe={number}", "--mpi", fake_mpi,
                     "--db", db, launcher=FakeLauncher(factor=factor, seed=seed or number))
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def stepped(fake_mpi, tmp_path_factory):
    """20 probes of two cases; the 1 KiB case 25% slower from probe 11 on."""
    db = tmp_path_factory.mktemp("watch") / "stepped.db"
    for n in range(1, 21):
        probe(fake_mpi, db, n, lambda value, nbytes, n=n:
              1.25 if nbytes == STEPPED and n >= STEP_AT else 1.0)
    return db


def by_size(found: list[watch.Series]) -> dict[int, watch.Series]:
    return {s.ident["bytes"]: s for s in found}


def test_a_25_percent_step_is_named_at_its_probe_on_that_case_alone(stepped):
    found = by_size(watch.history(Store(stepped)))
    assert set(found) == {8, STEPPED}
    [step] = found[STEPPED].steps
    assert step.claim.word == "step" and step.claim.failing
    # found within 3 probes; where it began is Page's estimate, the last probe at which the
    # CUSUM was 0, which takes in the probes before the step that lay beyond its reference
    # (here probes 9 and 10, 1.2 scales above the level learned from 8)
    assert STEP_AT <= step.found <= STEP_AT + 2
    assert STEP_AT - 2 <= step.began <= STEP_AT
    assert step.claim.evidence["began_probe"] == step.began
    assert step.claim.evidence["found_probe"] == step.found
    low, high = step.claim.interval
    assert low < 1.25 < high and low > 1.1
    assert found[8].steps == []  # the stable case names no step
    assert found[8].flapping.claim.word == "not flapping"  # nor a flapping level


def test_a_provenance_change_starts_a_segment_and_is_not_a_step(stepped, tmp_path):
    db = tmp_path / "upgraded.db"
    shutil.copy(stepped, db)
    with sqlite3.connect(db) as con:  # the MPI upgraded where the case got slower
        ids = [r.id for n, rows in stored.watch_runs(Store(stepped), "w") if n >= STEP_AT
               for r in rows]
        con.executemany("UPDATE runs SET mpi_version = 'Open MPI v9.9.9' WHERE id = ?",
                        [(i,) for i in ids])
    s = by_size(watch.history(Store(db)))[STEPPED]
    assert s.steps == []
    assert [g.first_probe for g in s.segments] == [1, STEP_AT]
    assert {p.segment for p in s.points if p.probe >= STEP_AT} == {1}


def test_probes_toggling_between_two_levels_are_flapping(fake_mpi, tmp_path):
    db = tmp_path / "toggled.db"
    for n in range(1, 25):
        probe(fake_mpi, db, n, lambda value, nbytes, n=n: 1.3 if (n - 1) // 3 % 2 else 1.0,
              sizes="8")
    [s] = watch.history(Store(db))
    assert s.flapping.claim.word == "flapping" and s.flapping.claim.failing
    assert 0.4 <= s.flapping.share <= 0.6
    assert s.flapping.slow[0] == (4, 6)
    # results history names both levels and the share of probes in each
    shown = commscope("results", "history", "all", "--db", db)
    e = s.flapping.claim.evidence
    assert (f"flapping between {units.us(e['fast_s'])} µs in {1 - s.flapping.share:.0%} of "
            f"probes and {units.us(e['slow_s'])} µs in {s.flapping.share:.0%}") in shown.stdout
    assert e["slow_s"] / e["fast_s"] == pytest.approx(1.3, rel=0.1)
    # the expected band covers both states; their shares are the flapping line's alone,
    # and the least step the test finds within 3 probes is said
    low, high = s.expected.band_s
    assert low < e["fast_s"] and high > e["slow_s"] and len(s.expected.states) == 2
    assert "in states" not in shown.stdout
    assert (f"a step of {units.ratio(s.expected.least_step)}x or more is found within 3 "
            "probes") in shown.stdout


def test_results_history_prints_the_series_with_its_step(stepped):
    done = commscope("results", "history", "pingpong 1 KiB", "--db", stepped)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("watch w: pingpong") and "1 KiB" in lines[0]
    rows = [line.split() for line in lines if line.split()[:1] and line.split()[0].isdigit()]
    assert [int(r[0]) for r in rows] == list(range(1, 21))
    [began] = [int(r[0]) for r in rows if "began:" in r]
    [found] = [int(r[0]) for r in rows if r[-2:] == ["step", "found"]]
    assert STEP_AT - 2 <= began <= STEP_AT <= found <= STEP_AT + 2
    assert "step began: 1.2" in next(x for x in lines if x.split()[:1] == [str(began)])
    assert any(line.startswith("drift") and line.rstrip().endswith("step") for line in lines)
    assert "8 B" not in done.stdout  # CASE named the 1 KiB case only


def test_results_history_json_follows_its_schema(stepped):
    done = commscope("results", "history", "all", "--json", "--db", stepped)
    assert done.returncode == 0, done.stderr  # commscope() validated it against history:2
    out = json.loads(done.stdout)
    assert out["schema"] == "urn:commscope:history:2"
    cases = {c["identity"]["bytes"]: c for c in out["cases"]}
    assert [p["probe"] for p in cases[STEPPED]["probes"]] == list(range(1, 21))
    [step] = cases[STEPPED]["steps"]
    assert step["verdict"] == "step" and STEP_AT - 2 <= step["began_probe"] <= STEP_AT
    assert step["ci"][0] < 1.25 < step["ci"][1]
    assert cases[8]["steps"] == []
    last = cases[8]["probes"][-1]["of_expected"]
    assert last["ci"][0] < 1 < last["ci"][1]  # the stable case reads as normal


def test_junit_fails_a_testcase_per_step_and_prometheus_marks_it(stepped, tmp_path):
    junit, prom = tmp_path / "watch.xml", tmp_path / "watch.prom"
    done = commscope("results", "history", "all", "--junit", junit, "--prom", prom,
                     "--db", stepped)
    assert done.returncode == 1, done.stderr  # the gate's: a step fails it
    cases = ElementTree.parse(junit).getroot().findall("testcase")
    failed = [c for c in cases if c.find("failure") is not None]
    drift_cases = [c for c in failed if c.get("classname") == "drift"]
    assert ["1 KiB" in c.get("name") for c in drift_cases] == [True]
    assert "commscope health --screen" in drift_cases[0].find("failure").get("message")
    text = prom.read_text()
    for metric in ("latency_seconds", "expected_seconds", "step", "flapping"):
        assert f"# TYPE commscope_watch_{metric} gauge" in text
    steps = {("1 KiB" in line): line.split()[-1] for line in text.splitlines()
             if line.startswith("commscope_watch_step{")}
    assert steps == {True: "1.0", False: "0.0"}


def test_the_report_draws_the_history_section(stepped, tmp_path):
    out = tmp_path / "report.html"
    done = commscope("report", "1-20", "-o", out, "--db", stepped)
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    assert 'id="history"' in page and "A watch over time" in page
    assert page.count("over its probes") == 2  # one figure per case


def test_a_run_slowed_by_130_percent_reads_130_percent_of_expected(stepped, fake_mpi,
                                                                   tmp_path):
    db = tmp_path / "slowed.db"
    shutil.copy(stepped, db)
    done = commscope("run", "pingpong", "--sizes", "8", "--launches", "3", "--mpi", fake_mpi,
                     "--db", db, launcher=FakeLauncher(scale=1.3, seed=99))
    assert done.returncode == 0, done.stderr
    store = Store(db)
    slowed = store.cases(store.runs()[-1].id)
    e = watch.expected_for(store, slowed[0])
    assert e.source == "20 earlier commands on these hosts"
    figure = math.exp(sum(math.log(float(np.median(c.latency_s))) for c in slowed)
                      / len(slowed))
    got = watch.of_expected(figure, e)
    ratio, (low, high) = got.ratio, got.ci
    assert 1.25 < ratio < 1.35 and low < 1.3 < high and low > 1


def test_a_case_the_watch_lacks_or_a_file_without_a_watch_is_one_line(stepped, fake_mpi,
                                                                      tmp_path):
    line = one_line_error(commscope("results", "history", "allreduce", "--db", stepped))
    assert "pingpong" in line
    plain = tmp_path / "plain.db"
    done = commscope("run", "pingpong", "--sizes", "8", "--mpi", fake_mpi, "--db", plain,
                     launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr
    assert "no watch" in one_line_error(commscope("results", "history", "all", "--db",
                                                  plain))


def test_a_probe_that_could_not_run_is_a_line_with_its_word(stepped, fake_mpi, tmp_path):
    db = tmp_path / "hung.db"
    shutil.copy(stepped, db)
    done = commscope("run", "pingpong", "--sizes", "8,1024", "--launches", "3", "--info",
                     "watch=w", "--info", "probe=21", "--mpi", fake_mpi, "--db", db,
                     launcher=FakeLauncher(fail_after=0, seed=21))
    assert done.returncode != 0
    store = Store(db, append=True)
    failed = store.runs()[-1]
    assert failed.status != "complete"
    # as the watch verb stores what stopped a probe (watch/probe.py)
    store.add_warnings(failed.id, [Advice("hung", "no record for 30 s", None, 1.0)])
    found = by_size(watch.history(Store(db)))
    for s in found.values():
        assert (s.points[-1].probe, s.points[-1].median_s, s.points[-1].fault) == (21, None,
                                                                                 "hung")
    before = by_size(watch.history(Store(stepped)))[STEPPED].steps
    assert [st.began for st in found[STEPPED].steps] == [st.began for st in before]
    done = commscope("results", "history", "pingpong 8 B", "--db", db)
    [line] = [x for x in done.stdout.splitlines() if x.split()[:1] == ["21"]]
    assert line.rstrip().endswith("not measured: hung")


def test_expect_judges_a_new_node_against_another_results_file(stepped, fake_mpi, tmp_path):
    db = tmp_path / "new-node.db"
    for n in range(1, 4):
        probe(fake_mpi, db, n, lambda value, nbytes: 1.3, name="new", sizes="8",
              seed=100 + n)  # another node: noise of its own
    done = commscope("results", "history", "8 B", "--json", "--expect", stepped, "--db", db)
    assert done.returncode == 0, done.stderr
    [case] = json.loads(done.stdout)["cases"]
    assert case["expected"]["source"] == "20 earlier commands on any hosts of the reference file"
    for p in case["probes"]:
        low, high = p["of_expected"]["ci"]
        assert 1.25 < p["of_expected"]["ratio"] < 1.35 and 1 < low < 1.3 < high
    missing = tmp_path / "no-such.db"
    assert "--expect" in one_line_error(commscope("results", "history", "all", "--expect",
                                                  missing, "--db", db))


def folded_copy(stepped, tmp_path, keep: int):
    """The stepped watch with its old probes folded as `commscope watch --keep` folds them."""
    db = tmp_path / "folded.db"
    shutil.copy(stepped, db)
    store = Store(db, append=True)
    for number, run_ids, points in watch.folding(store, "w", keep):
        stored.fold(store, "w", run_ids, points)
    return db


def test_folded_probes_are_judged_as_they_were_whole(stepped, tmp_path):
    db = folded_copy(stepped, tmp_path, keep=3)
    whole, folded = (json.loads(commscope("results", "history", "all", "--json", "--db",
                                          d).stdout) for d in (stepped, db))
    for before, after in zip(whole["cases"], folded["cases"]):
        for p in before["probes"] + after["probes"]:
            p.pop("runs")  # a folded probe's runs are gone
        assert after == before  # figures, launches, expected levels, steps, flapping
    # kept whole: the latest 3, and the probes either side of where the step began and
    # the one it was found at, whose runs its remedy compares
    [step] = by_size(watch.history(Store(db)))[STEPPED].steps
    named = {step.began - 1, step.began, step.found}
    assert {n for n, _ in stored.watch_runs(Store(db), "w")} == named | {18, 19, 20}
    assert "commscope compare " in step.claim.remedy


def test_a_folded_watch_holds_each_case_in_bytes_and_numbers_on(stepped, tmp_path,
                                                                 fake_mpi):
    db = folded_copy(stepped, tmp_path, keep=1)
    con = sqlite3.connect(db)
    runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    points = con.execute("SELECT count(*) FROM watch_points").fetchone()[0]
    assert runs == 4 and points == 2 * (20 - 4)  # two cases a folded probe
    assert max(len(r[0]) for r in con.execute("SELECT launches FROM watch_points")) == 3 * 8
    probe(fake_mpi, db, 21)
    assert [p.probe for p in by_size(watch.history(Store(db)))[8].points] == \
        list(range(1, 22))
    assert stored.last_probe(Store(db), "w") == 21


def test_a_step_older_than_a_dashboard_shows_is_folded_too(stepped, tmp_path, monkeypatch):
    monkeypatch.setattr(watch, "FRESH", 5)  # the step, found at 11-13, is 7 or more old
    db = folded_copy(stepped, tmp_path, keep=3)
    assert {n for n, _ in stored.watch_runs(Store(db), "w")} == {18, 19, 20}
    [step] = by_size(watch.history(Store(db)))[STEPPED].steps
    assert step.claim.word == "step"  # judged from its folded probes as before
    assert step.claim.remedy.endswith("commscope results history (their runs were folded)")
