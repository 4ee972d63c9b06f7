/* iallreduce: MPI_Iallreduce of a vector of `bytes`, its overlap with a
 * compute as OSU's osu_iallreduce measures it (nbc.h); every rank checks
 * the whole result of both calls. */
#include "check.h"
#include "nbc.h"

static void start(struct kcase *c, struct coll *s, MPI_Request *req)
{
    CHECK_MPI(MPI_Iallreduce(s->send, s->recv, s->count, s->type, s->mpi_op, c->comm, req));
}

static void check(struct kcase *c, struct coll *s)
{
    coll_check(c, s->recv, c->ranks, 0, (size_t)s->count);
}

static const struct nbc_ops ops = {start, check};

static void iallreduce_setup(struct kcase *c)
{
    coll_setup(c, COLL_REDUCES);
    coll_buffers(c, 1, 1);
    nbc_calibrate(c, &ops);
}

static void iallreduce_run_once(struct kcase *c)
{
    nbc_run_once(c, &ops);
}

static void iallreduce_verify(struct kcase *c)
{
    nbc_verify(c, &ops);
}

const struct kernel kernel_iallreduce = {
    .name = "iallreduce",
    .description = "MPI_Iallreduce of n bytes: pure, compute and overlapped phases",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .params = nbc_reducing_params,
    .unsupported = coll_reduction_unsupported,
    .setup = iallreduce_setup,
    .run_once = iallreduce_run_once,
    .verify = iallreduce_verify,
    .teardown = coll_teardown,
    .phases = nbc_phases,
    .sample_phase = "pure",
};
