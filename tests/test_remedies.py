"""Every command a refusal prints in backticks runs as printed (system.errors.to_run): each
refusal below is made on the fake launcher, and each of its commands is run from the same
folder and environment, as the user would paste it. A command that is refused again
(exit 2) is a remedy that does not work."""

from __future__ import annotations

import ast
import os
import re
import shlex
from pathlib import Path

import pytest

from conftest import commscope, one_line_error
from fakempi.inprocess import FakeLauncher

SRC = Path(__file__).parents[1] / "src" / "commscope"
DATA = Path(__file__).parent / "data"
HOSTS = [f"h{i}" for i in range(6)]


def run(*args):
    return commscope(*args, launcher=FakeLauncher())


def measured(db, kernel="pingpong"):
    assert run("run", kernel, "--sizes", "8", "--launches", "1", "--db", db).returncode == 0


def missing_db(db):
    return run("results", "show", "1", "--db", db)


def missing_run(db):
    measured(db)
    return run("results", "show", "9", "--db", db)


def no_runs(db):
    from commscope.store.store import Store
    Store(db).close()
    return run("fit", "--db", db)


def no_match(db):
    measured(db)
    measured(db, "bw")
    return run("compare", "1", "2", "--db", db)


def no_such_sweep(db):
    measured(db)
    return run("report", "--sweep", "4", "-o", "r.html", "--db", db)


def no_watch(db):
    measured(db)
    return run("results", "history", "all", "--db", db)


def no_kernel_cases(db):
    measured(db)
    return run("fit", "1", "--kernel", "bw", "--db", db)


def unknown_guideline(db):
    return run("check", "pingpong:nope", "--db", db)


def no_guideline(db):
    return run("check", "--db", db)


def unknown_study(db):
    return run("study", "nope", "-o", "out", "--db", db)


def an_application(db):
    return run("run", "advection2d", "--db", db)


def no_plan(db):
    return run("watch", "--db", db)


