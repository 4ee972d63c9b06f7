/* scan: MPI_Scan (inclusive prefix reduction) of a vector of `bytes`;
 * rank r checks its result, the op over ranks 0..r, every iteration.
 * Mock-up (--as): exscan+reduce_local, each rank adding its own input to
 * the exclusive prefix (docs/kernels-collectives.md, docs/guidelines.md). */
#include <string.h>

#include "check.h"
#include "coll.h"

enum { EXSCAN_REDUCE_LOCAL };
static const char *const mockups[] = {"exscan+reduce_local", NULL};
static const struct kparam params[] = {
    COLL_REDUCING_PARAMS,
    COLL_PERSISTENT_PARAM,
    COLL_ALGORITHM_PARAM,
    COLL_AS_PARAM(mockups),
    {0}};

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    (void)root;
    if (s->as == EXSCAN_REDUCE_LOCAL) { /* rank 0's exclusive prefix is undefined: none */
        CHECK_MPI(MPI_Exscan(s->send, s->recv, s->count, s->type, s->mpi_op, c->comm));
        if (c->rank == 0)
            memcpy(s->recv, s->send, s->block);
        else
            CHECK_MPI(MPI_Reduce_local(s->send, s->recv, s->count, s->type, s->mpi_op));
        return;
    }
    COLL_CALL(init, MPI_Scan(s->send, s->recv, s->count, s->type, s->mpi_op, c->comm),
              MPI_Scan_init(s->send, s->recv, s->count, s->type, s->mpi_op, c->comm, MPI_INFO_NULL,
                            init));
}

static void scan_setup(struct kcase *c)
{
    coll_setup(c, COLL_REDUCES);
    coll_buffers(c, 1, 1);
    coll_persist(c, call);
}

static void scan_run_once(struct kcase *c)
{
    coll_reduction_once(c, call, c->rank + 1, 0);
}

const struct kernel kernel_scan = {
    .name = "scan",
    .description = "MPI_Scan (inclusive prefix) of a vector of n bytes",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = params,
    .unsupported = coll_reduction_unsupported,
    .setup = scan_setup,
    .run_once = scan_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
