/* exscan: MPI_Exscan (exclusive prefix reduction) of a vector of `bytes`
 * (IMB Exscan); rank r > 0 checks its result, the op over ranks 0..r-1,
 * every iteration; rank 0's is undefined (docs/kernels-collectives.md). */
#include "check.h"
#include "coll.h"

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    (void)root;
    COLL_CALL(init, MPI_Exscan(s->send, s->recv, s->count, s->type, s->mpi_op, c->comm),
              MPI_Exscan_init(s->send, s->recv, s->count, s->type, s->mpi_op, c->comm,
                              MPI_INFO_NULL, init));
}

static void exscan_setup(struct kcase *c)
{
    coll_setup(c, COLL_REDUCES);
    coll_buffers(c, 1, 1);
    coll_persist(c, call);
}

static void exscan_run_once(struct kcase *c)
{
    coll_reduction_once(c, call, c->rank, 0); /* rank 0: no result */
}

const struct kernel kernel_exscan = {
    .name = "exscan",
    .description = "MPI_Exscan (exclusive prefix) of a vector of n bytes",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = coll_reducing_params,
    .unsupported = coll_reduction_unsupported,
    .setup = exscan_setup,
    .run_once = exscan_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
