"""The rma kernel: every epoch x operation x window kind validated on both MPIs, its
definitions (docs/kernels-rma.md), and the --sync values it shares with the timing loop."""

import json

import pytest

from commscope.system.errors import UserError
from commscope.system.kernels import catalog
from commscope.system.mpi import find_mpi
from commscope.measure.params import split_sync as split
from commscope.measure.sweep import load
from conftest import EMBEDDED, commscope, one_line_error


def kernel(name):
    return catalog().kernel(name)


def split_sync(k, sync, given):
    return split(catalog(), k, sync, given)


EPOCHS = ("fence", "lock", "lock_all_flush", "pscw")
QUICK = ["--iters", "6", "--launches", "1"]


def run_json(mpi_prefix, db, *args):
    done = commscope("run", "rma", *args, *QUICK, "--mpi", mpi_prefix, "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["cases"]


@pytest.mark.mpi
@pytest.mark.parametrize("epoch", EPOCHS)
def test_every_operation_and_window_kind_validates(epoch, mpi_prefix, db):
    sizes = [0, 8, 4096, 1 << 20]
    for operation in ("put", "get", "accumulate"):
        for win in ("allocate", "create"):
            cases = run_json(mpi_prefix, db, "--sync", epoch, "--operation", operation,
                             "--win", win, "--sizes", "0,8,4K,1MiB", "--validate")
            assert [c["bytes"] for c in cases] == sizes
            for c in cases:
                assert c["validated"] and c["n"] == 6 and c["window"] == 1
                assert c["params"] == {"operation": operation, "epoch": epoch, "win": win}
                assert c["sync"] == "barrier"  # the epoch is rma's; samples start after a barrier


@pytest.mark.mpi
def test_window_puts_w_operations_per_epoch_and_counts_them_in_bandwidth(mpi_prefix, db):
    one, wide = (run_json(mpi_prefix, db, "--sync", "lock_all_flush", "--sizes", "64KiB",
                          "--validate", "--window", w)[0] for w in ("1", "16"))
    assert (one["window"], wide["window"]) == (1, 16)
    assert wide["bandwidth_MBps"] == pytest.approx(16 * 65536 / wide["median_s"] / 1e6)
    # One epoch carrying 16 operations cannot be quicker than one carrying one.
    assert wide["median_s"] > one["median_s"]


@pytest.mark.mpi
def test_a_mebibyte_put_takes_longer_than_eight_bytes(mpi_prefix, db):
    small, large = run_json(mpi_prefix, db, "--sync", "pscw", "--sizes", "8,1MiB")
    assert large["median_s"] > 4 * small["median_s"]
    assert large["bandwidth_MBps"] > small["bandwidth_MBps"]


@pytest.mark.parametrize("args, says", [
    (["run", "bw", "--sync", "lock"], "--sync lock: an RMA access epoch, which only rma takes; "
                                      "use --sync barrier or window for bw"),
    (["run", "rma", "--sync", "window"], "--sync window: the rma target would wait outside MPI"),
    (["run", "rma", "--sync", "lock", "--param", "epoch=pscw"],
     "--sync lock: the epoch is already given as epoch=pscw; give it once"),
    (["run", "rma", "--operation", "accumulate", "--sizes", "8,12"],
     "--sizes: 12 B is not a whole number of accumulate's uint64 (8 B) elements"),
    (["run", "rma", "--operation", "fetch"],
     "--operation fetch: choose one of put, get, accumulate"),
    (["run", "rma", "--win", "dynamic"], "--win dynamic: choose one of allocate, create"),
    (["run", "rma", "--sync", "flush"], "invalid choice: 'flush'"),
    (["run", "rma", "--window", "0"], "--window 0"),
    (["run", "pingpong", "--operation", "put"], "parameter operation: kernel pingpong takes"),
])
def test_bad_combinations_are_one_clear_line(args, says, tmp_path):
    line = one_line_error(commscope(*args, cwd=tmp_path))
    assert says in line
    assert not (tmp_path / "commscope.db").exists()


def test_sync_names_rma_epoch_and_leaves_other_kernels_alone():
    rma = kernel("rma")
    assert split_sync(rma, "lock", {"win": "create"}) == (
        "barrier", {"win": "create", "epoch": "lock"})
    assert split_sync(rma, "barrier", {}) == ("barrier", {})
    assert split_sync(rma, "pscw", {"epoch": "pscw"}) == ("barrier", {"epoch": "pscw"})
    assert split_sync(kernel("pingpong"), "window", {}) == ("window", {})
    with pytest.raises(UserError, match="only rma takes"):
        split_sync(kernel("allreduce"), "fence", {})


def test_latency_is_one_epoch_and_bandwidth_counts_every_operation():
    class Case:
        bytes, window, ranks, params = 1 << 20, 64, 2, {}

    rma = kernel("rma")
    assert rma.latency(1e-3, Case) == 1e-3
    assert rma.bandwidth_Bps(1e-3, Case) == pytest.approx(64 * (1 << 20) / 1e-3)
    assert rma.default_window == 1 and kernel("bw").default_window == 64
    # The origin's buffer and accumulate's scratch, W operations each, W within 1 GiB.
    used = catalog().window_used
    assert rma.meaning.memory(1 << 20, used(rma, 64, 1 << 20), 2, {}) == 2 * 64 << 20
    assert rma.meaning.memory(1 << 25, used(rma, 64, 1 << 25), 2, {}) == 2 * 32 << 25


def test_sweep_plans_take_rma_epochs_as_sync(tmp_path):
    plan = tmp_path / "rma.toml"
    plan.write_text('iters = 6\n[[experiment]]\nkernel = "rma"\nsizes = "8"\n'
                    'sync = ["fence", "lock_all_flush"]\n'
                    'params = { operation = ["put", "get"] }\n')
    loaded = load(str(plan), find_mpi(str(EMBEDDED)))
    assert sorted((p.sync, p.params["epoch"], p.window) for p in loaded.points) == [
        ("barrier", "fence", 1), ("barrier", "fence", 1),
        ("barrier", "lock_all_flush", 1), ("barrier", "lock_all_flush", 1)]
    assert len({loaded.key(i, 1, None, 8) for i in range(len(loaded.points))}) == 4
    plan.write_text('[[experiment]]\nkernel = "pingpong"\nsync = "pscw"\n')
    with pytest.raises(UserError, match="experiment 1: sync pscw: an RMA access epoch"):
        load(str(plan), find_mpi(str(EMBEDDED)))
