"""The native binary is the one source of what a kernel is; Python adds only what a sample
means. These tests hold the two sides to each other."""

import json
import subprocess

import pytest

from commscope.build import native_binary, native_description
from commscope.kernels import MEANINGS, catalog, load
from commscope.mpi import find_mpi
from commscope.plan import plans
from conftest import EMBEDDED, commscope


def described():
    return native_description(find_mpi(str(EMBEDDED)))


def test_every_described_kernel_has_a_meaning_and_every_meaning_a_kernel():
    names = [k["name"] for k in described()["kernels"]]
    assert len(names) == len(set(names)) == 30
    assert set(names) == set(MEANINGS)


def test_a_kernel_on_one_side_only_is_named():
    one_short = dict(described(), kernels=described()["kernels"][1:])
    with pytest.raises(RuntimeError, match="disagree"):
        load(one_short)


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
        "barrier", "bcast", "scatter", "gather", "reduce", "allreduce", "allgather",
        "alltoall", "reduce_scatter", "scan", "ibarrier", "ibcast", "ireduce", "iallreduce",
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
