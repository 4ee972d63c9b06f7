/* bcast: MPI_Bcast of a buffer of `bytes` from the root (OSU osu_bcast);
 * with --validate every other rank checks every byte
 * (docs/kernels-collectives.md). */
#include "check.h"
#include "coll.h"

static void call(struct kcase *c, struct coll *s, int root, MPI_Request *init)
{
    COLL_CALL(init, MPI_Bcast(s->recv, s->count, MPI_BYTE, root, c->comm),
              MPI_Bcast_init(s->recv, s->count, MPI_BYTE, root, c->comm, MPI_INFO_NULL, init));
}

static void bcast_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, 0, 1); /* one buffer: the root's source, the others' sink */
    coll_persist(c, call);
}

static void bcast_run_once(struct kcase *c)
{
    struct coll *s = coll_iteration(c);
    int root = coll_root(c);
    if (c->rank == root)
        coll_block_fill(c, s->recv, root, 0);
    coll_call(c, call);
    if (c->rank != root)
        coll_block_check(c, s->recv, root, 0, 0);
}

const struct kernel kernel_bcast = {
    .name = "bcast",
    .description = "MPI_Bcast of n bytes from the root",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = coll_rooted_params,
    .unsupported = coll_bytes_unsupported,
    .setup = bcast_setup,
    .run_once = bcast_run_once,
    .teardown = coll_teardown,
};
