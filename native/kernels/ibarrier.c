/* ibarrier: MPI_Ibarrier, its overlap with a compute as OSU's osu_ibarrier
 * measures it (nbc.h); it moves no payload, so only size 0 is measured. */
#include "check.h"
#include "nbc.h"

static const char *ibarrier_unsupported(const struct kcase *c)
{
    return c->bytes ? "ibarrier moves no payload: only size 0 is measured" : NULL;
}

static void start(struct kcase *c, struct coll *s, MPI_Request *req)
{
    (void)s;
    CHECK_MPI(MPI_Ibarrier(c->comm, req));
}

static void check(struct kcase *c, struct coll *s)
{
    (void)c;
    (void)s;
}

static const struct nbc_ops ops = {start, check};

static void ibarrier_setup(struct kcase *c)
{
    coll_setup(c, COLL_MOVES_DATA);
    coll_buffers(c, 0, 0);
    nbc_calibrate(c, &ops);
}

static void ibarrier_run_once(struct kcase *c)
{
    nbc_run_once(c, &ops);
}

static void ibarrier_verify(struct kcase *c)
{
    nbc_verify(c, &ops);
}

const struct kernel kernel_ibarrier = {
    .name = "ibarrier",
    .description = "MPI_Ibarrier; size 0 only: pure, compute and overlapped phases",
    .family = FAMILY_COLLECTIVE,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .params = nbc_params,
    .unsupported = ibarrier_unsupported,
    .setup = ibarrier_setup,
    .run_once = ibarrier_run_once,
    .verify = ibarrier_verify,
    .teardown = coll_teardown,
    .phases = nbc_phases,
    .sample_phase = "pure",
};
