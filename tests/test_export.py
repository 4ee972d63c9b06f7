"""`results export --format csv|bmf|gab|prom` and `run --info`: what CI systems, dashboards
and scripts read (docs/schemas.md), checked against the figures `results show --json` gives
and against each format's published schema or maintained parser."""

from __future__ import annotations

import csv
import io
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from conftest import commscope, one_line_error, validator
from fakempi.inprocess import FakeLauncher

BENCHER = json.loads((Path(__file__).parent / "data" / "bencher-bmf.schema.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory, fake_mpi):
    """Run 1: pingpong labelled by --info; run 2: bw (a rate); runs 3 and 4: allreduce with
    two values of a parameter; run 5 repeats run 1's cases later."""
    db = tmp_path_factory.mktemp("export") / "r.db"
    for args in (["pingpong", "--sizes", "8,1K", "--info", "commit=abc123", "--info",
                  "node=n01"],
                 ["bw", "--sizes", "1K,64K"],
                 ["allreduce", "--sizes", "8", "--op", "sum"],
                 ["allreduce", "--sizes", "8", "--op", "max"],
                 ["pingpong", "--sizes", "8,1K"]):
        done = commscope("run", *args, "--iters", "12", "--db", db, "--mpi", fake_mpi,
                         launcher=FakeLauncher())
        assert done.returncode == 0, done.stderr
    return db


def shown(db, runs: str) -> dict:
    cases = json.loads(commscope("results", "show", runs, "--json", "--db", db).stdout)["cases"]
    return {(c["run"], c["kernel"], c["bytes"], json.dumps(c["params"])): c for c in cases}


def export(db, runs: str, fmt: str, *args) -> str:
    done = commscope("results", "export", runs, "--format", fmt, *args, "--db", db)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_tidy_csv_has_a_row_per_run_and_case_with_what_varied_as_columns(runs):
    rows = list(csv.DictReader(io.StringIO(export(runs, "1-4", "csv"))))
    figures = shown(runs, "1-4")
    assert len(rows) == len(figures) == 2 + 2 + 1 + 1
    header = list(rows[0])
    # what varied first (parameters and labels among them), the figures after
    assert header[:5] == ["run", "started_utc", "kernel", "send_mode", "bytes"]
    assert header.index("op") < header.index("commit") < header.index("median_s")
    assert {"mpi", "hosts", "ranks"} <= set(header[:header.index("median_s")])
    by_case = {(c["run"], c["bytes"]): c for c in figures.values()}  # one kernel per run
    by_run = {}
    for r in rows:
        by_run.setdefault(r["run"], []).append(r)
        c = by_case[int(r["run"]), int(r["bytes"])]
        assert float(r["median_s"]) == c["median_s"] and float(r["ci_high_s"]) == c["ci_high_s"]
        assert all(r[k] == str(v) for k, v in c["params"].items())
    assert {r["commit"] for r in by_run["1"]} == {"abc123"} and by_run["1"][0]["node"] == "n01"
    assert {r["commit"] for r in by_run["2"]} == {""}  # a run without labels: blank cells
    assert [r["op"] for r in by_run["3"] + by_run["4"]] == ["sum", "max"]
    assert {r["op"] for r in by_run["1"]} == {""}


def test_bmf_follows_bencher_schema_with_the_launch_aware_interval(runs):
    out = json.loads(export(runs, "1,2", "bmf"))
    jsonschema.Draft7Validator(BENCHER).validate(out)
    validator("urn:commscope:bmf:1").validate(out)
    figures = shown(runs, "1,2")
    for (run, kernel, nbytes, _), c in figures.items():
        (name,) = [n for n in out if n.startswith(f"{kernel} ") and f" {_size(nbytes)} " in n]
        latency = out[name]["latency"]
        assert latency["value"] == pytest.approx(c["median_s"] * 1e9, rel=1e-12)
        assert latency["lower_value"] == pytest.approx(c["ci_low_s"] * 1e9, rel=1e-12)
        assert latency["upper_value"] == pytest.approx(c["ci_high_s"] * 1e9, rel=1e-12)
        if kernel == "bw":  # the rate's interval: the time's, inverted
            bw = out[name]["bandwidth"]
            assert bw["value"] == pytest.approx(c["bandwidth_MBps"], rel=1e-12)
            assert bw["lower_value"] == pytest.approx(
                c["bandwidth_MBps"] * c["median_s"] / c["ci_high_s"], rel=1e-12)
            assert bw["lower_value"] < bw["value"] < bw["upper_value"]


def _size(nbytes: int) -> str:
    return {8: "8 B", 1024: "1 KiB", 65536: "64 KiB"}[nbytes]


def test_gab_has_latency_smaller_is_better_and_bandwidth_bigger_is_better(runs):
    latency = json.loads(export(runs, "2", "gab"))
    bandwidth = json.loads(export(runs, "2", "gab", "--measure", "bandwidth"))
    for entries in (latency, bandwidth):
        validator("urn:commscope:gab:1").validate(entries)
    figures = {c["bytes"]: c for c in shown(runs, "2").values()}
    assert [e["unit"] for e in latency] == ["us", "us"]
    assert [e["unit"] for e in bandwidth] == ["MB/s", "MB/s"]
    for e, c in zip(latency, figures.values()):
        assert e["value"] == pytest.approx(c["median_s"] * 1e6, rel=1e-12)
        half = max(c["ci_high_s"] - c["median_s"], c["median_s"] - c["ci_low_s"]) * 1e6
        assert float(e["range"].removeprefix("± ")) == pytest.approx(half, rel=1e-3)
    assert [e["value"] for e in bandwidth] == pytest.approx(
        [c["bandwidth_MBps"] for c in figures.values()], rel=1e-12)


def test_prometheus_parses_with_labels_and_the_latest_run_wins(runs):
    from prometheus_client import parser
    families = {f.name: f for f in parser.text_string_to_metric_families(
        export(runs, "1-5", "prom"))}
    latency = families["commscope_latency_seconds"].samples
    keys = [tuple(sorted(s.labels.items())) for s in latency]
    assert len(keys) == len(set(keys)) == 2 + 2 + 2  # run 5 replaces run 1's two series
    figures = shown(runs, "2-5")
    for s in latency:
        assert {"kernel", "size", "ranks", "mpi", "hosts"} <= set(s.labels)
        (c,) = [c for (run, kernel, nbytes, params), c in figures.items()
                if run != 1 and kernel == s.labels["kernel"] and str(nbytes) == s.labels["size"]
                and s.labels["params"] == ",".join(f"{k}={v}" for k, v in
                                                   sorted(json.loads(params).items()))]
        assert s.value == c["median_s"] and c["run"] in (2, 3, 4, 5)
    upper = families["commscope_latency_seconds_upper"].samples
    assert len(upper) == len(latency)
    assert {s.labels["kernel"] for s in families["commscope_bandwidth_bytes_per_second"]
            .samples} == {"bw", "pingpong", "allreduce"}


def test_an_export_killed_at_a_random_moment_leaves_the_old_file_or_the_new_whole(runs,
                                                                                tmp_path):
    from prometheus_client import parser
    target = tmp_path / "commscope.prom"
    target.write_text("# old\n")
    whole = export(runs, "1-5", "prom")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    rng = random.Random(29)
    for i in range(12):
        child = subprocess.Popen([sys.executable, "-m", "commscope.cli", "results", "export",
                                  "1-5", "--format", "prom", "-o", target, "--db", runs],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if i % 2:  # at a random moment of the whole command (start-up and reading ~1 s)
            time.sleep(rng.uniform(0.0, 1.5))
        else:  # while the new file is being written: as soon as its bytes start to land
            _until(lambda: any(p.name.startswith(".commscope.prom.")
                               for p in tmp_path.iterdir()) or child.poll() is not None)
        child.send_signal(signal.SIGKILL)
        child.wait()
        text = target.read_text()
        assert text in ("# old\n", whole)
        list(parser.text_string_to_metric_families(text))
    # what a kill leaves is a hidden temporary that the textfile collector (*.prom) skips
    assert all(p.name.startswith(".commscope.prom.") and not p.name.endswith(".prom")
               for p in tmp_path.iterdir() if p != target)


def _until(done, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not done() and time.monotonic() < end:
        time.sleep(0.0002)


def test_bad_export_and_info_input_is_one_line(runs, fake_mpi, tmp_path):
    assert "--measure" in one_line_error(commscope("results", "export", "1", "--format", "csv",
                                                   "--measure", "bandwidth", "--db", runs))
    assert "no such directory" in one_line_error(commscope(
        "results", "export", "1", "--format", "prom", "-o", tmp_path / "no" / "x.prom",
        "--db", runs))
    db = tmp_path / "info.db"
    for bad, says in (("commit", "KEY=VALUE"), ("my key=1", "KEY=VALUE"),
                      ("median_s=1", "already a column"), ("op=x", "already a column"),
                      ("param_n=1", "already a column")):
        line = one_line_error(commscope("run", "pingpong", "--info", bad, "--iters", "3",
                                        "--db", db, "--mpi", fake_mpi, launcher=FakeLauncher()))
        assert says in line and bad.split("=")[0] in line
    assert not db.exists()


def test_labels_are_not_part_of_what_a_case_is(runs):
    """Run 1 (labelled) and run 5 (not) measured the same cases: compare matches them."""
    done = commscope("compare", "1", "5", "--json", "--db", runs)
    assert done.returncode in (0, 1, 3), done.stderr
    out = json.loads(done.stdout)
    assert len(out["cases"]) == 2 and not out["only_a"] and not out["only_b"]


def test_a_parameter_named_as_a_column_keeps_both():
    """vector_sum's parameter n (its length) beside the figures' n (the samples)."""
    from commscope.views.export import csv_text
    case = {"kernel": "vector_sum", "bytes": 8, "params": {"n": "1000"}, "n": 36,
            "median_s": 1e-6}
    (row,) = csv.DictReader(io.StringIO(csv_text([{
        "run": 1, "started_utc": "2026-11-26T00:00:00+00:00", "mpi": "MPICH", "hosts": ["a"],
        "oversubscribed": False, "info": {}, "identity": {}, "case": case}])))
    assert (row["param_n"], row["n"], row["median_s"]) == ("1000", "36", "1e-06")