def no_point(db):
    """Every algorithm's case refused: the fake's algorithms take every size, so its
    choice is made empty."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("commscope.cli.tune.choose", lambda *args: {})
        return run("tune", "allreduce", "--np", "2", "--sizes", "8", "--launches", "1",
                   "--db", db)


def oversubscribed(db):
    over = len(os.sched_getaffinity(0)) + 1
    return run("run", "pingpong", "--np", over, "--sizes", "8", "--launches", "1", "--db", db)


def unpriced_profile(db):
    report = DATA / "profiles" / "mpip-3.5-halo-np8.txt"
    assert run("import", report, "--db", db).returncode == 0
    return run("predict", "--profile", "1", "--db", db)


def unsteady_hosts(db):
    """A launch of the matrix hangs with h1, and so does one without it: the hosts are
    unsteady (health.preflight.check_hosts)."""
    def hangs(hosts):
        return "h1" in hosts or len(hosts) == len(HOSTS) - 1
    return commscope("health", "--hosts", ",".join(HOSTS), "--sizes", "8", "--launches", "2",
                     "--deadline", "0.5", "--db", db,
                     launcher=FakeLauncher(host_order=HOSTS, hangs_if=hangs))


# Each refusal, and where in src its remedy is built (file: the function that calls to_run).
REFUSALS = {
    missing_db: "cli/common.py:existing_store",
    missing_run: "store/store.py:_run_row",
    no_runs: "store/store.py:latest_command_runs",
    no_match: "cli/compare.py:run",
    no_such_sweep: "cli/report.py:chosen_runs",
    no_watch: "cli/results.py:_history",
    no_kernel_cases: "models/groups.py:fit_runs",
    unknown_guideline: "judge/guidelines.py:find",
    no_guideline: "cli/check.py:run",
    unknown_study: "cli/study.py:run",
    an_application: "system/kernels.py:runnable",
    no_plan: "cli/watch.py:run",
    no_point: "cli/tune.py:_tune",
    oversubscribed: "system/launcher/placement.py:_check_oversubscription",
    unpriced_profile: "profiles/price.py:commands",
    unsteady_hosts: "health/preflight.py:check_hosts",
}
# Remedies printed elsewhere than a refusal, or run by the test of their fault
ELSEWHERE = {
    "store/store.py:_damaged": "test_fault_matrix.py::test_a_damaged_results_file",
    "cli/sweep.py:run": "a stopped sweep's --resume: below",
    "cli/watch.py:run:default": "watch --default's next step: below",
}


def remedies(line: str) -> list[list[str]]:
    return [shlex.split(m) for m in re.findall(r"`(commscope [^`]+)`", line)]


@pytest.fixture
def where(fake_mpi, tmp_path, monkeypatch):
    """A folder with a space in its name, the fake MPI found by COMMSCOPE_MPI, and no
    standing leave to oversubscribe: the remedy must say so itself."""
    folder = tmp_path / "my results"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("COMMSCOPE_MPI", str(fake_mpi))
    monkeypatch.delenv("COMMSCOPE_OVERSUBSCRIBE", raising=False)
    return folder


@pytest.mark.parametrize("refusal", REFUSALS, ids=lambda f: f.__name__)
def test_each_remedy_runs_as_printed(refusal, where):
    db = where / "r 1.db"
    line = one_line_error(refusal(str(db)))
    found = remedies(line)
    assert found, line
    for words in found:
        assert words[0] == "commscope"
        if "--db" in words:  # the file the refusal read, however it was spelled
            assert Path(words[words.index("--db") + 1]).resolve() == db.resolve(), line
        done = commscope(*words[1:], launcher=FakeLauncher())
        assert done.returncode in (0, 1, 3), (line, words, done.stderr)
        assert "Traceback" not in done.stderr


def test_watch_default_s_next_step_runs_as_printed(where):
    line = one_line_error(run("watch", "--db", "r.db"))
    (default,) = remedies(line)
    done = commscope(*default[1:])
    assert done.returncode == 0, done.stderr
    (again,) = remedies(done.stderr)
    assert again[:2] == ["commscope", "watch"] and "--db" in again
    done = commscope(*again[1:], "--once", launcher=FakeLauncher())
    assert done.returncode in (0, 1, 3), done.stderr


def test_a_stopped_sweep_s_resume_runs_as_printed(where):
    plan = where / "my plan.toml"
    plan.write_text('launches = 1\n[[experiment]]\nkernel = "pingpong"\nsizes = "8,1KiB"\n'
                    '[[experiment]]\nkernel = "bw"\nsizes = "8"\n')
    done = commscope("sweep", plan, "--db", "r 1.db", launcher=FakeLauncher(fail_after=1))
    assert done.returncode == 1, done.stderr
    (again,) = remedies(done.stderr)
    assert "--resume" in again and again[-2:] == ["--db", "r 1.db"], again
    done = commscope(*again[1:], launcher=FakeLauncher())
    assert done.returncode == 0, done.stderr


def remedy_sites() -> set[str]:
    """Where src builds a remedy (each call of to_run): 'file:function'."""
    sites = set()
    for path in set(SRC.rglob("*.py")) - {SRC / "system" / "errors.py"}:
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, ast.Call) and \
                            getattr(node.func, "id", "") in ("to_run", "shell_line"):
                        sites.add(f"{path.relative_to(SRC)}:{fn.name}")
    return sites


def test_every_remedy_site_is_run_by_a_test():
    """A refusal's remedy built anywhere in src is made and run above (or by the test of
    its fault); a backticked commscope command not built by to_run is not a remedy."""
    covered = set(REFUSALS.values()) | {":".join(s.split(":")[:2]) for s in ELSEWHERE}
    assert remedy_sites() <= covered, remedy_sites() - covered
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "UserError":
                text = ast.unparse(node)
                assert "`commscope" not in text, (path, text)
