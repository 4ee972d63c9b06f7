/* iallgather: MPI_Iallgather, a block of `bytes` from every rank to every
 * rank, its overlap with a compute as OSU's osu_iallgather measures it
 * (nbc.h); with --validate every rank checks every block of both calls. */
#include "check.h"
#include "nbc.h"

static void start(struct kcase *c, struct coll *s, MPI_Request *req)
{
    coll_block_fill(c, s->send, c->rank, 0);
    CHECK_MPI(MPI_Iallgather(s->send, s->count, MPI_BYTE, s->recv, s->count, MPI_BYTE, c->comm,
                             req));
}

static void check(struct kcase *c, struct coll *s)
{
    for (int r = 0; r < c->ranks; r++)
        coll_block_check(c, (char *)s->recv + (size_t)r * s->block, r, 0, (size_t)r * s->block);
}

static const struct nbc_ops ops = {start, check};

static void iallgather_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, 1, (size_t)c->ranks);
    nbc_calibrate(c, &ops);
}

static void iallgather_run_once(struct kcase *c)
{
    nbc_run_once(c, &ops);
}

static void iallgather_verify(struct kcase *c)
{
    nbc_verify(c, &ops);
}

const struct kernel kernel_iallgather = {
    .name = "iallgather",
    .description = "MPI_Iallgather, n bytes from each rank: pure, compute and overlapped phases",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .params = nbc_params,
    .unsupported = coll_bytes_unsupported,
    .setup = iallgather_setup,
    .run_once = iallgather_run_once,
    .verify = iallgather_verify,
    .teardown = coll_teardown,
    .phases = nbc_phases,
    .sample_phase = "pure",
};
