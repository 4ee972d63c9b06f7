/* reduce_scatter: MPI_Reduce_scatter_block; every rank contributes P
 * blocks and receives the reduction of its own, `bytes` per block; each
 * rank checks its block, every iteration (docs/kernels-collectives.md). */
#include "check.h"
#include "coll.h"
#include "sampling.h"

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    (void)root;
    COLL_CALL(init, MPI_Reduce_scatter_block(s->send, s->recv, s->count, s->type, s->mpi_op, c->comm),
              MPI_Reduce_scatter_block_init(s->send, s->recv, s->count, s->type, s->mpi_op,
                                            c->comm, MPI_INFO_NULL, init));
}

static void reduce_scatter_setup(struct kcase *c)
{
    coll_setup(c, COLL_REDUCES);
    coll_buffers(c, (size_t)c->ranks, 1);
    coll_persist(c, call);
}

static void reduce_scatter_run_once(struct kcase *c)
{
    struct coll *s = coll_iteration(c);
    coll_call(c, call);
    sampling_phase_end(c, COLL_PHASE_CALL);
    /* Rank r's block is elements r*count .. of the P-block vector. */
    coll_check(c, s->recv, c->ranks, (size_t)c->rank * (size_t)s->count,
               (size_t)s->count);
    coll_fill_next(c);
    sampling_phase_end(c, COLL_PHASE_CHECK);
}

const struct kernel kernel_reduce_scatter = {
    .name = "reduce_scatter",
    .description = "MPI_Reduce_scatter_block, n bytes received per rank",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = coll_reducing_params,
    .unsupported = coll_reduction_unsupported,
    .setup = reduce_scatter_setup,
    .run_once = reduce_scatter_run_once,
    .teardown = coll_teardown,
    .phases = coll_reduction_phases,
};
