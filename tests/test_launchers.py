"""Launchers across hosts: host specs, argv per launcher (mpirun, hydra, srun), refusals,
pair provenance.

Pure functions: srun is not installed here, and none of these launch anything.
"""

from pathlib import Path

import pytest

from commscope.measure import sweep
from commscope.system.errors import UserError
from commscope.system.launcher import (Placement, check_placement, cores, hosts_from, launch,
                                       parse_hosts, read_hostfile, resolve_launcher)
from commscope.system.launcher.commands import srun
from commscope.system.mpi import Mpi, find_mpi
from commscope.system.provenance import rank_pairs, shm_allowed
from conftest import EMBEDDED, commscope, one_line_error

OPEN_MPI = Mpi("openmpi", Path("/opt/ompi/bin/mpicc"), Path("/opt/ompi/bin/mpirun"), "", "test")
MPICH = Mpi("mpich", Path("/opt/mpich/bin/mpicc"), Path("/opt/mpich/bin/mpiexec"), "", "test")
BINARY = Path("/cache/commscope-native")


def argv(mpi, ranks, **placement):
    return launch(mpi, ranks, BINARY, ["--kernel", "bw"], Placement(**placement)).argv


def test_hosts_take_slots_from_the_colon_or_ppn():
    assert parse_hosts("a:2,b:3").spec() == "a:2,b:3"
    assert parse_hosts("node-1.example,10.0.0.7", ppn=4).spec() == "node-1.example:4,10.0.0.7:4"
    assert parse_hosts("a,b").slots == (1, 1)
    hosts = parse_hosts("a:2,b:2")
    assert hosts.ranks_per_host(3) == {"a": 2, "b": 1}
    assert hosts.ranks_per_host(3, round_robin=True) == {"a": 2, "b": 1}
    assert parse_hosts("a:3,b:1").ranks_per_host(3, round_robin=True) == {"a": 2, "b": 1}


@pytest.mark.parametrize("spec, ppn, says", [
    ("", None, "--hosts: no hosts given"),
    ("a,,b", None, "--hosts a,,b: empty host name"),
    ("a:0", None, "--hosts a:0: '0' is not a number of slots"),
    ("a:two", None, "'two' is not a number of slots"),
    ("-oversubscribe:2", None, "'-oversubscribe' is not a host name"),
    ("a;reboot:1", None, "'a;reboot' is not a host name"),
    ("a:2,a:1", None, "host a is listed twice"),
    ("a:3,b", 2, "a:3 disagrees with --ppn 2"),
    ("a", 0, "--ppn 0: give at least 1 rank per host"),
])
def test_bad_host_specs_name_the_flag(spec, ppn, says):
    with pytest.raises(UserError) as err:
        parse_hosts(spec, ppn)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_hostfile_takes_both_libraries_forms(tmp_path):
    f = tmp_path / "hosts"
    f.write_text("# cluster\nnode1 slots=2\nnode2:2   # MPICH's form\n\nnode3\n")
    assert read_hostfile(str(f)).spec() == "node1:2,node2:2,node3:1"
    assert read_hostfile(str(f), ppn=2).spec() == "node1:2,node2:2,node3:2"
    f.write_text("node1 max_slots=4\n")
    with pytest.raises(UserError, match=r"line 1: 'max_slots=4' not understood"):
        read_hostfile(str(f))
    with pytest.raises(UserError, match=r"--hostfile .*missing: cannot read it"):
        read_hostfile(str(tmp_path / "missing"))
    with pytest.raises(UserError, match="give the hosts once"):
        hosts_from("a:1", str(f), None)


def test_mpirun_gets_hosts_and_leaves_loopback_out_across_hosts():
    two = parse_hosts("a:2,b:2")
    assert argv(OPEN_MPI, 4, hosts=two, transport="tcp", launcher="mpi") == [
        "/opt/ompi/bin/mpirun", "-np", "4", "--host", "a:2,b:2", "--mca", "pml", "ob1",
        "--mca", "btl", "self,tcp", str(BINARY), "--kernel", "bw"]
    # Two ranks fill the first host: TCP is then loopback, which Open MPI must be told to use.
    assert argv(OPEN_MPI, 2, hosts=two, transport="tcp")[-5:-3] == ["btl_tcp_if_include", "lo"]
    assert "--oversubscribe" not in argv(OPEN_MPI, 4, hosts=parse_hosts("a,b,c,d"))


