/* alltoall: MPI_Alltoall; every rank sends a distinct block of `bytes` to
 * every rank (OSU osu_alltoall); with --validate every rank checks every
 * block. Mock-up (--as): alltoallv (docs/kernels-collectives.md,
 * docs/guidelines.md). */
#include "check.h"
#include "coll.h"

enum { ALLTOALLV };
static const char *const mockups[] = {"alltoallv", NULL};
static const struct kparam params[] = {
    COLL_PERSISTENT_PARAM, COLL_ALGORITHM_PARAM, COLL_AS_PARAM(mockups), {0}};

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    (void)root;
    if (s->as == ALLTOALLV) {
        CHECK_MPI(MPI_Alltoallv(s->send, s->counts, s->displs, MPI_BYTE, s->recv, s->counts,
                                s->displs, MPI_BYTE, c->comm));
        return;
    }
    COLL_CALL(init,
              MPI_Alltoall(s->send, s->count, MPI_BYTE, s->recv, s->count, MPI_BYTE, c->comm),
              MPI_Alltoall_init(s->send, s->count, MPI_BYTE, s->recv, s->count, MPI_BYTE, c->comm,
                                MPI_INFO_NULL, init));
}

static void alltoall_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, (size_t)c->ranks, (size_t)c->ranks);
    if (((struct coll *)c->state)->as == ALLTOALLV)
        coll_vectors(c);
    coll_persist(c, call);
}

static void alltoall_run_once(struct kcase *c)
{
    coll_once(c, call, COLL_SHAPE_ALLTOALL);
}

const struct kernel kernel_alltoall = {
    .name = "alltoall",
    .description = "MPI_Alltoall, n bytes to each rank from each rank",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = params,
    .unsupported = coll_bytes_unsupported,
    .setup = alltoall_setup,
    .run_once = alltoall_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
