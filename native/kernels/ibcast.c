/* ibcast: MPI_Ibcast of `bytes` from the root, its overlap with a compute as
 * OSU's osu_ibcast measures it (nbc.h); with --validate every other rank
 * checks every byte of both calls. */
#include "check.h"
#include "nbc.h"

static void start(struct kcase *c, struct coll *s, MPI_Request *req)
{
    int root = coll_root(c);
    if (c->rank == root)
        coll_block_fill(c, s->recv, root, 0);
    CHECK_MPI(MPI_Ibcast(s->recv, s->count, MPI_BYTE, root, c->comm, req));
}

static void check(struct kcase *c, struct coll *s)
{
    int root = coll_root(c);
    if (c->rank != root)
        coll_block_check(c, s->recv, root, 0, 0);
}

static const struct nbc_ops ops = {start, check};

static void ibcast_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, 0, 1);
    nbc_calibrate(c, &ops);
}

static void ibcast_run_once(struct kcase *c)
{
    nbc_run_once(c, &ops);
}

static void ibcast_verify(struct kcase *c)
{
    nbc_verify(c, &ops);
}

const struct kernel kernel_ibcast = {
    .name = "ibcast",
    .description = "MPI_Ibcast of n bytes from the root: pure, compute and overlapped phases",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .params = nbc_rooted_params,
    .unsupported = coll_bytes_unsupported,
    .setup = ibcast_setup,
    .run_once = ibcast_run_once,
    .verify = ibcast_verify,
    .teardown = coll_teardown,
    .phases = nbc_phases,
    .sample_phase = "pure",
};
