/* The one timing loop (docs/native.md, "One timing loop"). Kernels supply
 * run_once; only this file reads the timer, so every kernel is measured the
 * same way: a probe that doubles as warm-up, batches sized against the
 * timer's cost, barrier-started samples, per-rank samples gathered to
 * rank 0. */
#include "timing.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "jsonl.h"
#include "kernel.h"
#include "options.h"
#include "records.h"

#define CALIBRATION_READS 100000
#define CALIBRATION_BARRIERS 1000
#define PROBE_MIN_S 1e-3
#define PROBE_MAX_ITERATIONS ((uint64_t)1 << 20)
/* Each sample spans at least this many times the cost of reading the clock
 * and of the barrier that starts it, so neither the reads nor the ranks'
 * uneven exit from the barrier is more than 1% of what is measured. */
#define TIMER_COST_FACTOR 100.0
/* Bounds the integer conversion only; reached by a kernel doing nothing. */
#define MAX_BATCH 1073741824.0

struct timer_info timer_calibrate(MPI_Comm comm)
{
    double local[3], agreed[3];
    double start = MPI_Wtime();
    for (int i = 0; i < CALIBRATION_READS; i++)
        (void)MPI_Wtime();
    local[0] = (MPI_Wtime() - start) / CALIBRATION_READS;

    /* Smallest non-zero step between consecutive reads; a coarse clock
     * may need more reads than the overhead loop to step at all. */
    double previous = MPI_Wtime(), resolution = INFINITY;
    for (long i = 0; i < CALIBRATION_READS || isinf(resolution); i++) {
        double now = MPI_Wtime();
        if (now > previous && now - previous < resolution)
            resolution = now - previous;
        previous = now;
    }
    local[1] = resolution;

    CHECK_MPI(MPI_Barrier(comm));
    start = MPI_Wtime();
    for (int i = 0; i < CALIBRATION_BARRIERS; i++)
        CHECK_MPI(MPI_Barrier(comm));
    local[2] = (MPI_Wtime() - start) / CALIBRATION_BARRIERS;
    /* Batch sizes follow from these, and all ranks must run the same
     * number of iterations: every rank takes the worst rank's values. */
    CHECK_MPI(MPI_Allreduce(local, agreed, 3, MPI_DOUBLE, MPI_MAX, comm));
    return (struct timer_info){.wtick_s = MPI_Wtick(),
                               .overhead_s = agreed[0],
                               .resolution_s = agreed[1],
                               .barrier_s = agreed[2]};
}

/* Per-phase time of the current sample, for kernels with phases. */
struct phases {
    int count;
    double mark;  /* clock at the last phase end, or the sample's start */
    double *acc;  /* [count] seconds in each phase during this sample */
};

void timing_phase_end(struct kcase *c, int phase)
{
    struct phases *p = c->phases;
    double now = MPI_Wtime();
    p->acc[phase] += now - p->mark;
    p->mark = now;
}

/* n iterations between two timer reads, started by a barrier; this rank's
 * elapsed seconds. Idle ranks only take part in the barrier. */
static double timed_run(const struct kernel *k, struct kcase *c, bool active,
                        uint64_t n)
{
    CHECK_MPI(MPI_Barrier(c->comm));
    double start = MPI_Wtime();
    if (c->phases) {
        c->phases->mark = start;
        for (int i = 0; i < c->phases->count; i++)
            c->phases->acc[i] = 0;
    }
    if (active) {
        for (uint64_t i = 0; i < n; i++) {
            k->run_once(c);
            c->iteration++;
        }
    }
    return MPI_Wtime() - start;
}

/* Probes of n = 1, 2, 4, ... iterations, all of them warm-up. A probe
 * whose slowest rank lasts PROBE_MIN_S is repeated with the same n, and the
 * probing ends when the repeat lasts that long too: a single slow probe
 * (first touch, connection set-up, the process descheduled) neither ends
 * the warm-up nor inflates the estimate. Returns seconds per iteration, the
 * same on every rank: the shorter of the two long probes over n. A probe
 * too short to register counts as one timer step, never as zero. */
static double probe(const struct kernel *k, struct kcase *c, bool active,
                    const struct timer_info *timer, uint64_t *warmup)
{
    double long_probe = 0;
    for (uint64_t n = 1;;) {
        double local = timed_run(k, c, active, n), slowest;
        CHECK_MPI(MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX,
                                c->comm));
        *warmup += n;
        if (slowest >= PROBE_MIN_S && long_probe > 0)
            return fmin(long_probe, slowest) / (double)n;
        if (slowest >= PROBE_MIN_S) {
            long_probe = slowest;
        } else if (n >= PROBE_MAX_ITERATIONS) {
            return fmax(slowest, timer->resolution_s) / (double)n;
        } else {
            long_probe = 0;
            n *= 2;
        }
    }
}

static long long batch_size(const struct timer_info *timer, double t_iter)
{
    double cost = fmax(fmax(timer->overhead_s, timer->resolution_s),
                       timer->barrier_s);
    double batch = ceil(TIMER_COST_FACTOR * cost / t_iter);
    return (long long)fmin(fmax(batch, 1.0), MAX_BATCH);
}

