"""`commscope check`: the catalogue, the verdicts and their contract (JSON, JUnit, exit
status) on the fake launcher, where a side's slowdown is known exactly; on both real MPIs,
a PMPI wrapper that delays MPI_Allreduce over a size range, or MPI_Bcast at one size, is
found where it was injected and nowhere else (docs/guidelines.md)."""

from __future__ import annotations

import json
import os
import sqlite3
from xml.etree import ElementTree

import pytest

from conftest import commscope, one_line_error
from pmpi import preloadable
from fakempi.inprocess import FakeLauncher
from commscope.guidelines import catalogue, measures

SLOW = {1024, 2048}  # the sizes the fake makes the collective itself 40% slower at


def slow_left(value, nbytes):
    return 1.4 if value is None and nbytes in SLOW else 1.0


def check(fake_mpi, db, *args, launcher=None, env=None):
    done = commscope("check", *args, "--mpi", fake_mpi, "--db", db, "--json",
                     launcher=launcher or FakeLauncher(), env=env)
    assert done.returncode in (0, 1, 3), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_the_catalogue_names_every_guideline_the_issue_asks_for():
    ids = catalogue().ids
    for wanted in ("allreduce<=reduce+bcast", "allreduce<=reduce_scatter_block+allgather",
                   "bcast<=scatter+allgather", "allgather<=gather+bcast", "allgather<=alltoall",
                   "allgather<=allreduce", "gather<=allgather", "scatter<=bcast",
                   "reduce<=allreduce", "reduce_scatter_block<=reduce+scatter",
                   "reduce_scatter<=allreduce", "scan<=exscan+reduce_local", "gather<=gatherv",
                   "scatter<=scatterv", "allgather<=allgatherv", "alltoall<=alltoallv",
                   "pingpong standard<=synchronous", "pingpong persistent<=plain",
                   "bw persistent<=plain", "allreduce persistent<=plain",
                   "pingping sendrecv<=isend+irecv", "pingpong standard<=nonblocking",
                   "monotony:KERNEL", "split:KERNEL"):
        assert wanted in ids
    assert all(g.source for g in catalogue().guidelines)


def test_both_sides_of_guidelines_on_one_kernel_share_its_plan():
    cat = catalogue()
    chosen = cat.find(["allreduce<=reduce+bcast", "allreduce<=reduce_scatter_block+allgather",
                       "monotony:allreduce", "pingpong standard<=synchronous",
                       "monotony:bcast"], {"allreduce", "pingpong", "bcast"})
    assert {(m.kernel, m.vary, m.values) for m in measures(chosen)} == {
        ("allreduce", "as", (None, "reduce+bcast", "reduce_scatter_block+allgather")),
        ("pingpong", "send_mode", ("standard", "synchronous")),
        ("bcast", None, (None,))}


def test_a_slower_collective_is_violated_at_its_sizes_and_nowhere_else(fake_mpi, db, tmp_path):
    junit = tmp_path / "check.xml"
    code, out = check(fake_mpi, db, "allreduce<=reduce+bcast", "--sizes", "256:8KiB",
                      "--launches", "4", "--junit", junit,
                      launcher=FakeLauncher(factor=slow_left))
    assert code == 1
    found = {v["bytes"]: v for v in out["verdicts"]}
    assert sorted(found) == [256, 512, 1024, 2048, 4096, 8192]
    assert {b for b, v in found.items() if v["verdict"] == "violated"} == SLOW
    assert all(v["verdict"] == "holds" for b, v in found.items() if b not in SLOW)
    v = found[1024]
    assert set(v) >= {"id", "kind", "np", "bytes", "ratio", "ci", "p_value", "verdict"}
    assert (v["id"], v["kind"], v["np"]) == ("allreduce<=reduce+bcast", "pattern", 2)
    assert v["ratio"] == pytest.approx(1.4, rel=0.05) and v["ci"][0] > 1.05
    assert v["launches"] == 4 and v["paired"]
    assert "coll_tuned_allreduce_algorithm nonoverlapping" in out["remedies"][0]
    # Every launch is stored as a run like any other: one run, four launches, both sides.
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (1,)
    assert con.execute("SELECT count(*) FROM launches").fetchone() == (4,)
    assert con.execute("SELECT count(*) FROM cases").fetchone() == (4 * 6 * 2,)
    suite = ElementTree.parse(junit).getroot()
    cases = suite.findall("testcase")
    assert len(cases) == 6 and suite.get("failures") == "2"
    failed = [c for c in cases if c.find("failure") is not None]
    assert {c.get("name") for c in failed} == {"allreduce np2 1 KiB", "allreduce np2 2 KiB"}
    assert "ratio 1.4" in failed[0].find("failure").get("message")


