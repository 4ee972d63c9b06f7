/* allreduce: MPI_Allreduce of a vector of `bytes` (OSU osu_allreduce);
 * every rank checks the whole result, every iteration. Mock-ups (--as):
 * reduce+bcast, and reduce_scatter_block+allgather on P equal parts
 * (docs/kernels-collectives.md, docs/guidelines.md). */
#include "check.h"
#include "coll.h"

enum { REDUCE_BCAST, REDUCE_SCATTER_BLOCK_ALLGATHER };
static const char *const mockups[] = {"reduce+bcast", "reduce_scatter_block+allgather", NULL};
static const struct kparam params[] = {
    COLL_REDUCING_PARAMS,
    COLL_PERSISTENT_PARAM,
    COLL_ALGORITHM_PARAM,
    COLL_AS_PARAM(mockups),
    {0}};

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    (void)root;
    int part = s->count / c->ranks;
    switch (s->as) {
    case REDUCE_BCAST:
        CHECK_MPI(MPI_Reduce(s->send, s->recv, s->count, s->type, s->mpi_op, 0, c->comm));
        CHECK_MPI(MPI_Bcast(s->recv, s->count, s->type, 0, c->comm));
        return;
    case REDUCE_SCATTER_BLOCK_ALLGATHER:
        CHECK_MPI(MPI_Reduce_scatter_block(s->send, s->scratch, part, s->type, s->mpi_op,
                                           c->comm));
        CHECK_MPI(MPI_Allgather(s->scratch, part, s->type, s->recv, part, s->type, c->comm));
        return;
    }
    COLL_CALL(init, MPI_Allreduce(s->send, s->recv, s->count, s->type, s->mpi_op, c->comm),
              MPI_Allreduce_init(s->send, s->recv, s->count, s->type, s->mpi_op, c->comm,
                                 MPI_INFO_NULL, init));
}

static const char *allreduce_unsupported(const struct kcase *c)
{
    const char *reason = coll_reduction_unsupported(c);
    if (reason || coll_as(c) != REDUCE_SCATTER_BLOCK_ALLGATHER)
        return reason;
    return coll_split_unsupported(c, c->bytes / coll_element_bytes(c), "elements");
}

static void allreduce_setup(struct kcase *c)
{
    coll_setup(c, COLL_REDUCES);
    coll_buffers(c, 1, 1);
    struct coll *s = c->state;
    if (s->as == REDUCE_SCATTER_BLOCK_ALLGATHER)
        coll_scratch(c, 1);
    coll_persist(c, call);
}

static void allreduce_run_once(struct kcase *c)
{
    coll_reduction_once(c, call, c->ranks, 0);
}

const struct kernel kernel_allreduce = {
    .name = "allreduce",
    .description = "MPI_Allreduce of a vector of n bytes",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = params,
    .unsupported = allreduce_unsupported,
    .setup = allreduce_setup,
    .run_once = allreduce_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
    .report = coll_user_op_report,
};
