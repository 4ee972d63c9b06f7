/* alltoallv: MPI_Alltoallv with every count `bytes` and blocks in rank
 * order, so it does alltoall's job (OSU osu_alltoallv, IMB Alltoallv);
 * with --validate every rank checks every block (docs/kernels-collectives.md). */
#include "check.h"
#include "coll.h"

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    (void)root;
    COLL_CALL(init,
              MPI_Alltoallv(s->send, s->counts, s->displs, MPI_BYTE, s->recv, s->counts, s->displs,
                            MPI_BYTE, c->comm),
              MPI_Alltoallv_init(s->send, s->counts, s->displs, MPI_BYTE, s->recv, s->counts,
                                 s->displs, MPI_BYTE, c->comm, MPI_INFO_NULL, init));
}

static void alltoallv_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, (size_t)c->ranks, (size_t)c->ranks);
    coll_vectors(c);
    coll_persist(c, call);
}

static void alltoallv_run_once(struct kcase *c)
{
    coll_once(c, call, COLL_SHAPE_ALLTOALL);
}

const struct kernel kernel_alltoallv = {
    .name = "alltoallv",
    .description = "MPI_Alltoallv, n bytes to each rank from each rank",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = coll_persistent_params,
    .unsupported = coll_bytes_unsupported,
    .setup = alltoallv_setup,
    .run_once = alltoallv_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