def test_the_remedy_is_tune_s_choice_where_tune_measured_the_same_sizes(fake_mpi, db):
    """Where the results file holds tune's runs at the violated np and sizes, check's
    remedy is what tune chose there (ring at 1 KiB; the default kept at 2 KiB, so the
    mock-up's calls), not the algorithm that mirrors the mock-up (nonoverlapping)."""
    def speeds(value, nbytes):
        fast = value == "reduce+bcast" or (value == "ring" and nbytes == 1024)
        return 1.0 if fast or nbytes not in SLOW else 1.4
    done = commscope("tune", "allreduce", "--np", "2", "--sizes", "1KiB,2KiB", "--launches",
                     "4", "--mpi", fake_mpi, "--db", db, "-o", os.devnull,
                     launcher=FakeLauncher(factor=speeds))
    assert done.returncode == 0, done.stderr
    code, out = check(fake_mpi, db, "allreduce<=reduce+bcast", "--sizes", "256:8KiB",
                      "--launches", "4", launcher=FakeLauncher(factor=speeds))
    assert code == 1
    assert {v["bytes"] for v in out["verdicts"] if v["verdict"] == "violated"} == SLOW
    [text] = out["remedies"]
    assert "select ring at 1 KiB np2" in text
    assert "call MPI_Reduce then MPI_Bcast at 2 KiB np2" in text
    assert "nonoverlapping" not in text


def test_the_table_and_exit_status_without_violations(fake_mpi, db):
    done = commscope("check", "pingpong standard<=synchronous", "monotony:pingpong",
                     "--sizes", "8:64", "--launches", "3", "--mpi", fake_mpi, "--db", db,
                     launcher=FakeLauncher())
    counts = next(x for x in done.stdout.splitlines() if " verdicts: " in x).split(". ")[0]
    # 3, not 0, where any size could not be told (docs/usage.md, "Exit status")
    assert done.returncode == (3 if "undetermined" in counts else 0), done.stderr
    assert "pingpong standard<=synchronous" in done.stdout
    assert "0 violated" in done.stdout and "remedy" not in done.stdout


def test_every_verdict_undetermined_exits_3_and_fail_on_makes_them_failures(fake_mpi, db,
                                                                         tmp_path):
    # the collective exactly at the threshold, 10% sample noise, 3 launches: each interval
    # spans 1.05, so the gate cannot pass it (docs/usage.md, "Exit status")
    xml = tmp_path / "check.xml"
    code, out = check(fake_mpi, db, "allreduce<=reduce+bcast", "--sizes", "64,1KiB",
                      "--launches", "3", "--junit", xml, launcher=FakeLauncher(
                          spread=0.1, factor=lambda v, n: 1 / 0.95 if v is None else 1.0))
    assert [v["verdict"] for v in out["verdicts"]] == ["undetermined"] * 2
    assert code == 3
    root = ElementTree.parse(xml).getroot()
    assert (root.get("failures"), root.get("skipped")) == ("0", "2")
    code, _ = check(fake_mpi, db, "--runs", "1", "--junit", xml, "--fail-on", "undetermined")
    assert code == 1
    root = ElementTree.parse(xml).getroot()
    assert (root.get("failures"), root.get("skipped")) == ("2", "0")
    assert [f.get("type") for f in root.iter("failure")] == ["undetermined"] * 2


def test_one_launch_is_inconclusive(fake_mpi, db):
    code, out = check(fake_mpi, db, "bcast<=scatter+allgather", "--sizes", "64",
                      "--launches", "1")
    (v,) = out["verdicts"]
    assert code == 3 and v["verdict"] == "inconclusive" and v["ci"] is None


def test_a_slower_size_fails_monotony_there(fake_mpi, db):
    code, out = check(fake_mpi, db, "monotony:bcast", "split:bcast", "--sizes", "512:8KiB",
                      "--launches", "4",
                      launcher=FakeLauncher(factor=lambda v, n: 4.0 if n == 1024 else 1.0))
    violated = {(v["id"], v["bytes"]) for v in out["verdicts"] if v["verdict"] == "violated"}
    # t(1 KiB) > t(2 KiB); and 1 KiB is slower than two messages of 512 B
    assert violated == {("monotony:bcast", 1024), ("split:bcast", 1024)}
    ratio = next(v["ratio"] for v in out["verdicts"]
                 if (v["id"], v["bytes"]) == ("monotony:bcast", 1024))
    assert ratio == pytest.approx(t_ratio(1024, 2048, 4.0), rel=0.1)