static int sample_count(const struct config *cfg, double t_iter,
                        long long batch)
{
    if (cfg->iters > 0)
        return (int)cfg->iters;
    double n = ceil(cfg->min_time_s / ((double)batch * t_iter));
    return (int)fmin(fmax(n, (double)cfg->min_samples),
                     (double)cfg->max_samples);
}

/* n values from every rank to rank 0 (NULL elsewhere): [world][n]. */
static double *gather(const struct kcase *c, const double *mine, int n)
{
    int world;
    CHECK_MPI(MPI_Comm_size(c->comm, &world));
    double *all = c->rank == 0 ? xcalloc((size_t)world * (size_t)n,
                                         sizeof *all)
                               : NULL;
    CHECK_MPI(MPI_Gather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, c->comm));
    return all;
}

/* Gathers every rank's samples (and phases) to rank 0, which writes the case
 * record; the kernel's report adds its fields. samples_s is the kernel's
 * sample: rank 0's, or the per-sample maximum over the ranks taking part. */
static void gather_and_record(const struct kernel *k, struct kcase *c,
                              struct case_record *r, const double *mine,
                              const double *phase_samples)
{
    int n = r->samples;
    double *all = gather(c, mine, n);
    struct jsonl j;
    if (c->rank == 0) {
        int compared = k->timed_by == TIMED_BY_MAX ? c->ranks : 1;
        double *per_sample = xcalloc((size_t)n, sizeof *per_sample);
        for (int i = 0; i < n; i++) {
            per_sample[i] = all[i];
            for (int rank = 1; rank < compared; rank++)
                per_sample[i] = fmax(per_sample[i], all[(size_t)rank * n + i]);
        }
        r->samples_s = per_sample;
        r->rank_samples_s = all;
        record_case_open(&j, r);
        free(per_sample);
        free(all);
    }
    if (c->phases) {
        if (c->rank == 0)
            jsonl_open(&j, "phase_samples_s", '{');
        for (int p = 0; p < c->phases->count; p++) {
            double *phase = gather(c, phase_samples + (size_t)p * (size_t)n, n);
            if (c->rank == 0)
                record_rank_lists(&j, k->phases[p], phase, c->ranks, n);
            free(phase);
        }
        if (c->rank == 0)
            jsonl_close(&j, '}');
    }
    if (k->report)
        k->report(c, c->rank == 0 ? &j : NULL);
    if (c->rank == 0)
        record_case_close(&j);
}

bool timing_run_case(const struct config *cfg, const struct timer_info *timer,
                     enum send_mode mode, size_t bytes, MPI_Comm comm)
{
    const struct kernel *k = cfg->kernel;
    const char *mode_name = k->modes ? send_mode_names[mode] : NULL;
    int world;
    CHECK_MPI(MPI_Comm_size(comm, &world));
    struct kcase c = {.cfg = cfg, .comm = comm,
                      .ranks = k->max_ranks ? k->max_ranks : world,
                      .mode = mode, .bytes = bytes,
                      .validate = cfg->validate};
    CHECK_MPI(MPI_Comm_rank(comm, &c.rank));
    struct phases phases = {0};
    if (k->phases) {
        while (k->phases[phases.count])
            phases.count++;
        phases.acc = xcalloc((size_t)phases.count, sizeof *phases.acc);
        c.phases = &phases;
    }
    bool active = c.rank < c.ranks;

    check_case_begin(k->name, mode_name, bytes);
    if (c.rank == 0)
        record_case_start(k->name, mode_name, bytes);
    const char *reason = k->unsupported ? k->unsupported(&c) : NULL;
    if (reason) {
        if (c.rank == 0)
            record_skip(k->name, mode_name, bytes, reason);
        check_case_end();
        return false;
    }

    if (active)
        k->setup(&c);
    uint64_t warmup = 0;
    double t_iter = probe(k, &c, active, timer, &warmup);
    long long batch = batch_size(timer, t_iter);
    int n = sample_count(cfg, t_iter, batch);
    double *samples = xcalloc((size_t)n, sizeof *samples);
    double *phase_samples = xcalloc((size_t)phases.count * (size_t)n,
                                    sizeof *phase_samples);
    for (int i = 0; i < n; i++) {
        samples[i] = timed_run(k, &c, active, (uint64_t)batch) / (double)batch;
        for (int p = 0; p < phases.count; p++)
            phase_samples[(size_t)p * (size_t)n + (size_t)i] =
                phases.acc[p] / (double)batch;
    }

    struct case_record r = {
        .kernel = k->name, .send_mode = mode_name, .bytes = bytes,
        .ranks = c.ranks, .window = c.window, .batch = batch,
        .warmup_iterations = warmup, .validated = cfg->validate,
        .timed_by = k->timed_by, .samples = n};
    gather_and_record(k, &c, &r, samples, phase_samples);
    if (active)
        k->teardown(&c);
    free(samples);
    free(phase_samples);
    free(phases.acc);
    check_case_end();
    return true;
}
