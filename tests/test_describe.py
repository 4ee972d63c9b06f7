"""The native binary is the one source of what a kernel is; Python adds only what a sample
means. These tests hold the two sides to each other."""

import json
import subprocess

import pytest

from commscope.system.build import native_binary, native_description
from commscope.system.errors import UserError
from commscope.system.kernels import MEANINGS, PARAM_KINDS, catalog, load
from commscope.system.mpi import find_mpi
from commscope.measure.plan import plans
from conftest import EMBEDDED, commscope


def described():
    return native_description(find_mpi(str(EMBEDDED)))


def test_every_described_kernel_has_a_meaning_and_every_meaning_a_kernel():
    names = [k["name"] for k in described()["kernels"]]
    assert len(names) == len(set(names)) == 39
    assert set(names) == set(MEANINGS)


def test_a_kernel_on_one_side_only_is_named():
    one_short = dict(described(), kernels=described()["kernels"][1:])
    with pytest.raises(RuntimeError, match="disagree"):
        load(one_short)


def test_both_sides_have_rules_for_the_same_parameter_kinds():
    assert set(described()["param_kinds"]) == set(PARAM_KINDS)
    used = {p["kind"] for k in described()["kernels"] for p in k["params"]}
    assert used <= set(PARAM_KINDS)
    with pytest.raises(RuntimeError, match="parameter kinds"):
        load(dict(described(), param_kinds=described()["param_kinds"] + ["colour"]))


def test_what_plan_py_once_knew_by_a_parameters_name_is_declared():
    known = catalog(find_mpi(str(EMBEDDED)))
    assert known.kernel("partitioned").params["partitions"].kind == "parts"
    assert known.kernel("rma").params["epoch"].kind == "epoch"
    assert known.kernel("pingpong").params["layout"].kind == "layout"
    assert known.kernel("pingpong").params["dtype"].elements["double"].bytes == 8
    bound = {(k.name, p.name) for k in known.kernels.values() for p in k.params.values()
             if p.binds_buffers}
    assert ("pingpong", "persistent") in bound and ("allreduce", "persistent") in bound
    assert {p for _, p in bound} == {"persistent"}


def _renamed(description: dict, kernel: str, old: str, new: str) -> dict:
    """The description with one kernel's parameter under another name."""
    kernels = [dict(k, params=[dict(p, name=new) if p["name"] == old else p
                               for p in k["params"]]) if k["name"] == kernel else k
               for k in description["kernels"]]
    return dict(description, kernels=kernels)


def test_the_plan_builder_applies_each_rule_by_kind_whatever_the_name():
    mpi = find_mpi(str(EMBEDDED))
    d = _renamed(_renamed(_renamed(described(), "partitioned", "partitions", "slices"),
                          "rma", "epoch", "access"), "bw", "persistent", "keep")
    d = _renamed(_renamed(d, "bw", "layout", "shape"), "bw", "dtype", "element")
    known = load(d)
    with pytest.raises(UserError, match="10 B is not a whole number of 4 equal slices"):
        plans(known, mpi, kernel="partitioned", sizes="10", params={"slices": "4"})
    # A range holds the sizes in it that split; a list names each, so one that does not
    # is refused (above).
    (ranged,) = plans(known, mpi, kernel="partitioned", sizes="0:64", params={"slices": "8"})
    assert ranged.sizes == [0, 8, 16, 32, 64]
    (rma,) = plans(known, mpi, kernel="rma", sizes="8", sync="lock")
    assert rma.sync == "barrier" and rma.params["access"] == "lock"
    with pytest.raises(UserError, match="--keep: its requests are bound"):
        plans(known, mpi, kernel="bw", sizes="8", params={"keep": "yes"}, cold_cache=True)
    with pytest.raises(UserError, match="vector:4:2 blocks \\(16 B\\)"):
        plans(known, mpi, kernel="bw", sizes="8",
              params={"element": "double", "shape": "vector:4:2"})


def test_describe_runs_without_a_launcher_and_is_what_python_reads():
    mpi = find_mpi(str(EMBEDDED))
    done = subprocess.run([str(native_binary(mpi)), "--describe"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == native_description(mpi)


def test_facts_python_once_restated_now_come_from_the_binary():
    known = catalog(find_mpi(str(EMBEDDED)))
    assert known.send_modes == ("standard", "synchronous", "buffered", "ready", "nonblocking",
                                "sendrecv")
    assert known.window_bytes_max == 1 << 30
    assert known.kernel("fanin").modes == known.send_modes[:5]
    assert known.kernel("bw").default_window == 64 and known.kernel("rma").default_window == 1
    assert known.kernel("pingpong").default_window is None
    assert known.kernel("reduce").params["dtype"].elements["double"].bytes == 8
    assert known.kernel("rma").params["operation"].elements["accumulate"].type == "uint64"
    assert [k.name for k in known.kernels.values() if k.family == "collective"] == [
        "barrier", "bcast", "scatter", "scatterv", "gather", "gatherv", "reduce", "allreduce",
        "allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter",
        "reduce_scatter_block", "scan", "exscan", "ibarrier", "ibcast", "ireduce", "iallreduce",
        "iallgather", "ialltoall"]
    assert known.kernel("advection2d").app and not known.kernel("halo").app


def test_a_plan_takes_each_kernels_own_default_window():
    mpi = find_mpi(str(EMBEDDED))
    known = catalog(mpi)
    windows = {name: plans(known, mpi, kernel=name, sizes="8", app=True)[0].window
               for name in ("pingpong", "bw", "rma", "allreduce")}
    assert windows == {"pingpong": None, "bw": 64, "rma": 1, "allreduce": None}


def test_help_lists_the_described_kernels_and_their_parameters():
    done = commscope("run", "--help")
    assert done.returncode == 0, done.stderr
    for k in described()["kernels"]:
        assert f"  {k['name']} " in done.stdout
    assert "--epoch fence|lock|lock_all_flush|pscw" in done.stdout
    assert "--dtype int|long|float|double" in done.stdout
