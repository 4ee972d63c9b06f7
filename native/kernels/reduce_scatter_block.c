/* reduce_scatter_block: MPI_Reduce_scatter_block; every rank contributes P
 * blocks and receives the reduction of its own, `bytes` per block (IMB
 * Reduce_scatter_block); each rank checks its block, every iteration.
 * Mock-up (--as): reduce+scatter through rank 0 (docs/kernels-collectives.md,
 * docs/guidelines.md). */
#include "check.h"
#include "coll.h"

enum { REDUCE_SCATTER };
static const char *const mockups[] = {"reduce+scatter", NULL};
static const struct kparam params[] = {
    COLL_REDUCING_PARAMS,
    COLL_PERSISTENT_PARAM,
    COLL_ALGORITHM_PARAM,
    COLL_AS_PARAM(mockups),
    {0}};

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    (void)root;
    if (s->as == REDUCE_SCATTER) {
        CHECK_MPI(MPI_Reduce(s->send, s->scratch, s->count * c->ranks, s->type, s->mpi_op, 0,
                             c->comm));
        CHECK_MPI(MPI_Scatter(s->scratch, s->count, s->type, s->recv, s->count, s->type, 0,
                              c->comm));
        return;
    }
    COLL_CALL(init,
              MPI_Reduce_scatter_block(s->send, s->recv, s->count, s->type, s->mpi_op, c->comm),
              MPI_Reduce_scatter_block_init(s->send, s->recv, s->count, s->type, s->mpi_op,
                                            c->comm, MPI_INFO_NULL, init));
}

static const char *reduce_scatter_block_unsupported(const struct kcase *c)
{
    const char *reason = coll_reduction_unsupported(c);
    if (reason || coll_as(c) != REDUCE_SCATTER)
        return reason;
    return coll_whole_unsupported(c->bytes / coll_element_bytes(c) * (size_t)c->ranks);
}

static void reduce_scatter_block_setup(struct kcase *c)
{
    coll_setup(c, COLL_REDUCES);
    coll_buffers(c, (size_t)c->ranks, 1);
    struct coll *s = c->state;
    if (s->as == REDUCE_SCATTER)
        coll_scratch(c, (size_t)c->ranks);
    coll_persist(c, call);
}

static void reduce_scatter_block_run_once(struct kcase *c)
{
    /* Rank r's block is elements r*count .. of the P-block vector. */
    struct coll *s = c->state;
    coll_reduction_once(c, call, c->ranks, (size_t)c->rank * (size_t)s->count);
}

const struct kernel kernel_reduce_scatter_block = {
    .name = "reduce_scatter_block",
    .description = "MPI_Reduce_scatter_block, n bytes received per rank",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = params,
    .unsupported = reduce_scatter_block_unsupported,
    .setup = reduce_scatter_block_setup,
    .run_once = reduce_scatter_block_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
