/* bcast: MPI_Bcast of a buffer of `bytes` from the root (OSU osu_bcast);
 * with --validate every other rank checks every byte. Mock-up (--as):
 * scatter+allgather on P equal parts (docs/kernels-collectives.md,
 * docs/guidelines.md). */
#include "check.h"
#include "coll.h"

enum { SCATTER_ALLGATHER };
static const char *const mockups[] = {"scatter+allgather", NULL};
static const struct kparam params[] = {
    COLL_ROOT_PARAM, COLL_PERSISTENT_PARAM, COLL_ALGORITHM_PARAM, COLL_AS_PARAM(mockups), {0}};

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    if (s->as == SCATTER_ALLGATHER) { /* part r travels root -> r, then r -> all */
        int part = s->count / c->ranks;
        char *mine = (char *)s->recv + (size_t)c->rank * (size_t)part;
        CHECK_MPI(MPI_Scatter(s->recv, part, MPI_BYTE, c->rank == root ? MPI_IN_PLACE : mine, part,
                              MPI_BYTE, root, c->comm));
        CHECK_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s->recv, part, MPI_BYTE,
                                c->comm));
        return;
    }
    COLL_CALL(init, MPI_Bcast(s->recv, s->count, MPI_BYTE, root, c->comm),
              MPI_Bcast_init(s->recv, s->count, MPI_BYTE, root, c->comm, MPI_INFO_NULL, init));
}

static const char *bcast_unsupported(const struct kcase *c)
{
    const char *reason = coll_bytes_unsupported(c);
    if (reason || coll_as(c) != SCATTER_ALLGATHER)
        return reason;
    return coll_split_unsupported(c, c->bytes, "bytes");
}

static void bcast_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, 0, 1); /* one buffer: the root's source, the others' sink */
    coll_persist(c, call);
}

static void bcast_run_once(struct kcase *c)
{
    coll_once(c, call, COLL_SHAPE_BCAST);
}

const struct kernel kernel_bcast = {
    .name = "bcast",
    .description = "MPI_Bcast of n bytes from the root",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = params,
    .unsupported = bcast_unsupported,
    .setup = bcast_setup,
    .run_once = bcast_run_once,
    .verify = coll_verify,
    .teardown = coll_teardown,
};