def t_ratio(m, m2, factor):
    """t(m) / t(m2) on the fake's line, t(m) made `factor` times as long."""
    from fakempi.native import ALPHA_S, BANDWIDTH_BPS
    return factor * (ALPHA_S + m / BANDWIDTH_BPS) / (ALPHA_S + m2 / BANDWIDTH_BPS)


def test_stored_runs_are_judged_without_measuring(fake_mpi, db):
    done = commscope("run", "bcast", "--sizes", "256:4KiB", "--launches", "3", "--mpi",
                     fake_mpi, "--db", db, launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr
    before = sqlite3.connect(db).execute("SELECT count(*) FROM cases").fetchone()
    done = commscope("check", "--runs", "1", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["runs"] == [1]
    assert {v["id"] for v in out["verdicts"]} == {"monotony:bcast", "split:bcast"}
    assert sqlite3.connect(db).execute("SELECT count(*) FROM cases").fetchone() == before


def test_sides_stored_in_separate_runs_are_compared_unpaired(fake_mpi, db):
    for extra in ([], ["--as", "reduce+bcast"]):
        done = commscope("run", "allreduce", "--sizes", "1KiB", "--launches", "3", *extra,
                         "--mpi", fake_mpi, "--db", db,
                         launcher=FakeLauncher(factor=lambda v, n: 1.0))
        assert done.returncode == 0, done.stderr
    done = commscope("check", "allreduce<=reduce+bcast", "--runs", "1-2", "--db", db, "--json")
    (v,) = json.loads(done.stdout)["verdicts"]
    assert not v["paired"] and v["launches"] == 3


@pytest.mark.parametrize("args, words", [
    (["nonsense<=x"], ["no guideline 'nonsense<=x'", "allreduce<=reduce+bcast",
                       "monotony:KERNEL"]),
    (["monotony:nokernel"], ["no guideline 'monotony:nokernel'"]),
    (["bcast<=scatter+allgather", "--np", "1"], ["needs at least 2 processes"]),
    ([], ["name guidelines"]),
    (["--all", "--runs", "1"], ["drop --all"]),
    (["bcast<=scatter+allgather", "--threshold", "lots"], ["--threshold"]),
    (["bcast<=scatter+allgather", "--threshold", "0"], ["--threshold 0", "above 0"]),
    (["bcast<=scatter+allgather", "--threshold", "100%"], ["--threshold 100%", "below 100"]),
    # m/2 is not among the sizes: a family that cannot be formed, refused before measuring
    (["split:bcast", "--sizes", "8,1KiB,64KiB"], ["split:bcast", "--sizes"]),
])
def test_bad_input_is_one_line_and_stores_nothing(fake_mpi, db, args, words):
    line = one_line_error(commscope("check", *args, "--mpi", fake_mpi, "--db", db,
                                    launcher=FakeLauncher()))
    assert all(w in line for w in words), line
    assert not db.exists()


def test_runs_with_nothing_to_check_are_refused(fake_mpi, db):
    done = commscope("run", "pingpong", "--sizes", "8", "--launches", "1", "--mpi", fake_mpi,
                     "--db", db, launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr
    before = db.read_bytes()
    line = one_line_error(commscope("check", "--runs", "1", "--db", db))
    assert "nothing to check" in line
    assert db.read_bytes() == before


def test_a_kernel_against_itself_raises_few_false_alarms(fake_mpi, db):
    """On the fake, persistent and plain are the same collective with noise of their own:
    over 20 commands of 8 sizes, at most 1 family with a violation (BH keeps it at 5%)."""
    families = 0
    for seed in range(20):
        code, out = check(fake_mpi, db, "allreduce persistent<=plain", "--sizes", "8:1KiB",
                          "--launches", "3", launcher=FakeLauncher(spread=0.05, seed=seed))
        assert len(out["verdicts"]) == 8
        families += code == 1
    assert families <= 1


# A PMPI wrapper delays one collective by DELAY_US where its message is within [lo, hi]
# bytes (tests/pmpi.py).
DELAY_US = 100.0
WRAPPER = r"""
static int within(int count, MPI_Datatype type)
{
    int size;
    PMPI_Type_size(type, &size);
    long long bytes = (long long)count * size;
    return bytes >= %(lo)d && bytes <= %(hi)d;
}

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    if (%(allreduce)d && within(count, type))
        delay(%(us)g);
    return PMPI_Allreduce(s, r, count, type, op, comm);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    if (%(bcast)d && within(count, type))
        delay(%(us)g);
    return PMPI_Bcast(buf, count, type, root, comm);
}
"""


def wrapper(mpi_prefix, where, call: str, lo: int, hi: int) -> str:
    return preloadable(mpi_prefix, where, "delay", WRAPPER % {
        "us": DELAY_US, "lo": lo, "hi": hi, "allreduce": call == "allreduce",
        "bcast": call == "bcast"})


def verdicts(mpi_prefix, db, guideline: str, sizes: str, env=None) -> dict[int, str]:
    done = commscope("check", guideline, "--sizes", sizes, "--launches", "3", "--mpi",
                     mpi_prefix, "--db", db, "--json", env=env)
    assert done.returncode in (0, 1, 3), done.stderr
    out = json.loads(done.stdout)
    assert out["verdicts"], done.stderr
    return {v["bytes"]: v["verdict"] for v in out["verdicts"]}


def caused(before: dict[int, str], after: dict[int, str], delayed: set[int]) -> None:
    """Every delayed size becomes a violation, and no size that held without the wrapper
    becomes one. A size the command without it could not decide (`undetermined` or `slower`: its
    interval reached the threshold; Open MPI's allreduce at 8 KiB, np 2, reads 1.02-1.09
    of reduce+bcast here) may be violated in either command: it says nothing of the
    wrapper."""
    new = {b for b, v in after.items() if v == "violated" and before[b] != "violated"}
    undecided = {b for b, v in before.items() if v not in ("holds", "violated")}
    assert delayed <= new and not new - delayed - undecided, (before, after)


@pytest.mark.mpi
def test_a_delayed_allreduce_violates_its_pattern_where_delayed(mpi_prefix, tmp_path):
    """Only MPI_Allreduce at 1-4 KiB is delayed; the mock-up's MPI_Reduce and MPI_Bcast
    are not: those sizes become violations, and no size that held without the wrapper
    does."""
    sizes, delayed = "256:16KiB", {1024, 2048, 4096}
    before = verdicts(mpi_prefix, tmp_path / "a.db", "allreduce<=reduce+bcast", sizes)
    env = {**os.environ,
           "LD_PRELOAD": wrapper(mpi_prefix, tmp_path, "allreduce", 1024, 4096)}
    after = verdicts(mpi_prefix, tmp_path / "b.db", "allreduce<=reduce+bcast", sizes, env)
    caused(before, after, delayed)


@pytest.mark.mpi
def test_a_delayed_bcast_size_violates_monotony_there(mpi_prefix, tmp_path):
    sizes = "1KiB:16KiB"
    before = verdicts(mpi_prefix, tmp_path / "a.db", "monotony:bcast", sizes)
    env = {**os.environ, "LD_PRELOAD": wrapper(mpi_prefix, tmp_path, "bcast", 4096, 4096)}
    after = verdicts(mpi_prefix, tmp_path / "b.db", "monotony:bcast", sizes, env)
    caused(before, after, {4096})


def test_the_report_shows_each_guideline_with_its_violations(fake_mpi, db, tmp_path):
    check(fake_mpi, db, "allreduce<=reduce+bcast", "monotony:allreduce", "--sizes",
          "256:8KiB", "--launches", "4", launcher=FakeLauncher(factor=slow_left))
    done = commscope("run", "bcast", "--sizes", "8", "--launches", "1", "--mpi", fake_mpi,
                     "--db", db, launcher=FakeLauncher())  # not a check run: no section
    html = tmp_path / "report.html"
    done = commscope("report", "--db", db, "-o", html)
    assert done.returncode == 0, done.stderr
    text = html.read_text()
    assert text.count("Performance guidelines") == 2  # contents and heading, allreduce only
    assert "allreduce&lt;=reduce+bcast: 2 of 6 sizes violated" in text
    assert "monotony:allreduce: " in text


def test_runs_and_the_report_judge_as_the_command_did(fake_mpi, db, tmp_path):
    """A 1.4x slower left side at a 50% threshold is slower, not violated: `--runs` and the
    report read the threshold stored with the run, not the 5% default, and give the same
    verdicts, figures and all."""
    code, measured = check(fake_mpi, db, "allreduce<=reduce+bcast", "--sizes", "256:8KiB",
                           "--launches", "4", "--threshold", "50%",
                           launcher=FakeLauncher(factor=slow_left))
    assert code == 0 and not any(v["failing"] for v in measured["verdicts"])
    assert {v["bytes"] for v in measured["verdicts"] if v["verdict"] == "slower"} == SLOW
    done = commscope("check", "--runs", "1", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    again = json.loads(done.stdout)["verdicts"]
    assert again == measured["verdicts"], [{k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)}
                                           for a, b in zip(again, measured["verdicts"])]
    html = tmp_path / "report.html"
    assert commscope("report", "--db", db, "-o", html).returncode == 0
    assert "allreduce&lt;=reduce+bcast: 0 of 6 sizes violated" in html.read_text()
