"""commscope under a real Slurm: slurmctld and a slurmd per host of the namespace cluster
(tests/cluster/slurm.py), runs through srun and through the MPI's own launcher inside an
allocation, and a sweep in an sbatch job cancelled with scancel and resumed in another."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from cluster import ClusterUnavailable, down, unavailable, up
from cluster.slurm import missing, start
from commscope.cli.health import LAUNCHES
from commscope.store.store import Store
from commscope.watch.points import watch_runs
from conftest import commscope

pytestmark = [pytest.mark.slurm, pytest.mark.cluster, pytest.mark.mpi]

RUN = [sys.executable, "-m", "commscope.cli"]
QUICK = ["--sizes", "8,1KiB", "--launches", "1", "--iters", "5"]


@pytest.fixture(scope="module")
def slurm():
    """Two hosts with Slurm, for the module: skipped only without root."""
    why = unavailable()
    if why:
        pytest.skip(why)
    gap = missing()
    if gap:  # as root, make test installs Slurm: its absence is a failure, not a skip
        pytest.fail(gap)
    try:
        cluster = up(2)
    except ClusterUnavailable as exc:
        pytest.skip(str(exc))
    try:
        made = start(cluster)
        try:
            yield made
        finally:
            made.stop()
    finally:
        down(cluster)


def stored_runs(db) -> list[tuple[dict, dict, dict]]:
    with sqlite3.connect(db) as con:
        return [(json.loads(s), json.loads(c or "{}"), json.loads(h or "{}")) for s, c, h in
                con.execute("SELECT settings, context, host_facts FROM runs ORDER BY id")]


def in_allocation(slurm, *argv, timeout=300):
    """argv inside `salloc` of both hosts, one task each, on the first host."""
    first = slurm.cluster.hosts[0]
    return slurm.run(first, ["salloc", "-N", "2", "--ntasks-per-node", "1", *argv],
                     timeout=timeout)


def test_a_run_through_srun_across_two_hosts(slurm, mpi_prefix, tmp_path):
    db = tmp_path / "results.db"
    done = in_allocation(slurm, *RUN, "run", "pingpong", "--np", "2", *QUICK, "--mpi",
                         mpi_prefix, "--db", db)
    assert done.returncode == 0, done.stderr
    ((settings, context, facts),) = stored_runs(db)
    assert settings["launcher"] == "srun"  # auto, inside an allocation
    assert sorted(context["hosts"]) == slurm.cluster.hosts  # a rank on each host
    allocation = facts["slurm"]
    assert allocation["nodes"] == "cscl-h[0-1]" and allocation["ntasks"] == 2
    assert allocation["job_id"].isdigit()
    # the PMI each wheel speaks: Open MPI 5 PMIx only, MPICH's wheel PMI-2
    assert allocation["pmi"] == ("pmix" if context["mpi_library"].startswith("Open MPI")
                                 else "pmi2")


def test_srun_places_the_ranks_in_the_order_of_hosts(slurm, mpi_prefix, tmp_path):
    """--hosts in reverse: rank 0 on the second host (srun's arbitrary distribution), as
    mpirun and hydra place them; a screen's pairs are its host order."""
    db = tmp_path / "results.db"
    first, second = slurm.cluster.hosts
    done = in_allocation(slurm, *RUN, "run", "pingpong", "--np", "2", "--hosts",
                         f"{second},{first}", *QUICK, "--mpi", mpi_prefix, "--db", db)
    assert done.returncode == 0, done.stderr
    ((settings, context, _),) = stored_runs(db)
    assert settings["launcher"] == "srun" and context["hosts"] == [second, first]


def test_health_inside_an_allocation_checks_its_nodes_through_srun(slurm, mpi_prefix, tmp_path):
    """`commscope health` without --hosts: the allocation's nodes, one task each by srun."""
    db = tmp_path / "results.db"
    done = in_allocation(slurm, *RUN, "health", "--sizes", "8,64KiB", "--mpi", mpi_prefix,
                         "--db", db, "--json")
    # two nodes cannot tell a slow node from a slow pair: undecided, exit 3 (usage.md)
    assert done.returncode == 3, done.stderr
    result = json.loads(done.stdout)
    # a launch in another state (a busy host's) is measured again in its place (launches.py,
    # _replacements): the count is the plan's, or more by those replaced
    assert sorted(result["nodes"]) == slurm.cluster.hosts and result["launches"] >= LAUNCHES
    assert result["matrix"]["bandwidth_MBps"][0][1] > 0 and result["drain"] == []
    assert "2 nodes" in result["note"]  # a pair alone cannot be told from a node
    ((settings, _, facts),) = stored_runs(db)
    assert settings["launcher"] == "srun" and settings["ppn"] == 1
    assert facts["slurm"]["num_nodes"] == 2


def test_more_ranks_than_the_allocation_offers_are_refused(slurm, mpi_prefix, tmp_path):
    db = tmp_path / "results.db"
    done = in_allocation(slurm, *RUN, "run", "pingpong", "--np", "4", *QUICK, "--mpi",
                         mpi_prefix, "--db", db)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.startswith("commscope:")]
    assert len(lines) == 1 and "--np 4: Slurm job" in lines[0] and "offers 2 tasks" in lines[0]
    assert not db.exists() or stored_runs(db) == []  # refused before launching


