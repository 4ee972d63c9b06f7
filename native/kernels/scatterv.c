/* scatterv: MPI_Scatterv with every rank's count `bytes` and blocks in
 * rank order, so it does scatter's job (IMB Scatterv); with --validate
 * every rank checks its block (docs/kernels-collectives.md). */
#include "check.h"
#include "coll.h"

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    COLL_CALL(init,
              MPI_Scatterv(s->send, s->counts, s->displs, MPI_BYTE, s->recv, s->count, MPI_BYTE,
                           root, c->comm),
              MPI_Scatterv_init(s->send, s->counts, s->displs, MPI_BYTE, s->recv, s->count,
                                MPI_BYTE, root, c->comm, MPI_INFO_NULL, init));
}

static void scatterv_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, coll_may_be_root(c) ? (size_t)c->ranks : 0, 1);
    coll_vectors(c);
    coll_persist(c, call);
}

static void scatterv_run_once(struct kcase *c)
{
    coll_once(c, call, COLL_SHAPE_SCATTER);
}

const struct kernel kernel_scatterv = {
    .name = "scatterv",
    .description = "MPI_Scatterv, n bytes to each rank",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = coll_rooted_params,
    .unsupported = coll_bytes_unsupported,
    .setup = scatterv_setup,
    .run_once = scatterv_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
