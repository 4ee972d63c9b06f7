/* --sync barrier (docs/native.md): each sample is started by an
 * MPI_Barrier. A collective's sample is one call (kernel_sample_kind), as
 * OSU and ReproMPI time them; the other kernels' is a batch of iterations,
 * its size chosen so that neither the timer nor the barrier's uneven exit is
 * more than 1% of what is measured. */
#include <math.h>
#include <stddef.h>

#include "kernel.h"
#include "sync.h"
#include "timer.h"

/* Each sample spans at least this many times the cost of reading the clock
 * and of the barrier that starts it. */
#define TIMER_COST_FACTOR 100.0
/* The longest sample the barrier's cost alone asks for (100 us: 100x a
 * 1 us barrier). */
#define BARRIER_SPAN_MAX_S 1e-4
/* Bounds the integer conversion only; reached by a kernel doing nothing. */
#define MAX_BATCH 1073741824.0

static void barrier_begin(struct sampling *s, MPI_Comm case_comm)
{
    s->comm = case_comm;
}

static double barrier_plan(struct sampling *s, MPI_Comm case_comm, double t_iter)
{
    (void)case_comm;
    /* The barrier's share is capped: on oversubscribed cores one barrier
     * takes milliseconds, and 100x that made every sample last seconds. */
    const struct timer_info *timer = s->timer;
    double clock = fmax(timer->overhead_s, timer->resolution_s);
    double target = fmax(TIMER_COST_FACTOR * clock,
                         fmin(TIMER_COST_FACTOR * timer->barrier_s, BARRIER_SPAN_MAX_S));
    double batch = kernel_sample_kind(s->kernel) == SAMPLE_CALL ? 1 : ceil(target / t_iter);
    s->batch = (long long)fmin(fmax(batch, 1.0), MAX_BATCH);
    return (double)s->batch * t_iter;
}

static void barrier_take(struct sampling *s, int from, int to)
{
    for (int i = from; i < to; i++) {
        double elapsed = sampling_barrier_batch(s, (uint64_t)s->batch);
        sampling_store(s, i, elapsed, (double)s->batch);
    }
}

static void barrier_finish(struct sampling *s, MPI_Comm case_comm)
{
    (void)s;
    (void)case_comm;
}

static void barrier_end(struct sampling *s)
{
    (void)s;
}

const struct sync_method sync_barrier = {
    .name = "barrier",
    .begin = barrier_begin,
    .plan = barrier_plan,
    .take = barrier_take,
    .finish = barrier_finish,
    .report = NULL, /* batch, in every record, says all there is */
    .end = barrier_end,
};