def test_a_run_with_the_mpis_own_launcher_inside_an_allocation(slurm, mpi_prefix, tmp_path):
    """mpirun (PRRTE) and hydra's mpiexec find the allocation themselves and start their
    daemons with srun: the ranks land on both hosts."""
    db = tmp_path / "results.db"
    done = in_allocation(slurm, *RUN, "run", "pingpong", "--launcher", "mpi", "--np", "2",
                         *QUICK, "--mpi", mpi_prefix, "--db", db)
    assert done.returncode == 0, done.stderr
    ((settings, context, facts),) = stored_runs(db)
    assert sorted(context["hosts"]) == slurm.cluster.hosts
    assert facts["slurm"]["launcher"] in ("mpirun", "mpiexec") and "pmi" not in facts["slurm"]


SWEEP = """
name = "under-slurm"
launches = 1
min_time = 0.2
[[experiment]]
kernel = "pingpong"
sizes = "0:64KiB"
"""
BATCH = """#!/bin/sh
#SBATCH --nodes=2 --ntasks-per-node=1 --output={out}
exec {python} -m commscope.cli sweep {plan} {resume} --mpi {mpi} --db {db}
"""


def _sbatch(slurm, tmp_path, name, mpi_prefix, resume=""):
    script = tmp_path / f"{name}.sh"
    script.write_text(BATCH.format(out=tmp_path / f"{name}.out", python=sys.executable,
                                   plan=tmp_path / "plan.toml", resume=resume, mpi=mpi_prefix,
                                   db=tmp_path / "results.db"))
    done = slurm.run(slurm.cluster.hosts[0], ["sbatch", "--parsable", str(script)])
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split(";")[0]


def _wait_gone(slurm, job, limit=180):
    deadline = time.monotonic() + limit
    while slurm.run(slurm.cluster.hosts[0], ["squeue", "-h", "-j", job]).stdout.strip():
        assert time.monotonic() < deadline, f"job {job} did not end"
        time.sleep(0.5)


def test_a_cancelled_sbatch_sweep_keeps_its_cases_and_resumes(slurm, mpi_prefix, tmp_path):
    (tmp_path / "plan.toml").write_text(SWEEP)
    db = tmp_path / "results.db"
    job = _sbatch(slurm, tmp_path, "first", mpi_prefix)
    deadline = time.monotonic() + 120
    while True:
        try:
            with sqlite3.connect(db) as con:
                if con.execute("SELECT count(*) FROM cases").fetchone()[0] >= 3:
                    break
        except sqlite3.OperationalError:
            pass  # not made yet
        assert time.monotonic() < deadline, (tmp_path / "first.out").read_text()
        time.sleep(0.2)
    assert slurm.run(slurm.cluster.hosts[0], ["scancel", job]).returncode == 0
    _wait_gone(slurm, job)
    with sqlite3.connect(db) as con:
        (status,) = con.execute("SELECT status FROM runs").fetchone()
        kept = con.execute("SELECT count(*) FROM cases").fetchone()[0]
    assert status == "interrupted", (tmp_path / "first.out").read_text()
    assert 3 <= kept < 18

    job = _sbatch(slurm, tmp_path, "second", mpi_prefix, resume="--resume")
    _wait_gone(slurm, job)
    with sqlite3.connect(db) as con:
        sizes = [n for (n,) in con.execute("SELECT bytes FROM cases ORDER BY bytes")]
    # every size once: none lost to the cancel, none measured twice by the resume
    assert sizes == [0] + [1 << i for i in range(17)], (tmp_path / "second.out").read_text()


def scron_entry() -> tuple[list[str], str]:
    """docs/watch.md's scrontab entry: its #SCRON options and the command its cron line
    runs (after the five time fields)."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "watch.md").read_text()
    lines = [line.strip() for line in text[text.index("#SCRON"):].splitlines()[:3]]
    options = [o for line in lines if line.startswith("#SCRON") for o in line.split()[1:]]
    [cron] = [line for line in lines if line and not line.startswith("#")]
    return options, cron.split(maxsplit=5)[5]


SCRON_JOB = """#!/bin/sh
#SBATCH {options} --output={out}
commscope() {{ {python} -m commscope.cli "$@"; }}
export HOME={home} PATH={mpi}/bin:$PATH
cd {home}
{command}
"""


@pytest.mark.parametrize("mpi_prefix", ["openmpi"], indirect=True)
def test_the_docs_scrontab_entry_probes_in_its_allocation(slurm, mpi_prefix, tmp_path):
    """The scrontab entry of docs/watch.md, fired twice: scrontab submits its command as a
    batch job with the #SCRON options, which are sbatch's (Slurm's scrontab(1)). Debian's
    Slurm ships no scrontab command, so the test submits that job with sbatch, as the
    cron time would. One MPI: what a probe does under srun is the runs' tests above."""
    options, command = scron_entry()
    assert commscope("watch", "--default", tmp_path / "probe.toml").returncode == 0
    for firing in (1, 2):
        script = tmp_path / f"scron{firing}.sh"
        script.write_text(SCRON_JOB.format(options=" ".join(options), python=sys.executable,
                                           out=tmp_path / f"scron{firing}.out", home=tmp_path,
                                           mpi=mpi_prefix, command=command))
        done = slurm.run(slurm.cluster.hosts[0], ["sbatch", "--parsable", str(script)])
        assert done.returncode == 0, done.stderr
        _wait_gone(slurm, done.stdout.strip().split(";")[0])
    found = watch_runs(Store(tmp_path / "fleet.db"), "probe")
    assert [n for n, _ in found] == [1, 2], (tmp_path / "scron2.out").read_text()
    for _, runs in found:
        assert all(r.status == "complete" and r.settings["launcher"] == "srun" for r in runs)
        assert all(sorted(r.context["hosts"]) == slurm.cluster.hosts for r in runs)
