"""Faults injected at random moments: the command killed by each stop signal, a rank killed
or stopped, a full disk, a read-only and a damaged results file.

After each: no process of the run is left (every process that inherited the trial's tag
in its environment is gone), every case the ranks finished and wrote is in the store
(checked against the records they wrote, kept with COMMSCOPE_KEEP_TMP), the file passes
PRAGMA integrity_check, no run is left `running`, and what the command said is one clear
line without a traceback.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from cluster import virtual_cluster  # noqa: F401  (the fixture)
from conftest import commscope, one_line_error
from fakempi.inprocess import FakeLauncher
from test_interrupted import native_ranks, wait_for_cases

TAG = "COMMSCOPE_FAULT_TRIAL"
SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
TRIALS = 12  # per MPI: 24 seeded moments over set-up, launch, sampling and ingest
# The moments: the command's start (imports, plan, results file) takes ~0.3 s and its
# first launch's start ~0.2 s more; by 2.5 s four or five cases are stored.
LATEST_S = 2.5
# Runs far longer than a stop takes: a job left behind would still be measuring when
# none_left gives up. RUN: 0.4 s to start, then two launches of 18 cases of 0.5 s.
RUN = ["run", "pingpong", "--sizes", "0:64KiB", "--launches", "2", "--min-time", "0.5"]
LONG_RUN = ["run", "pingpong", "--sizes", "0:1MiB", "--min-time", "0.5"]
STOPPED_WITHIN_S = 7.0  # the launcher's SIGTERM grace (measure.STOP_GRACE_S), and 2 s
root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small or read-only "
                          "filesystem needs root")


def tagged(tag: str) -> list[int]:
    """The processes that carry the trial's tag: the command, its launcher, its ranks."""
    needle = f"{TAG}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def none_left(tag: str, limit: float = STOPPED_WITHIN_S) -> None:
    """Every tagged process ends within `limit` s of the command's end."""
    deadline = time.monotonic() + limit
    while (left := tagged(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, [Path(f"/proc/{p}/cmdline").read_bytes() for p in left]


def start(args, db, tmp: Path, tag: str, mpi_prefix=None) -> subprocess.Popen:
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, TAG: tag, "TMPDIR": str(tmp), "COMMSCOPE_KEEP_TMP": "1"}
    more = ["--mpi", str(mpi_prefix)] if mpi_prefix else []
    return subprocess.Popen([sys.executable, "-m", "commscope.cli", *args, *more, "--db",
                             str(db)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL,
                            # as a terminal delivers Ctrl-C (test_interrupted.interruptible)
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def emitted_in_order(tmp: Path) -> list[tuple]:
    """The cases the ranks finished, in the order they finished: each whole case line in the
    launches' records files."""
    found = []
    for records in sorted(tmp.glob("commscope-*/records.jsonl"), key=lambda p: p.stat().st_mtime):
        for line in records.read_text().splitlines(keepends=True):
            rec = json.loads(line) if line.endswith("\n") and line.startswith("{") else {}
            if rec.get("type") == "case":
                found.append((rec.get("send_mode"), rec["bytes"], len(rec["samples_s"])))
    return found


def emitted(tmp: Path) -> Counter:
    return Counter(emitted_in_order(tmp))


def stored(db: Path) -> Counter:
    if not db.exists():
        return Counter()
    con = sqlite3.connect(db)
    return Counter(con.execute("SELECT send_mode, bytes, n FROM cases").fetchall())


def whole_and_ended(db: Path) -> list[str]:
    """The file passes integrity_check, and once a writing command has recovered it (ending
    runs whose command is gone, with their orphans: `results recover`) no run is
    `running`: the runs' statuses as `results list` shows them."""
    if not db.exists():
        return []
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    con.close()
    done = commscope("results", "recover", "--db", db)
    assert done.returncode == 0, done.stderr
    done = commscope("results", "list", "--json", "--db", db)
    if done.returncode == 2 and "no runs stored" in done.stderr:
        return []
    assert done.returncode == 0, done.stderr
    statuses = [r["status"] for r in json.loads(done.stdout)["runs"]]
    assert "running" not in statuses
    return statuses


def one_clear_line(err: str) -> None:
    assert "Traceback" not in err, err
    ours = [line for line in err.splitlines() if line.startswith("commscope: ")]
    assert len(ours) <= 2, err  # the run's own line, and a sweep's --resume hint


def test_every_stop_signal_at_random_moments(mpi_prefix, tmp_path):
    rng = random.Random(f"issue 15 {mpi_prefix.name}")
    seen = Counter()
    for trial in range(TRIALS):
        signum, at = rng.choice(SIGNALS), rng.uniform(0.0, LATEST_S)
        tag, db, tmp = f"{os.getpid()}-{trial}", tmp_path / f"{trial}.db", tmp_path / str(trial)
        proc = start(RUN, db, tmp, tag, mpi_prefix)
        time.sleep(at)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)
        what = f"trial {trial}: {signal.Signals(signum).name} at {at:.2f} s"
        if signum == signal.SIGKILL:
            assert proc.returncode in (0, -signal.SIGKILL), what  # 0: it ended first
        elif proc.returncode == -signum:  # before Python's handlers, or after (at its exit)
            assert whole_and_ended(db) in ([], ["complete"]), what
        else:
            assert proc.returncode in (0, 128 + signum), (what, proc.returncode, err)
            one_clear_line(err)
            if proc.returncode:
                assert f"by {signal.Signals(signum).name}" in err, (what, err)
        none_left(tag)
        statuses = whole_and_ended(db)  # a command that opens the file adopts the orphans
        assert stored(db) == emitted(tmp), what
        print(what, proc.returncode, statuses, sum(stored(db).values()), "cases")
        seen[(signal.Signals(signum).name, "stopped" if proc.returncode else "ended first",
              statuses[0] if statuses else "before the store")] += 1
    print(dict(seen))


@pytest.mark.parametrize("fault", ["kill", "stop"])
def test_a_rank_killed_or_stopped(mpi_prefix, tmp_path, fault):
    tag, db, tmp = "rank-" + fault, tmp_path / "results.db", tmp_path / "tmp"
    args = LONG_RUN + ["--timeout", "4"] if fault == "stop" else LONG_RUN
    proc = start(args, db, tmp, tag, mpi_prefix)
    wait_for_cases(db, 2, proc)
    rank = max(native_ranks(proc.pid))
    os.kill(rank, signal.SIGKILL if fault == "kill" else signal.SIGSTOP)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    one_clear_line(err)
    none_left(tag)
    assert whole_and_ended(db) == ["failed"]
    assert stored(db) == emitted(tmp)


def mount_tmpfs(where: Path, size: str) -> None:
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                   check=True)


@pytest.fixture
def small_disk(tmp_path):
    disk = tmp_path / "disk"
    mount_tmpfs(disk, "2m")  # a few cases of the run below: ~0.1-0.7 MB each
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


@root
def test_a_disk_that_fills_mid_run(mpi_prefix, tmp_path, small_disk):
    db, tmp = small_disk / "results.db", tmp_path / "tmp"
    proc = start(LONG_RUN, db, tmp, "full-disk", mpi_prefix)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    line = [line for line in err.splitlines() if line.startswith("commscope: ")]
    assert len(line) == 1 and "Traceback" not in err, err
    assert "database or disk is full" in line[0] and "free space" in line[0]
    none_left("full-disk")
    kept = tmp_path / "kept"  # the file as it was left, on a disk with room
    kept.mkdir()
    for part in small_disk.glob("results.db*"):
        (kept / part.name).write_bytes(part.read_bytes())
    kept_db = kept / "results.db"
    found = stored(kept_db)
    assert found and not found - emitted(tmp)  # every case stored is a finished one
    # None lost before the disk refused a case: the cases not stored are that one and those
    # the ranks finished while the job was being stopped (CI saw 2), the tail of the order.
    order = emitted_in_order(tmp)
    kept_flags = [case in found for case in order]
    assert kept_flags == sorted(kept_flags, reverse=True), order
    assert whole_and_ended(kept_db) == ["interrupted (process gone)"]


def fake_runs(fake_mpi, db, count: int) -> None:
    for _ in range(count):
        done = commscope("run", "pingpong", "--sizes", "8,1K", "--iters", "5", "--mpi",
                         fake_mpi, "--db", db, launcher=FakeLauncher())
        assert done.returncode == 0, done.stderr


@root
def test_a_read_only_results_file(fake_mpi, tmp_path):
    disk = tmp_path / "ro"
    mount_tmpfs(disk, "4m")
    try:
        db = disk / "results.db"
        fake_runs(fake_mpi, db, 1)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        line = one_line_error(commscope("run", "pingpong", "--mpi", fake_mpi, "--db", db))
        assert "read-only" in line and "another --db" in line
        listed = commscope("results", "list", "--db", db)
        assert listed.returncode == 0 and "complete" in listed.stdout, listed.stderr
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_damaged_results_file(fake_mpi, tmp_path):
    """One line naming what still reads; its export command runs as printed, from a
    path with a space in it."""
    db = tmp_path / "my results" / "r.db"
    db.parent.mkdir()
    fake_runs(fake_mpi, db, 3)
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = con.execute("PRAGMA page_count").fetchone()[0]
        page = con.execute("PRAGMA page_size").fetchone()[0]
        # the page that holds the last case's samples: run 3 is damaged, runs 1-2 are not
        last = con.execute("SELECT max(rowid) FROM cases").fetchone()[0]
    with open(db, "r+b") as f:
        f.seek((pages - 1) * page)
        f.write(b"\xa5" * page)
    line = one_line_error(commscope("run", "pingpong", "--mpi", fake_mpi, "--db", db))
    assert "damaged" in line and "another --db" in line, line
    assert "results show 1-2 --json" in line and last  # run 3's samples are damaged
    printed = shlex.split(line.partition("`")[2].partition("`")[0])
    export = commscope(*printed[1:])
    assert export.returncode == 0 and json.loads(export.stdout)["cases"], export.stderr
    report = commscope("report", "--db", db, "-o", db.parent / "r.html")
    assert report.returncode != 0 and "Traceback" not in report.stderr, report.stderr
    assert len(report.stderr.strip().splitlines()) == 1, report.stderr


PLAN = """
name = "locked"
launches = 1
min_time = 0.2
[[experiment]]
kernel = "pingpong"
sizes = "0:64KiB"
"""


def test_a_sweep_is_held_by_one_command(mpi_prefix, tmp_path):
    plan, db = tmp_path / "plan.toml", tmp_path / "results.db"
    plan.write_text(PLAN)
    first = start(["sweep", str(plan)], db, tmp_path / "tmp", "sweep-lock", mpi_prefix)
    wait_for_cases(db, 2, first)
    line = one_line_error(commscope("sweep", plan, "--resume", "--db", db, "--mpi", mpi_prefix))
    assert f"is being run by pid {first.pid}" in line, line
    first.kill()  # its hold ends with it
    first.communicate(timeout=60)
    none_left("sweep-lock")
    done = commscope("sweep", plan, "--resume", "--db", db, "--mpi", mpi_prefix)
    assert done.returncode == 0, done.stderr
    assert whole_and_ended(db) == ["interrupted (process gone)", "complete"]
    sizes = [b for (b,) in sqlite3.connect(db).execute("SELECT bytes FROM cases ORDER BY bytes")]
    assert sizes == [0] + [1 << i for i in range(17)]  # every size once: none lost, none twice


def test_a_dead_commands_folder_is_removed_by_the_next(mpi_prefix, tmp_path):
    db, tmp = tmp_path / "results.db", tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "commscope.cli", *LONG_RUN, "--mpi",
                             str(mpi_prefix), "--db", str(db)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_cases(db, 2, proc)
    proc.kill()
    proc.wait()
    assert len(list(tmp.glob("commscope-*"))) == 1  # SIGKILL: nobody could remove it
    done = commscope("run", "pingpong", "--sizes", "8", "--iters", "5", "--launches", "1",
                     "--mpi", mpi_prefix, "--db", db, env=env)
    assert done.returncode == 0, done.stderr
    assert not list(tmp.glob("commscope-*"))
    assert whole_and_ended(db) == ["interrupted (process gone)", "complete"]


@pytest.mark.mpi
def test_a_launcher_that_hangs_after_its_ranks_finished(tmp_path):
    """A stopped mpirun: the ranks measure every case, write their end and wait in
    MPI_Finalize for a launcher that never answers."""
    db, tmp = tmp_path / "results.db", tmp_path / "tmp"
    proc = start(["run", "pingpong", "--sizes", "0:4KiB", "--iters", "200", "--launches", "1"],
                 db, tmp, "hung-launcher")
    wait_for_cases(db, 1, proc)
    os.kill(launcher_of("hung-launcher"), signal.SIGSTOP)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "every rank finished, but the launcher had not exited" in err
    none_left("hung-launcher")
    assert whole_and_ended(db) == ["complete"]
    assert stored(db) == emitted(tmp) and sum(stored(db).values()) == 14


@pytest.mark.parametrize("args, env, says", [
    (["--sizes", ""], {}, "--sizes: no sizes given"),
    (["--np", "100000"], {}, "--np 100000: this host offers"),
    (["--timeout", "1", "--max-time", "3"], {}, "--timeout 1.0: a case may sample for "
                                                "--max-time 3 s"),
    (["--sizes", "8"], {"TMPDIR": "/nonexistent/tmp"}, "TMPDIR /nonexistent/tmp: cannot create"),
])
def test_what_cannot_work_is_refused_before_launching(fake_mpi, db, args, env, says):
    line = one_line_error(commscope("run", "pingpong", *args, "--mpi", fake_mpi, "--db", db,
                                    env={**os.environ, **env}))
    assert says in line, line
    assert not sqlite3.connect(db).execute(
        "SELECT count(*) FROM sqlite_master WHERE name = 'runs'").fetchone()[0] or \
        not sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0]


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_remote_ranks_end_with_the_command(virtual_cluster, mpi_prefix, tmp_path, signum):
    """The command on host a, a rank on host b started through the cluster's agent (as ssh
    would): b's daemon and rank end too."""
    a, b = virtual_cluster.hosts
    db, tag = tmp_path / "results.db", f"remote-{signum}"
    env = virtual_cluster.mpi_env({**os.environ, TAG: tag, "TMPDIR": str(tmp_path),
                                   "COMMSCOPE_KEEP_TMP": "1"})
    proc = subprocess.Popen(virtual_cluster.command(a, [
        sys.executable, "-m", "commscope.cli", *LONG_RUN, "--mpi", mpi_prefix, "--hosts",
        f"{a}:1,{b}:1", "--db", db]), env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for_cases(db, 2, proc)
    assert len(tagged(tag)) > 3  # the command, the launcher, the agent's chain, two ranks
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == (-signum if signum == signal.SIGKILL else 128 + signum), err
    none_left(tag)
    # Only a command on a's host can tell that a's command is gone; here it sees to that.
    seen = virtual_cluster.run(a, [sys.executable, "-m", "commscope.cli", "results", "recover",
                                   "--db", db])
    assert seen.returncode == 0, seen.stderr
    assert whole_and_ended(db) == ["interrupted (process gone)" if signum == signal.SIGKILL
                                   else "interrupted"]
    assert stored(db) == emitted(tmp_path)


def launcher_of(tag: str) -> int:
    found = [p for p in tagged(tag) if Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[0]
             .endswith((b"mpirun", b"prterun", b"mpiexec", b"mpiexec.hydra"))]
    assert found, "no launcher found"
    return found[0]


@pytest.mark.parametrize("signals", [1, 2, 3])
def test_a_second_ctrl_c_ends_at_once(mpi_prefix, tmp_path, signals):
    """A launcher that does not end on SIGTERM (stopped here) is given 5 s, then killed;
    a second Ctrl-C cuts the 5 s short, and still prints no traceback; a third ends the
    command from the signal handler, the job killed, and a later command recovers the
    run with every case its ranks wrote."""
    db, tag = tmp_path / "results.db", f"twice-{signals}"
    proc = start(LONG_RUN, db, tmp_path / "tmp", tag, mpi_prefix)
    wait_for_cases(db, 2, proc)
    os.kill(launcher_of(tag), signal.SIGSTOP)
    began = time.monotonic()
    proc.send_signal(signal.SIGINT)
    if signals > 1:
        time.sleep(0.5)
        # A third at once (as Ctrl-C pressed in a row; signals of one kind pending together
        # are delivered once, so the later two are other stop signals)
        for later in (signal.SIGTERM, signal.SIGHUP)[:signals - 1]:
            proc.send_signal(later)
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - began
    assert proc.returncode == 130, err
    one_clear_line(err)
    assert took < 3 if signals > 1 else took > 5, took
    none_left(tag)
    if signals < 3:
        assert "interrupted by SIGINT" in err
        assert whole_and_ended(db) == ["interrupted"]
    else:
        assert whole_and_ended(db) == ["interrupted (process gone)"]
    assert stored(db) == emitted(tmp_path / "tmp")
