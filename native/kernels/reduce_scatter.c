/* reduce_scatter: MPI_Reduce_scatter with every rank's count the same:
 * every rank contributes P blocks and receives the reduction of its own,
 * `bytes` per block (OSU osu_reduce_scatter, IMB Reduce_scatter); each
 * rank checks its block, every iteration. Mock-up (--as): allreduce of all
 * P blocks, each rank keeping its own (docs/kernels-collectives.md,
 * docs/guidelines.md). */
#include <string.h>

#include "check.h"
#include "coll.h"

enum { ALLREDUCE };
static const char *const mockups[] = {"allreduce", NULL};
static const struct kparam params[] = {
    COLL_REDUCING_PARAMS,
    COLL_PERSISTENT_PARAM,
    COLL_ALGORITHM_PARAM,
    COLL_AS_PARAM(mockups),
    {0}};

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    (void)root;
    if (s->as == ALLREDUCE) {
        CHECK_MPI(MPI_Allreduce(s->send, s->scratch, s->count * c->ranks, s->type, s->mpi_op,
                                c->comm));
        memcpy(s->recv, (char *)s->scratch + (size_t)c->rank * s->block, s->block);
        return;
    }
    COLL_CALL(init, MPI_Reduce_scatter(s->send, s->recv, s->counts, s->type, s->mpi_op, c->comm),
              MPI_Reduce_scatter_init(s->send, s->recv, s->counts, s->type, s->mpi_op, c->comm,
                                      MPI_INFO_NULL, init));
}

static const char *reduce_scatter_unsupported(const struct kcase *c)
{
    const char *reason = coll_reduction_unsupported(c);
    if (reason || coll_as(c) != ALLREDUCE)
        return reason;
    return coll_whole_unsupported(c->bytes / coll_element_bytes(c) * (size_t)c->ranks);
}

static void reduce_scatter_setup(struct kcase *c)
{
    coll_setup(c, COLL_REDUCES);
    coll_buffers(c, (size_t)c->ranks, 1);
    coll_vectors(c);
    struct coll *s = c->state;
    if (s->as == ALLREDUCE)
        coll_scratch(c, (size_t)c->ranks);
    coll_persist(c, call);
}

static void reduce_scatter_run_once(struct kcase *c)
{
    /* Rank r's block is elements r*count .. of the P-block vector. */
    struct coll *s = c->state;
    coll_reduction_once(c, call, c->ranks, (size_t)c->rank * (size_t)s->count);
}

const struct kernel kernel_reduce_scatter = {
    .name = "reduce_scatter",
    .description = "MPI_Reduce_scatter, n bytes received per rank",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = params,
    .unsupported = reduce_scatter_unsupported,
    .setup = reduce_scatter_setup,
    .run_once = reduce_scatter_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