def test_mpiexec_gets_hosts_and_placement():
    assert argv(MPICH, 3, hosts=parse_hosts("a,b", ppn=2), map_by="core", bind_to="core") == [
        "/opt/mpich/bin/mpiexec", "-n", "3", "-hosts", "a:2,b:2", "-map-by", "core",
        "-bind-to", "core", str(BINARY), "--kernel", "bw"]


def test_srun_translation():
    p = Placement(map_by="node", bind_to="core", transport="tcp",
                  hosts=parse_hosts("a,b,c", ppn=2), ppn=2, launcher="srun")
    args, env = srun("openmpi", p, 4, False, environ={})
    assert args == ["--ntasks", "4", "--nodes", "3", "--nodelist", "a,b,c",
                    "--ntasks-per-node", "2", "--distribution", "cyclic", "--cpu-bind", "cores",
                    "--mpi", "pmix"]
    assert env == {"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,tcp"}
    # Filling in order, 2 ranks need only the first node; the site's PMI choice wins where
    # this MPI speaks it: an MPICH configured --with-pmix does, the wheel's does not.
    p = Placement(map_by="socket", hosts=parse_hosts("a:2,b:2"), launcher="srun")
    args, env = srun("mpich", p, 2, False, environ={"SLURM_MPI_TYPE": "pmix_v4"},
                     version_text="Configure options: --with-pmix=/usr")
    assert args == ["--ntasks", "2", "--nodes", "1", "--nodelist", "a", "--ntasks-per-node", "2",
                    "--distribution", "block:cyclic"]
    # no --map-by: the ranks in --hosts' order, not Slurm's (a screen's pairs are its order)
    p = Placement(hosts=parse_hosts("c:2,a:1,b:2"), launcher="srun")
    args, _ = srun("mpich", p, 4, False, environ={"SLURM_MPI_TYPE": "pmi2"})
    assert args == ["--ntasks", "4", "--nodes", "3", "--distribution", "arbitrary",
                    "--nodelist", "c,c,a,b"]
    for family, site, says in (("mpich", "pmix", "with --mpi=pmi2 only"),
                               ("openmpi", "pmi2", "with --mpi=pmix only")):
        with pytest.raises(UserError, match=f"SLURM_MPI_TYPE={site}: this .* starts under srun "
                                            f"{says}; unset SLURM_MPI_TYPE"):
            srun(family, p, 2, False, environ={"SLURM_MPI_TYPE": site},
                 version_text="Configure options: --with-device=ch4:ofi")
    args, env = srun("mpich", Placement(transport="tcp", ppn=8, launcher="srun"), 16, False,
                     environ={})
    assert args == ["--ntasks", "16", "--ntasks-per-node", "8", "--mpi", "pmi2"]
    assert env["MPIR_CVAR_NOLOCAL"] == "1"


def test_launcher_choice():
    assert resolve_launcher("auto", OPEN_MPI, environ={},
                            which=lambda _: "/usr/bin/srun") == "mpirun"
    assert resolve_launcher("auto", MPICH, environ={"SLURM_JOB_ID": "7"},
                            which=lambda _: "/usr/bin/srun") == "srun"
    # In an allocation without srun on PATH, the MPI's own launcher still works.
    assert resolve_launcher("auto", MPICH, environ={"SLURM_JOB_ID": "7"},
                            which=lambda _: None) == "mpiexec"
    with pytest.raises(UserError, match="--launcher srun: no srun on PATH"):
        resolve_launcher("srun", OPEN_MPI, environ={}, which=lambda _: None)


@pytest.mark.parametrize("ranks, placement, says", [
    (5, dict(hosts=parse_hosts("a:2,b:2")), "--np 5: the hosts a:2,b:2 have 4 slots"),
    (4, dict(hosts=parse_hosts("a:2,b:2"), transport="shm"),
     "ranks on 2 hosts cannot share memory"),
    (4, dict(ppn=2), "--ppn 2: name the hosts too"),
    (3, dict(hosts=parse_hosts("a:2,b:1"), launcher="srun"), "every host the same slots"),
    (2 * cores() + 2, dict(hosts=parse_hosts(f"a:{cores() + 1},b:{cores() + 1}"), bind_to="core"),
     f"--bind-to core: {cores() + 1} ranks cannot each have one"),
])
def test_impossible_host_requests_are_refused(ranks, placement, says):
    with pytest.raises(UserError) as err:
        check_placement(OPEN_MPI, ranks, Placement(**placement))
    assert says in str(err.value)


