/* barrier: one MPI_Barrier (OSU osu_barrier); it moves no payload, so only
 * size 0 is measured (docs/kernels-collectives.md). */
#include "check.h"
#include "kernel.h"

static const char *barrier_unsupported(const struct kcase *c)
{
    return c->bytes ? "barrier moves no payload: only size 0 is measured"
                    : NULL;
}

static void barrier_setup(struct kcase *c)
{
    (void)c;
}

static void barrier_run_once(struct kcase *c)
{
    CHECK_MPI(MPI_Barrier(c->comm));
}

const struct kernel kernel_barrier = {
    .name = "barrier",
    .description = "MPI_Barrier; size 0 only",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .unsupported = barrier_unsupported,
    .setup = barrier_setup,
    .run_once = barrier_run_once,
    .teardown = barrier_setup,
};
