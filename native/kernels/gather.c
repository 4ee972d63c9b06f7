/* gather: MPI_Gather; every rank sends a block of `bytes` to the root
 * (OSU osu_gather); with --validate the root checks every block. Mock-ups
 * (--as): allgather (every rank receives all), gatherv
 * (docs/kernels-collectives.md, docs/guidelines.md). */
#include "check.h"
#include "coll.h"

enum { ALLGATHER, GATHERV };
static const char *const mockups[] = {"allgather", "gatherv", NULL};
static const struct kparam params[] = {
    COLL_ROOT_PARAM, COLL_PERSISTENT_PARAM, COLL_ALGORITHM_PARAM, COLL_AS_PARAM(mockups), {0}};

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    switch (s->as) {
    case ALLGATHER: /* the root's result in recv, the others' in scratch */
        CHECK_MPI(MPI_Allgather(s->send, s->count, MPI_BYTE,
                                c->rank == root ? s->recv : s->scratch, s->count, MPI_BYTE,
                                c->comm));
        return;
    case GATHERV:
        CHECK_MPI(MPI_Gatherv(s->send, s->count, MPI_BYTE, s->recv, s->counts, s->displs, MPI_BYTE,
                              root, c->comm));
        return;
    }
    COLL_CALL(init,
              MPI_Gather(s->send, s->count, MPI_BYTE, s->recv, s->count, MPI_BYTE, root, c->comm),
              MPI_Gather_init(s->send, s->count, MPI_BYTE, s->recv, s->count, MPI_BYTE, root,
                              c->comm, MPI_INFO_NULL, init));
}

static void gather_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, 1, coll_may_be_root(c) ? (size_t)c->ranks : 0);
    struct coll *s = c->state;
    if (s->as == ALLGATHER)
        coll_scratch(c, (size_t)c->ranks);
    if (s->as == GATHERV)
        coll_vectors(c);
    coll_persist(c, call);
}

static void gather_run_once(struct kcase *c)
{
    coll_once(c, call, COLL_SHAPE_GATHER);
}

const struct kernel kernel_gather = {
    .name = "gather",
    .description = "MPI_Gather, n bytes from each rank",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = params,
    .unsupported = coll_bytes_unsupported,
    .setup = gather_setup,
    .run_once = gather_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
