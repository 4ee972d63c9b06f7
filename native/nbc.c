/* Nonblocking collectives with overlap (nbc.h). */
#include "nbc.h"

#include <stdlib.h>

#include "check.h"
#include "precision.h"
#include "sampling.h"

const char *const nbc_phases[] = {"pure", "compute", "overlapped", NULL};

enum { CALIBRATION_ROUNDS = 11 }; /* after one warm-up round */

/* Busy for `seconds` on this rank; with req and tests > 0, in `tests` equal
 * slices each followed by one MPI_Test on req. The tests' own time comes on
 * top of the compute, as in OSU's nonblocking collective benchmarks, whose
 * overlap counts it as not hidden (its Compute excludes it). */
static void compute(double seconds, long long tests, MPI_Request *req)
{
    long long slices = req && tests > 0 ? tests : 1;
    int flag;
    for (long long i = 0; i < slices; i++) {
        double end = MPI_Wtime() + seconds / (double)slices;
        while (MPI_Wtime() < end)
            ;
        if (req && tests > 0)
            CHECK_MPI(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
    }
}

void nbc_calibrate(struct kcase *c, const struct nbc_ops *ops)
{
    struct coll *s = c->state;
    const char *tests = kcase_param(c, "tests");
    s->tests = tests ? atoll(tests) : 0;
    double took[CALIBRATION_ROUNDS];
    for (int i = -1; i < CALIBRATION_ROUNDS; i++) {
        MPI_Request req;
        CHECK_MPI(MPI_Barrier(c->comm));
        double start = MPI_Wtime();
        ops->start(c, coll_iteration(c), &req);
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (i >= 0)
            took[i] = MPI_Wtime() - start;
    }
    s->compute_s = median_in_place(took, CALIBRATION_ROUNDS);
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &s->compute_s, 1, MPI_DOUBLE, MPI_MAX, c->comm));
}

void nbc_run_once(struct kcase *c, const struct nbc_ops *ops)
{
    struct coll *s = coll_iteration(c);
    MPI_Request req;
    ops->start(c, s, &req);
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    sampling_phase_end(c, NBC_PHASE_PURE);
    ops->check(c, s); /* in no phase: the sync restarts the marks */
    sampling_phase_sync(c);
    compute(s->compute_s, 0, NULL);
    sampling_phase_end(c, NBC_PHASE_COMPUTE);
    sampling_phase_sync(c);
    ops->start(c, s, &req);
    compute(s->compute_s, s->tests, &req);
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    sampling_phase_end(c, NBC_PHASE_OVERLAPPED);
}

void nbc_verify(struct kcase *c, const struct nbc_ops *ops)
{
    ops->check(c, c->state);
}
