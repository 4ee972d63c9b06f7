"""A collective's sample is its call alone, from a barrier, as OSU times it
(docs/kernels-collectives.md): the result check runs outside every rank's timed region,
never delays another rank's next call, and still ends the run at a wrong or stale
result. On both MPIs."""

import json
import os

import numpy as np
import pytest

from conftest import commscope
from commscope.store.store import Store
from pmpi import preloadable

pytestmark = pytest.mark.mpi

# Rank 1's 40th MPI_Allreduce of at least 64 ints (the kernel's, not the loop's own
# one-double allreduces) returns a wrong element 3 (WRONG) or leaves its receive buffer as
# the call before left it (STALE).
FAULTY = r"""
static int calls;

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    static int elsewhere[1 << 16];
    int rank, ours = count >= 64 && count <= (1 << 16);
    PMPI_Comm_rank(comm, &rank); /* no MPI_COMM_WORLD: the wrapper is built without libmpi */
    int faulty = ours && rank == 1 && ++calls == 40;
    if (faulty && %(stale)d)
        return PMPI_Allreduce(s, elsewhere, count, type, op, comm);
    int rc = PMPI_Allreduce(s, r, count, type, op, comm);
    if (faulty)
        ((int *)r)[3] += 1;
    return rc;
}
"""


def run(mpi_prefix, db, *args, env=None):
    return commscope("run", *args, "--launches", "1", "--mpi", mpi_prefix, "--db", db,
                     "--json", env=env)


def test_a_collective_sample_is_one_call(mpi_prefix, db):
    """Every collective's record says its sample is one call (batch 1); a point-to-point
    kernel keeps its batches; the reductions have no check phase in the sample."""
    for kernel in ("allreduce", "bcast", "pingpong"):
        done = run(mpi_prefix, db, kernel, "--sizes", "8", "--iters", "20")
        assert done.returncode == 0, done.stderr
    store = Store(db)
    cases = {c.kernel: c for run_id in (1, 2, 3) for c in store.cases(run_id)}
    assert cases["allreduce"].sample == "call" and cases["allreduce"].batch == 1
    assert "phase_samples_s" not in cases["allreduce"].extra
    assert cases["bcast"].sample == "call" and cases["bcast"].batch == 1
    assert cases["pingpong"].sample == "batch" and cases["pingpong"].batch > 1


@pytest.mark.parametrize("fault, words", [("wrong", "element 3"), ("stale", "element 0")])
def test_a_wrong_or_stale_result_still_ends_the_run(mpi_prefix, db, tmp_path, fault, words):
    """Every iteration's result is checked: one wrong element, or a result left from the
    call before (the iterations alternate between two inputs), ends the run with the
    error record's rank, element and iteration."""
    lib = preloadable(mpi_prefix, tmp_path, fault, FAULTY % {"stale": fault == "stale"})
    done = run(mpi_prefix, db, "allreduce", "--sizes", "1KiB", "--iters", "100",
               env={**os.environ, "LD_PRELOAD": lib})
    assert done.returncode != 0
    assert f"rank 1, {words}" in done.stderr and "expected" in done.stderr, done.stderr


def test_a_slow_check_does_not_move_the_other_ranks_calls(mpi_prefix, db):
    """Rank 1's check made 2 ms longer on every iteration (COMMSCOPE_FAULT_SLOW_CHECK): the
    call's median moves by far less than the delay, where a check inside the timed region
    or a call started without a barrier would add it to both ranks' next call. That the
    fault acted shows in the probe, which times iterations with their checks: it reached
    its 250 us in fewer of them."""
    delay_us = 2000
    args = ("allreduce", "--sizes", "64KiB", "--iters", "100")
    plain = run(mpi_prefix, db, *args)
    slow = run(mpi_prefix, db, *args,
               env={**os.environ, "COMMSCOPE_FAULT_SLOW_CHECK": f"1:{delay_us}"})
    assert plain.returncode == 0 and slow.returncode == 0, plain.stderr + slow.stderr
    plain_s, slow_s = (json.loads(d.stdout)["cases"][0]["median_s"] for d in (plain, slow))
    assert slow_s - plain_s < 0.1 * delay_us * 1e-6, (plain_s, slow_s)
    warmup = [c.warmup_iterations for run_id in (1, 2) for c in Store(db).cases(run_id)]
    assert warmup[1] < warmup[0], warmup


def test_a_collective_sample_is_its_slowest_ranks_call(mpi_prefix, db):
    """A collective's samples are its slowest rank's, the rank whose median call is the
    longest, as OSU's maximum is the slowest rank's mean."""
    done = run(mpi_prefix, db, "bcast", "--np", "3", "--sizes", "8,64KiB", "--iters", "50")
    assert done.returncode == 0, done.stderr
    for case in Store(db).cases(1):
        per_rank = Store(db).rank_samples(case.id)
        slowest = int(np.argmax(np.median(per_rank, axis=1)))
        assert case.extra["slowest_rank"] == slowest
        assert np.array_equal(case.samples, per_rank[slowest])


def test_nonblocking_pure_is_the_sample(mpi_prefix, db):
    """A nonblocking collective's sample is its pure phase, started after a barrier: the
    headline is the collective alone, and its phases leave the checks out."""
    done = run(mpi_prefix, db, "iallreduce", "--np", "4", "--sizes", "8,64KiB",
               "--iters", "20")
    assert done.returncode == 0, done.stderr
    for c in json.loads(done.stdout)["cases"]:
        assert set(c["phase_median_s"]) == {"pure", "compute", "overlapped"}
        assert c["median_s"] == pytest.approx(c["pure_s"], rel=1e-9)
    for case in Store(db).cases(1):
        pure = np.asarray(case.extra["phase_samples_s"]["pure"])[case.extra["slowest_rank"]]
        assert np.allclose(case.samples, pure, rtol=1e-12)
