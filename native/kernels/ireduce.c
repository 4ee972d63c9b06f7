/* ireduce: MPI_Ireduce of a vector of `bytes` to the root, its overlap with
 * a compute as OSU's osu_ireduce measures it (nbc.h); the root checks the
 * whole result of both calls. */
#include "check.h"
#include "nbc.h"

static void start(struct kcase *c, struct coll *s, MPI_Request *req)
{
    CHECK_MPI(MPI_Ireduce(s->send, s->recv, s->count, s->type, s->mpi_op, coll_root(c), c->comm,
                          req));
}

static void check(struct kcase *c, struct coll *s)
{
    if (c->rank == coll_root(c))
        coll_check(c, s->recv, c->ranks, 0, (size_t)s->count);
}

static const struct nbc_ops ops = {start, check};

static void ireduce_setup(struct kcase *c)
{
    coll_setup(c, COLL_REDUCES);
    coll_buffers(c, 1, coll_may_be_root(c) ? 1 : 0);
    nbc_calibrate(c, &ops);
}

static void ireduce_run_once(struct kcase *c)
{
    nbc_run_once(c, &ops);
}

static void ireduce_verify(struct kcase *c)
{
    nbc_verify(c, &ops);
}

const struct kernel kernel_ireduce = {
    .name = "ireduce",
    .description = "MPI_Ireduce of n bytes to the root: pure, compute and overlapped phases",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .params = nbc_rooted_reducing_params,
    .unsupported = coll_reduction_unsupported,
    .setup = ireduce_setup,
    .run_once = ireduce_run_once,
    .verify = ireduce_verify,
    .teardown = coll_teardown,
    .phases = nbc_phases,
    .sample_phase = "pure",
};
