/* ialltoall: MPI_Ialltoall, a distinct block of `bytes` from every rank to
 * every rank, its overlap with a compute as OSU's osu_ialltoall measures it
 * (nbc.h); with --validate every rank checks every block of both calls. */
#include "check.h"
#include "nbc.h"

static void start(struct kcase *c, struct coll *s, MPI_Request *req)
{
    for (int r = 0; r < c->ranks; r++)
        coll_block_fill(c, (char *)s->send + (size_t)r * s->block, c->rank, r);
    CHECK_MPI(MPI_Ialltoall(s->send, s->count, MPI_BYTE, s->recv, s->count, MPI_BYTE, c->comm,
                            req));
}

/* Block r came from rank r, which sent us its block number c->rank. */
static void check(struct kcase *c, struct coll *s)
{
    for (int r = 0; r < c->ranks; r++)
        coll_block_check(c, (char *)s->recv + (size_t)r * s->block, r, c->rank,
                         (size_t)r * s->block);
}

static const struct nbc_ops ops = {start, check};

static void ialltoall_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, (size_t)c->ranks, (size_t)c->ranks);
    nbc_calibrate(c, &ops);
}

static void ialltoall_run_once(struct kcase *c)
{
    nbc_run_once(c, &ops);
}

static void ialltoall_verify(struct kcase *c)
{
    nbc_verify(c, &ops);
}

const struct kernel kernel_ialltoall = {
    .name = "ialltoall",
    .description = "MPI_Ialltoall, n bytes to each rank: pure, compute and overlapped phases",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .params = nbc_params,
    .unsupported = coll_bytes_unsupported,
    .setup = ialltoall_setup,
    .run_once = ialltoall_run_once,
    .verify = ialltoall_verify,
    .teardown = coll_teardown,
    .phases = nbc_phases,
    .sample_phase = "pure",
};
