"""`commscope import`: OSU, IMB and nccl-tests output (tests/data/imports, produced by the
real tools; see its README) read exactly, stored without samples, and every verb on it."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import sys
from pathlib import Path

import pytest

from commscope.system.errors import UserError
from commscope.importers import parse
from commscope.store.store import Store
from conftest import commscope, one_line_error

DATA = Path(__file__).parent / "data" / "imports"
FILES = sorted(p for p in DATA.iterdir() if p.suffix in (".txt", ".json"))

# file -> (tool, version, [(benchmark, kernel, ranks), ...] in file order)
EXPECTED = {
    "osu-7.2_latency.txt": ("osu", "7.2", [("osu_latency", "pingpong", 2)]),
    "osu-7.2_bw.txt": ("osu", "7.2", [("osu_bw", "bw", 2)]),
    "osu-7.2_bibw.txt": ("osu", "7.2", [("osu_bibw", "bibw", 2)]),
    "osu-7.2_allreduce.txt": ("osu", "7.2", [("osu_allreduce", "allreduce", None)]),
    "osu-7.2_alltoall.txt": ("osu", "7.2", [("osu_alltoall", "alltoall", None)]),
    "osu-7.2_bcast_np4_full.txt": ("osu", "7.2", [("osu_bcast", "bcast", None)]),
    "osu-5.9_latency.txt": ("osu", "5.9", [("osu_latency", "pingpong", 2)]),
    "imb_p2p.txt": ("imb", "2021.11", [
        ("PingPong", "pingpong", 2), ("PingPing", "pingping", 2), ("Sendrecv", "sendrecv", 2),
        ("Exchange", "exchange", 2), ("Uniband", "bw", 2), ("Biband", "bibw", 2)]),
    "imb_coll_np2_np4.txt": ("imb", "2021.11", [
        (name, kernel, p) for name, kernel in (
            ("Allreduce", "allreduce"), ("Bcast", "bcast"), ("Allgather", "allgather"),
            ("Alltoall", "alltoall"), ("Reduce", "reduce"), ("Reduce_scatter", "reduce_scatter"),
            ("Barrier", "barrier")) for p in (2, 4)]),
    "rccl-tests_all_reduce_perf.txt": ("nccl-tests", "develop:33cc4df",
                                       [("all_reduce_perf", "allreduce", 2)]),
    "nccl-tests_all_reduce_perf_constructed.json": ("nccl-tests", "JSON 3",
                                                    [("all_reduce_perf", "allreduce", 2)]),
}


def _table_lines(path: Path) -> list[str]:
    """The file's result rows, told apart independently of the parsers: lines whose first
    token is a number (IMB's Barrier rows start with the repetitions)."""
    return [line for line in path.read_text().splitlines()
            if re.match(r"^\s*\d+\s+\S", line) and not line.startswith("#")]


def test_every_file_is_covered():
    assert sorted(p.name for p in FILES) == sorted(EXPECTED)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_tool_version_and_runs(path):
    tool, version, runs = EXPECTED[path.name]
    found = parse(path)
    assert [(r.benchmark, r.kernel, r.ranks) for r in found] == runs
    assert {(r.tool, r.version) for r in found} == {(tool, version)}
    assert all(r.definition and r.metric in r.rows[0].figures for r in found)


@pytest.mark.parametrize("path", [p for p in FILES if p.suffix == ".txt"], ids=lambda p: p.name)
def test_every_printed_figure_comes_back_exactly(path):
    rows = [row for r in parse(path) for row in r.rows]
    lines = _table_lines(path)
    assert len(rows) == len(lines) > 0
    for row, line in zip(rows, lines):
        tokens = line.split()
        sized = not (tokens[0] == row.printed.get("repetitions") and row.bytes == 0
                     and len(tokens) == len(row.printed))
        if sized:
            assert int(tokens[0]) == row.bytes
        for name, token in row.printed.items():
            assert token in tokens, (name, token, line)
            assert float(token) == row.figures[name]
        # every number on the line is a figure (size, and a type or op name aside)
        numbers = [t for t in tokens[1 if sized else 0:] if re.fullmatch(r"-?[\d.]+", t)]
        assert sorted(numbers) == sorted(v for k, v in row.printed.items())


def test_json_figures_are_the_files():
    path = DATA / "nccl-tests_all_reduce_perf_constructed.json"
    doc = json.loads(path.read_text())
    (run,) = parse(path)
    assert [r.bytes for r in run.rows] == [item["size"] for item in doc["results"]]
    for row, item in zip(run.rows, doc["results"]):
        assert row.figures["time_us"] == item["out_of_place"]["time"]
        assert row.figures["busbw_GBps"] == item["out_of_place"]["bus_bw"]
        assert row.figures["inplace_algbw_GBps"] == item["in_place"]["alg_bw"]


def _cut(text: str, keep: float) -> str:
    return text[:int(len(text) * keep)]


@pytest.mark.parametrize("make", [
    lambda: "",
    lambda: "hello, this is not a benchmark\n1 2 3\n",
    lambda: _cut((DATA / "imb_p2p.txt").read_text(), 0.5),  # no MPI_Finalize line
    lambda: (DATA / "rccl-tests_all_reduce_perf.txt").read_text().split("# Avg bus")[0],
    lambda: (DATA / "osu-7.2_bw.txt").read_text()[:-9],  # the last row cut mid-line
    lambda: (DATA / "osu-7.2_latency.txt").read_text().split("\n1 ")[0],  # header, no rows
    lambda: _cut((DATA / "nccl-tests_all_reduce_perf_constructed.json").read_text(), 0.6),
], ids=["empty", "garbage", "imb-truncated", "nccl-no-trailer", "osu-cut-row",
        "osu-no-rows", "json-truncated"])
def test_garbage_and_truncated_files_are_refused(tmp_path, make):
    path = tmp_path / "given.txt"
    path.write_text(make())
    with pytest.raises(UserError, match=re.escape(str(path))):
        parse(path)


def test_import_stores_runs_in_file_order_and_every_verb_reads_them(tmp_path):
    db = tmp_path / "i.db"
    files = [DATA / "osu-5.9_latency.txt", DATA / "osu-7.2_latency.txt", DATA / "imb_p2p.txt"]
    done = commscope("import", *files, "--db", db)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == [f"run {i}" for i in range(1, 9)]
    assert "osu 5.9 osu_latency as pingpong" in lines[0] and "PingPong" in lines[2]
    store = Store(db)
    case = store.cases(2)[0]
    assert case.samples.size == 0 and case.extra["printed"] == {"latency_us": "0.36"}

    shown = json.loads(commscope("results", "show", "2", "--json", "--db", db).stdout)["cases"]
    assert shown[0]["median_s"] == pytest.approx(0.36e-6) and shown[0]["n"] == 0
    assert shown[0]["ci_low_s"] is None and shown[0]["ci_basis"].startswith("imported")
    text = commscope("results", "show", "2", "--db", db).stdout
    assert "no samples" in text and "imported from" in text
    assert "as the imported file printed it" in text and "launches' medians" not in text
    listed = json.loads(commscope("results", "list", "--json", "--db", db).stdout)["runs"]
    assert [r["kernel"] for r in listed][:3] == ["pingpong", "pingpong", "pingpong"]

    # compare gives the shift only: no p-value, no interval, and says why
    done = commscope("compare", "1", "2", "--json", "--db", db)
    assert done.returncode == 0, done.stderr
    changes = json.loads(done.stdout)["cases"]
    assert changes and {c["verdict"] for c in changes} == {"shift only"}
    assert all(c["p_adjusted"] is None and c["relative_ci_low"] is None for c in changes)
    first = next(c for c in changes if c["bytes"] == 1)
    assert first["relative"] == pytest.approx(0.36 / 0.11 - 1)
    assert "no p-value" in commscope("compare", "1", "2", "--db", db).stdout

    fit = json.loads(commscope("fit", "2", "--json", "--db", db).stdout)["fits"][0]
    assert fit["alpha_s"] > 0 and fit["alpha_ci_s"] is None and "no raw samples" in fit["note"]
    shown = commscope("fit", "2", "--db", db).stdout
    assert "no confidence intervals" in shown and "CIs within the launch" not in shown
    out = tmp_path / "r.html"
    done = commscope("report", "-o", out, "--db", db)
    assert done.returncode == 0, done.stderr
    assert "Imported figures, as printed" in out.read_text()


def test_a_bad_file_among_good_ones_stores_nothing(tmp_path):
    db = tmp_path / "i.db"
    bad = tmp_path / "bad.txt"
    bad.write_text((DATA / "imb_p2p.txt").read_text()[:3000])
    error = one_line_error(commscope("import", DATA / "osu-7.2_bw.txt", bad, "--db", db))
    assert str(bad) in error
    assert not db.exists() or Store(db).runs() == []
    assert "no such file" in one_line_error(commscope("import", tmp_path / "none", "--db", db))


# What cannot be a measurement (tests/data/import_bad, each a good file of tests/data/imports
# with one thing made wrong; see its README), and the profiles' like it made here: each is
# refused in one line naming the file, and line where one applies, and the store is kept.
BAD = Path(__file__).parent / "data" / "import_bad"
PROFILES = Path(__file__).parent / "data" / "profiles"
sys.path.insert(0, str(PROFILES))
import make_mpisee  # noqa: E402

POSITIVE_TIME = "a time must be a positive finite number (fix or delete the line)"
BANDWIDTH = "a bandwidth must be a finite number, 0 or more"
ANY = "expected the text output of OSU, IMB, nccl-tests or mpiP, or an mpisee profile (SQLite)"


def _mpip(change):
    def make(tmp_path: Path) -> Path:
        path = tmp_path / "mpip.txt"
        path.write_text(change((PROFILES / "mpip-3.5-halo-np8.txt").read_text()))
        return path
    return make


def _mpisee(sql: str):
    def make(tmp_path: Path) -> Path:
        path = make_mpisee.write(tmp_path / "mpisee.db")
        with sqlite3.connect(path) as db:
            db.execute(sql)
        return path
    return make


REFUSED = {  # case: (the file given: a name in BAD, or made; what follows its path)
    "osu-negative": ("osu_latency_negative.txt",
                     f':6: latency "-3.2" is negative; {POSITIVE_TIME}'),
    "osu-zero-time": ("osu_latency_zero.txt", f':6: latency "0.00" is zero; {POSITIVE_TIME}'),
    "osu-nan": ("osu_latency_nan.txt", f':6: latency "nan" is not a number; {POSITIVE_TIME}'),
    "osu-inf": ("osu_latency_inf.txt", f':6: latency "inf" is infinite; {POSITIVE_TIME}'),
    "osu-Infinity": ("osu_latency_Infinity.txt",
                     f':6: latency "Infinity" is infinite; {POSITIVE_TIME}'),
    "osu-1e999": ("osu_latency_1e999.txt", f':6: latency "1e999" is infinite; {POSITIVE_TIME}'),
    "osu-zero-bandwidth": ("osu_bw_zero.txt",
                           ':6: bandwidth "0.00" is zero; a bandwidth the size is measured by '
                           'must be a positive finite number (fix or delete the line)'),
    "osu-negative-bandwidth": ("osu_bw_negative.txt",
                               ':6: bandwidth "-39.19" is negative; a bandwidth the size is '
                               'measured by must be a positive finite number (fix or delete '
                               'the line)'),
    "osu-short-row": ("osu_latency_short_row.txt",
                      ":6: 1 column where the table's header has 2 (a line cut short?); "
                      "expected a row of 2 figures, as the header names them (fix or delete "
                      "the line)"),
    "osu-cut-number": ("osu_latency_cut_number.txt",
                       ":8: the last line '16                      0.4' has no line end: a "
                       "row cut off (truncated?); expected the whole file (fix or delete the "
                       "line)"),
    "osu-no-rows": ("osu_latency_no_rows.txt",
                    ":1: OSU Latency test without a row (truncated?); expected a row of "
                    "figures for each size under its '# Size' header"),
    "empty": ("empty.txt", f": the file is empty; {ANY}"),
    "nul-bytes": ("osu_latency_nul_block.txt", f":7: a NUL byte (at byte 166): a binary "
                                               f"file; {ANY}"),
    "utf-16": ("osu_latency_utf16.txt", f":1: a byte that is not UTF-8 text (at byte 0): a "
                                        f"binary file; {ANY}"),
    "gzip": ("osu-7.2_latency.txt.gz", f": a gzip-compressed file; {ANY} (gunzip it first)"),
    "directory": (lambda tmp_path: BAD, f": a directory, not a file; give its files one by "
                                        f"one, each {ANY[len('expected '):]}"),
    "imb-nan": ("imb_pingpong_time_nan.txt", f':11: time "nan" is not a number; '
                                             f'{POSITIVE_TIME}'),
    "imb-negative": ("imb_pingpong_time_negative.txt",
                     f':11: time "-0.39" is negative; {POSITIVE_TIME}'),
    "imb-inf-bandwidth": ("imb_pingpong_bandwidth_inf.txt",
                          f':12: bandwidth "inf" is infinite; {BANDWIDTH} (fix or delete '
                          'the line)'),
    "nccl-inf-time": ("nccl_all_reduce_perf_time_inf.txt",
                      f':13: time "inf" is infinite; {POSITIVE_TIME}'),
    "nccl-nan-busbw": ("nccl_all_reduce_perf_busbw_nan.txt",
                       f':14: busbw "-nan" is not a number; {BANDWIDTH} (fix or delete the '
                       'line)'),
    "nccl-json-NaN": ("nccl_all_reduce_perf_time_NaN.json",
                      ': results[1]: time "nan" is not a number; a time must be a positive '
                      'finite number (fix or delete the result)'),
    "nccl-json-1e999": ("nccl_all_reduce_perf_algbw_1e999.json",
                        f': results[2]: algbw "inf" is infinite; {BANDWIDTH} (fix or delete '
                        'the result)'),
    "mpip-nan-mean": (_mpip(lambda t: t.replace("    0    100     0.05   0.0125",
                                                "    0    100     0.05      nan", 1)),
                      ':83: Mean "nan" is not a number; a time spent must be a finite number, '
                      '0 or more (fix or delete the line)'),
    "mpip-negative-apptime": (_mpip(lambda t: t.replace("   3       12.4", "   3      -12.4")),
                              f':29: AppTime "-12.4" is negative; {POSITIVE_TIME}'),
    "mpisee-negative-time": (_mpisee("UPDATE data SET time = -0.5 WHERE id = 3"),
                             ': data row 3: time "-0.5" is negative; a time spent must be a '
                             'finite number, 0 or more (record the profile again)'),
    "mpisee-inf-walltime": (_mpisee("UPDATE exectimes SET time = 9e999 WHERE id = 2"),
                            ': exectimes row 2: time "inf" is infinite; a time must be a '
                            'positive finite number (record the profile again)'),
}


def _files(directory: Path) -> dict[str, str]:
    """Every file of the store (its -wal and -shm too), by name, as a hash of its bytes."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.iterdir()}


@pytest.mark.parametrize("given, says", REFUSED.values(), ids=REFUSED.keys())
def test_what_cannot_be_a_measurement_is_refused_and_the_store_is_kept(tmp_path, given, says):
    path = BAD / given if isinstance(given, str) else given(tmp_path)
    store = tmp_path / "store"
    store.mkdir()
    db = store / "r.db"
    good = DATA / "osu-7.2_latency.txt"
    assert commscope("import", good, "--db", db).returncode == 0
    before = _files(store)
    # the good file first: a store written up to the bad one would show
    assert one_line_error(commscope("import", good, path, "--db", db)) == \
        f"commscope: {path}{says}"
    assert _files(store) == before
    assert [r.id for r in Store(db).runs()] == [1]
