/* allgatherv: MPI_Allgatherv with every rank's count `bytes` and blocks in
 * rank order, so it does allgather's job (OSU osu_allgatherv, IMB
 * Allgatherv); with --validate every rank checks every block
 * (docs/kernels-collectives.md). */
#include "check.h"
#include "coll.h"

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    (void)root;
    COLL_CALL(init,
              MPI_Allgatherv(s->send, s->count, MPI_BYTE, s->recv, s->counts, s->displs, MPI_BYTE,
                             c->comm),
              MPI_Allgatherv_init(s->send, s->count, MPI_BYTE, s->recv, s->counts, s->displs,
                                  MPI_BYTE, c->comm, MPI_INFO_NULL, init));
}

static void allgatherv_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, 1, (size_t)c->ranks);
    coll_vectors(c);
    coll_persist(c, call);
}

static void allgatherv_run_once(struct kcase *c)
{
    coll_once(c, call, COLL_SHAPE_ALLGATHER);
}

const struct kernel kernel_allgatherv = {
    .name = "allgatherv",
    .description = "MPI_Allgatherv, n bytes from each rank",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = coll_persistent_params,
    .unsupported = coll_bytes_unsupported,
    .setup = allgatherv_setup,
    .run_once = allgatherv_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
