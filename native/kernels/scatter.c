/* scatter: MPI_Scatter; the root sends a block of `bytes` to every rank
 * (OSU osu_scatter); with --validate every rank checks its block. Mock-ups
 * (--as): bcast (all P blocks to every rank, each keeps its own), scatterv
 * (docs/kernels-collectives.md, docs/guidelines.md). */
#include <string.h>

#include "check.h"
#include "coll.h"

enum { BCAST, SCATTERV };
static const char *const mockups[] = {"bcast", "scatterv", NULL};
static const struct kparam params[] = {
    COLL_ROOT_PARAM, COLL_PERSISTENT_PARAM, COLL_ALGORITHM_PARAM, COLL_AS_PARAM(mockups), {0}};

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    switch (s->as) {
    case BCAST: { /* the root's blocks are its send buffer; the others receive all */
        char *all = c->rank == root ? s->send : s->scratch;
        CHECK_MPI(MPI_Bcast(all, s->count * c->ranks, MPI_BYTE, root, c->comm));
        memcpy(s->recv, all + (size_t)c->rank * s->block, s->block);
        return;
    }
    case SCATTERV:
        CHECK_MPI(MPI_Scatterv(s->send, s->counts, s->displs, MPI_BYTE, s->recv, s->count,
                               MPI_BYTE, root, c->comm));
        return;
    }
    COLL_CALL(init,
              MPI_Scatter(s->send, s->count, MPI_BYTE, s->recv, s->count, MPI_BYTE, root, c->comm),
              MPI_Scatter_init(s->send, s->count, MPI_BYTE, s->recv, s->count, MPI_BYTE, root,
                               c->comm, MPI_INFO_NULL, init));
}

static const char *scatter_unsupported(const struct kcase *c)
{
    const char *reason = coll_bytes_unsupported(c);
    if (reason || coll_as(c) != BCAST)
        return reason;
    return coll_whole_unsupported(c->bytes * (size_t)c->ranks);
}

static void scatter_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, coll_may_be_root(c) ? (size_t)c->ranks : 0, 1);
    struct coll *s = c->state;
    if (s->as == BCAST)
        coll_scratch(c, (size_t)c->ranks);
    if (s->as == SCATTERV)
        coll_vectors(c);
    coll_persist(c, call);
}

static void scatter_run_once(struct kcase *c)
{
    coll_once(c, call, COLL_SHAPE_SCATTER);
}

const struct kernel kernel_scatter = {
    .name = "scatter",
    .description = "MPI_Scatter, n bytes to each rank",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = params,
    .unsupported = scatter_unsupported,
    .setup = scatter_setup,
    .run_once = scatter_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
