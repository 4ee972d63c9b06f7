/* What the nonblocking collectives share (docs/kernels-collectives.md,
 * "Nonblocking collectives and overlap"): OSU's way to measure overlap. Each
 * iteration times, as phases each started together on every rank (a barrier
 * between them, in no phase), the collective started and waited for at once
 * (`pure`, the sample: the operation alone), a compute of the same length
 * alone (`compute`: calibrated in setup to the slowest rank's median pure
 * time), and the collective started before that compute and waited for after
 * it, with --param tests=N calls to MPI_Test spread over the compute
 * (`overlapped`). The result checks run between phases and in verify, in no
 * phase. Overlap = 1 - (overlapped - compute) / pure, at least 0. Without the
 * barriers a rank's compute took the core another rank's pure needed (4 ranks
 * on 2 cores: pure 3-5x osu_iallreduce's). */
#ifndef COMMSCOPE_NBC_H
#define COMMSCOPE_NBC_H

#include <mpi.h>

#include "coll.h"
#include "kernel.h"

enum { NBC_PHASE_PURE, NBC_PHASE_COMPUTE, NBC_PHASE_OVERLAPPED };
extern const char *const nbc_phases[];

struct nbc_ops {
    /* Fills this iteration's input (where --validate asks) and starts the
     * collective on s's buffers. */
    void (*start)(struct kcase *c, struct coll *s, MPI_Request *req);
    /* Checks what arrived (reductions always, data with --validate). */
    void (*check)(struct kcase *c, struct coll *s);
};

/* After coll_setup and coll_buffers: reads tests and calibrates compute_s. */
void nbc_calibrate(struct kcase *c, const struct nbc_ops *ops);
void nbc_run_once(struct kcase *c, const struct nbc_ops *ops);
/* The overlapped call's check (kernel.h's verify). */
void nbc_verify(struct kcase *c, const struct nbc_ops *ops);

#endif
