"""A failed run never breaks a read verb: report, results show, list and export of a file
holding complete, failed, empty, interrupted, imported and failed-profile runs."""

import re
from pathlib import Path

import pytest

from conftest import commscope
from conftest import strict_json as strict
from fakempi.inprocess import FakeLauncher

DATA = Path(__file__).parent / "data" / "imports"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, fake_mpi):
    from commscope.profiles import Profile, stored
    from commscope.profiles.recorded import Recorded
    from commscope.store.store import Store

    db = tmp_path_factory.mktemp("mixed") / "r.db"

    def run(launcher, *args):
        return commscope("run", *args, "--db", db, "--mpi", fake_mpi, launcher=launcher)

    assert run(FakeLauncher(), "pingpong", "--sizes", "8,1K", "--launches", "2").returncode == 0
    assert run(FakeLauncher(fail_after=1), "pingpong", "--sizes", "8,1K,64K",
               "--launches", "1").returncode == 1  # 2: one case, then a rank's error
    assert run(FakeLauncher(fail_after=0), "bw", "--sizes", "8",
               "--launches", "1").returncode == 1  # 3: failed before any case
    assert commscope("import", DATA / "osu-7.2_latency.txt", "--db", db).returncode == 0  # 4
    store = Store(str(db), append=True)
    interrupted = store.begin_run(["commscope", "run", "ring"], "ring", 2, False)  # 5
    store.finish_run(interrupted, "interrupted", "interrupted: nothing measured yet")
    stored.save(store, ["commscope", "profile", "--", "/bin/echo", "hi"], ["/bin/echo", "hi"],
                2, False, "2026-01-01T00:00:00+00:00",
                Recorded(Profile(("/bin/echo", "hi"), 2, (), ()), ("", ""), (0, 1), ()),
                "failed", "ranks 0, 1 recorded nothing")  # 6: what older versions kept
    store.close()
    return db


def test_results_show_and_list_name_every_run_and_its_status(mixed):
    shown = commscope("results", "show", "1-6", "--db", mixed)
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr
    for line in ("run 2: pingpong on 2 ranks, failed", "run 3: bw on 2 ranks, failed",
                 "run 5: ring on 2 ranks, interrupted", "interrupted: nothing measured yet",
                 "run 6: profile of /bin/echo hi on 2 ranks, failed",
                 "ranks 0, 1 recorded nothing"):
        assert line in shown.stdout
    assert "--profile" not in shown.stdout + shown.stderr  # an option nobody gave
    listed = strict(commscope("results", "list", "--json", "--db", mixed).stdout)
    assert [r["status"] for r in listed["runs"]] == [
        "complete", "failed", "failed", "complete", "interrupted", "failed"]
    as_json = commscope("results", "show", "1-6", "--json", "--db", mixed)
    assert as_json.returncode == 0, as_json.stderr
    strict(as_json.stdout)


@pytest.mark.parametrize("fmt", ["json", "bmf", "gab", "csv", "prom"])
def test_every_export_of_the_whole_file_works(mixed, fmt):
    done = commscope("results", "export", "1-6", "--format", fmt, "--db", mixed)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    if fmt in ("json", "bmf", "gab"):
        strict(done.stdout)
    assert not re.search(r"\b(nan|inf)\b", done.stdout, re.IGNORECASE)


def test_report_of_the_whole_file_shows_the_failed_runs(mixed, tmp_path):
    done = commscope("report", "-o", tmp_path / "r.html", "--db", mixed)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "r.html").read_text()
    assert "/bin/echo hi" in page and "recorded nothing" in page
    assert "interrupted: nothing measured yet" in page


def test_sweep_and_study_lists_json_are_one_strict_document(fake_mpi, tmp_path):
    """The two --json outputs no other test reads: sweep's and study --list's (conftest
    reads every --json of the suite strictly; these make sure both are among them)."""
    plan = tmp_path / "plan.toml"
    plan.write_text('iters = 6\nlaunches = 2\n[[experiment]]\nkernel = "pingping"\n'
                    'sizes = "8,1K"\n')
    done = commscope("sweep", plan, "--json", "--db", tmp_path / "r.db", "--mpi", fake_mpi,
                     launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr
    assert strict(done.stdout)["schema"].startswith("urn:commscope:")
    listed = commscope("study", "--list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert strict(listed.stdout)["schema"].startswith("urn:commscope:")
