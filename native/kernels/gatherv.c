/* gatherv: MPI_Gatherv with every rank's count `bytes` and blocks in rank
 * order, so it does gather's job (IMB Gatherv); with --validate the root
 * checks every block (docs/kernels-collectives.md). */
#include "check.h"
#include "coll.h"

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    COLL_CALL(init,
              MPI_Gatherv(s->send, s->count, MPI_BYTE, s->recv, s->counts, s->displs, MPI_BYTE,
                          root, c->comm),
              MPI_Gatherv_init(s->send, s->count, MPI_BYTE, s->recv, s->counts, s->displs,
                               MPI_BYTE, root, c->comm, MPI_INFO_NULL, init));
}

static void gatherv_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, 1, coll_may_be_root(c) ? (size_t)c->ranks : 0);
    coll_vectors(c);
    coll_persist(c, call);
}

static void gatherv_run_once(struct kcase *c)
{
    coll_once(c, call, COLL_SHAPE_GATHER);
}

const struct kernel kernel_gatherv = {
    .name = "gatherv",
    .description = "MPI_Gatherv, n bytes from each rank",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = coll_rooted_params,
    .unsupported = coll_bytes_unsupported,
    .setup = gatherv_setup,
    .run_once = gatherv_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
