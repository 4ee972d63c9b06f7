/* barrier: one MPI_Barrier (OSU osu_barrier); it moves no payload, so only
 * size 0 is measured (docs/kernels-collectives.md). */
#include "check.h"
#include "coll.h"

static const char *barrier_unsupported(const struct kcase *c)
{
    if (c->bytes)
        return "barrier moves no payload: only size 0 is measured";
    return coll_persistent_unsupported(c);
}

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    (void)s, (void)root;
    COLL_CALL(init, MPI_Barrier(c->comm), MPI_Barrier_init(c->comm, MPI_INFO_NULL, init));
}

static void barrier_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA); /* no buffers: only the persistent request */
    coll_persist(c, call);
}

static void barrier_run_once(struct kcase *c)
{
    coll_call(c, call);
}

const struct kernel kernel_barrier = {
    .name = "barrier",
    .description = "MPI_Barrier; size 0 only",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .params = coll_persistent_params,
    .unsupported = barrier_unsupported,
    .setup = barrier_setup,
    .run_once = barrier_run_once,
    .teardown = coll_teardown,
};
