/* reduce: MPI_Reduce of a vector of `bytes` to the root (OSU osu_reduce);
 * the root checks the whole result, every iteration. Mock-up (--as):
 * allreduce (every rank gets the result) (docs/kernels-collectives.md,
 * docs/guidelines.md). */
#include "check.h"
#include "coll.h"

enum { ALLREDUCE };
static const char *const mockups[] = {"allreduce", NULL};
static const struct kparam params[] = {COLL_ROOT_PARAM,        COLL_REDUCING_PARAMS,
                                       COLL_PERSISTENT_PARAM,  COLL_ALGORITHM_PARAM,
                                       COLL_AS_PARAM(mockups), {0}};

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    if (s->as == ALLREDUCE) { /* the root's result in recv, the others' in scratch */
        CHECK_MPI(MPI_Allreduce(s->send, c->rank == root ? s->recv : s->scratch, s->count, s->type,
                                s->mpi_op, c->comm));
        return;
    }
    COLL_CALL(init, MPI_Reduce(s->send, s->recv, s->count, s->type, s->mpi_op, root, c->comm),
              MPI_Reduce_init(s->send, s->recv, s->count, s->type, s->mpi_op, root, c->comm,
                              MPI_INFO_NULL, init));
}

static void reduce_setup(struct kcase *c)
{
    coll_setup(c, COLL_REDUCES);
    coll_buffers(c, 1, coll_may_be_root(c) ? 1 : 0);
    struct coll *s = c->state;
    if (s->as == ALLREDUCE)
        coll_scratch(c, 1);
    coll_persist(c, call);
}

static void reduce_run_once(struct kcase *c)
{
    coll_reduction_once(c, call, c->rank == coll_root(c) ? c->ranks : 0, 0);
}

const struct kernel kernel_reduce = {
    .name = "reduce",
    .description = "MPI_Reduce of a vector of n bytes to the root",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = params,
    .unsupported = coll_reduction_unsupported,
    .setup = reduce_setup,
    .run_once = reduce_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
    .report = coll_user_op_report,
};
