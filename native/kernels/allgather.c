/* allgather: MPI_Allgather; every rank contributes a block of `bytes` and
 * receives all P (OSU osu_allgather); with --validate every rank checks
 * every block. Mock-ups (--as): gather+bcast, alltoall (the block sent to
 * every rank), allreduce (MPI_BOR over a zeroed vector holding each block
 * in its place), allgatherv (docs/kernels-collectives.md, docs/guidelines.md). */
#include <string.h>

#include "check.h"
#include "coll.h"

enum { GATHER_BCAST, ALLTOALL, ALLREDUCE, ALLGATHERV };
static const char *const mockups[] = {"gather+bcast", "alltoall", "allreduce", "allgatherv", NULL};
static const struct kparam params[] = {
    COLL_PERSISTENT_PARAM, COLL_ALGORITHM_PARAM, COLL_AS_PARAM(mockups), {0}};

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    (void)root;
    int all = s->count * c->ranks;
    char *mine = (char *)s->recv + (size_t)c->rank * s->block;
    switch (s->as) {
    case GATHER_BCAST:
        CHECK_MPI(MPI_Gather(s->send, s->count, MPI_BYTE, s->recv, s->count, MPI_BYTE, 0,
                             c->comm));
        CHECK_MPI(MPI_Bcast(s->recv, all, MPI_BYTE, 0, c->comm));
        return;
    case ALLTOALL:
        for (int r = 0; r < c->ranks; r++)
            memcpy((char *)s->scratch + (size_t)r * s->block, s->send, s->block);
        CHECK_MPI(MPI_Alltoall(s->scratch, s->count, MPI_BYTE, s->recv, s->count, MPI_BYTE,
                               c->comm));
        return;
    case ALLREDUCE:
        memset(s->recv, 0, (size_t)all);
        memcpy(mine, s->send, s->block);
        CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, s->recv, all, MPI_BYTE, MPI_BOR, c->comm));
        return;
    case ALLGATHERV:
        CHECK_MPI(MPI_Allgatherv(s->send, s->count, MPI_BYTE, s->recv, s->counts, s->displs,
                                 MPI_BYTE, c->comm));
        return;
    }
    COLL_CALL(init,
              MPI_Allgather(s->send, s->count, MPI_BYTE, s->recv, s->count, MPI_BYTE, c->comm),
              MPI_Allgather_init(s->send, s->count, MPI_BYTE, s->recv, s->count, MPI_BYTE, c->comm,
                                 MPI_INFO_NULL, init));
}

static const char *allgather_unsupported(const struct kcase *c)
{
    const char *reason = coll_bytes_unsupported(c);
    if (reason || coll_as(c) == COLL_ITSELF || coll_as(c) == ALLGATHERV)
        return reason;
    return coll_whole_unsupported(c->bytes * (size_t)c->ranks);
}

static void allgather_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, 1, (size_t)c->ranks);
    struct coll *s = c->state;
    if (s->as == ALLTOALL)
        coll_scratch(c, (size_t)c->ranks);
    if (s->as == ALLGATHERV)
        coll_vectors(c);
    coll_persist(c, call);
}

static void allgather_run_once(struct kcase *c)
{
    coll_once(c, call, COLL_SHAPE_ALLGATHER);
}

const struct kernel kernel_allgather = {
    .name = "allgather",
    .description = "MPI_Allgather, n bytes from each rank",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = params,
    .unsupported = allgather_unsupported,
    .setup = allgather_setup,
    .run_once = allgather_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