def test_shm_within_one_host_of_many_is_allowed():
    check_placement(OPEN_MPI, 2, Placement(transport="shm", hosts=parse_hosts("a:2,b:2")))


def test_run_refuses_a_bad_host_spec_in_one_line(db):
    assert "--hosts a:x: 'x' is not a number of slots" in one_line_error(
        commscope("run", "pingpong", "--hosts", "a:x", "--db", db))
    assert "--np 3: the hosts a:1,b:1 have 2 slots" in one_line_error(
        commscope("run", "pingpong", "--np", "3", "--hosts", "a,b", "--db", db))
    assert not db.exists()


def test_pairs_say_which_ranks_share_a_host_and_what_the_setting_implies():
    placement = [{"rank": r, "host": h, "shm_node": n}
                 for r, (h, n) in enumerate([("a", 0), ("a", 0), ("b", 2)])]
    ob1_sm = {"pml": "ob1", "btl": "self,sm,tcp"}
    pairs = rank_pairs({"placement": placement, "library_transport": ob1_sm})
    assert [(p["ranks"], p["same_host"], p["same_node"], p["transport"]) for p in pairs] == [
        ([0, 1], True, True, "shm"), ([0, 2], False, False, "network"),
        ([1, 2], False, False, "network")]
    # Open MPI left to choose its pml at run time: the pair on one node is not known.
    auto = rank_pairs({"placement": placement, "library_transport": {"pml": "", "btl": "^ofi"}})
    assert [p["transport"] for p in auto] == [None, "network", "network"]


@pytest.mark.parametrize("library, allowed", [
    ({"pml": "ob1", "btl": "self,tcp"}, False),
    ({"pml": "ob1", "btl": "^sm"}, False),
    ({"pml": "ob1", "btl": "^ofi"}, True),
    ({"pml": "ob1", "btl": "self,vader"}, True),
    ({"pml": "ucx", "btl": "self,sm"}, None),
    ({"MPIR_CVAR_NOLOCAL": 1}, False),
    ({"MPIR_CVAR_NOLOCAL": 0}, True),
    (None, None),
])
def test_shm_allowed_reads_each_librarys_setting(library, allowed):
    assert shm_allowed(library) is allowed


def test_sweep_experiments_take_hosts(tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text('iters = 5\n[[experiment]]\nkernel = "pingpong"\nsizes = [8]\n'
                    'hosts = ["a", "b"]\nppn = 2\nnp = [2, 4]\n')
    points = sweep.load(str(plan), find_mpi(str(EMBEDDED))).points
    assert [p.placement.as_dict() for p in points] == [
        {"map_by": None, "bind_to": None, "transport": "auto", "hosts": "a:2,b:2", "ppn": 2,
         "launcher": "mpirun"}] * 2
    plan.write_text('[[experiment]]\nkernel = "pingpong"\nhosts = "a:1"\nnp = 2\n')
    with pytest.raises(UserError, match=r"experiment 1: --np 2: the hosts a:1 have 1 slot;"):
        sweep.load(str(plan), find_mpi(str(EMBEDDED)))


def test_runs_on_one_host_keep_their_recorded_settings():
    # Sweep case ids hash these: adding hosts must not change them for runs without.
    assert Placement(map_by="core").as_dict() == {"map_by": "core", "bind_to": None,
                                                  "transport": "auto"}


def test_an_allocation_bounds_the_ranks():
    from commscope.system.launcher.slurm import allocation, check_ranks
    env = {"SLURM_JOB_ID": "12", "SLURM_JOB_NODELIST": "n[1-3]", "SLURM_JOB_NUM_NODES": "3",
           "SLURM_JOB_CPUS_PER_NODE": "2(x2),1"}
    assert allocation(env)["cpus"] == 5 and allocation(env)["ntasks"] is None
    check_ranks(5, env)  # as many as its CPUs
    with pytest.raises(UserError, match=r"--np 6: Slurm job 12 offers 5 CPUs on 3 node\(s\) "
                                        r"\(n\[1-3\]\).*-n 6"):
        check_ranks(6, env)
    with pytest.raises(UserError, match="offers 2 tasks"):  # tasks asked for bound it first
        check_ranks(3, {**env, "SLURM_NTASKS": "2"})
    assert allocation({}) is None
    check_ranks(10 ** 6, {})  # outside an allocation this check has nothing to say
