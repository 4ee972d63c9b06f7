/* The one timing loop (docs/native.md, "One timing loop"). Kernels supply
 * run_once; only the loop, its sync methods (sync.h) and what they share
 * (sampling.h) read the timer, so every kernel is measured the same way: a
 * probe that doubles as warm-up, then samples started by the case's sync
 * method, as many as --iters, --min-time or --precision ask for; per-rank
 * samples gathered to rank 0, which writes the record (records.c). */
#include "timing.h"

#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "ceiling.h"
#include "check.h"
#include "jsonl.h"
#include "kernel.h"
#include "options.h"
#include "precision.h"
#include "records.h"
#include "sampling.h"
#include "sync.h"

#define PROBE_MIN_S 2.5e-4
#define PROBE_MAX_ITERATIONS ((uint64_t)1 << 20)
/* --precision: a first round of --min-samples samples, then rounds sized by
 * the precision reached so far (next_factor), so the checks cost O(log n)
 * sorts. Below the 6 samples a 95% CI of the median needs, the precision
 * counts as not reached: the next round grows by PRECISION_MAX_GROWTH, if
 * --max-time leaves room for it. */
#define PRECISION_GROWTH 1.2
#define PRECISION_MAX_GROWTH 4.0

/* Probes of n = 1, 2, 4, ... iterations after a barrier, all of them
 * warm-up. A probe whose slowest rank lasts PROBE_MIN_S is repeated with the
 * same n, and the probing ends when the repeat lasts that long too: a single
 * slow probe (first touch, connection set-up, the process descheduled)
 * neither ends the warm-up nor inflates the estimate. Returns seconds per
 * iteration, the same on every rank: the shorter of the two long probes over
 * n. A probe too short to register counts as one timer step, never as zero. */
static double probe(struct sampling *s, uint64_t *warmup)
{
    double long_probe = 0;
    for (uint64_t n = 1;;) {
        double local = sampling_barrier_batch(s, n), slowest;
        CHECK_MPI(MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, s->c->comm));
        *warmup += n;
        if (slowest >= PROBE_MIN_S && long_probe > 0)
            return fmin(long_probe, slowest) / (double)n;
        if (slowest >= PROBE_MIN_S) {
            long_probe = slowest;
        } else if (n >= PROBE_MAX_ITERATIONS) {
            return fmax(slowest, s->timer->resolution_s) / (double)n;
        } else {
            long_probe = 0;
            n *= 2;
        }
    }
}

/* --iters, or enough samples of sample_s each to fill --min-time. */
static int sample_count(const struct config *cfg, double sample_s)
{
    if (cfg->iters > 0)
        return (int)cfg->iters;
    double n = ceil(cfg->min_time_s / sample_s);
    return (int)fmin(fmax(n, (double)cfg->min_samples), (double)cfg->max_samples);
}

/* The kernel's samples from..to-1 at rank 0 (values[i]): its own, or the
 * maximum over the ranks taking part, as the case record defines them. */
static void sample_values(const struct sampling *s, int from, int to, double *values)
{
    const struct kcase *c = s->c;
    int n = to - from;
    double *mine = xcalloc((size_t)n, sizeof *mine);
    bool counts = c->rank == 0 || (s->kernel->timed_by == TIMED_BY_MAX && c->rank < c->ranks);
    for (int i = 0; counts && i < n; i++)
        mine[i] = s->samples[from + i];
    CHECK_MPI(MPI_Reduce(mine, c->rank == 0 ? values + from : NULL, n, MPI_DOUBLE, MPI_MAX, 0,
                         s->comm));
    free(mine);
}

/* How many times the samples so far the next round should reach. The CI's
 * width falls as 1/sqrt(n), so (reached / target)^2 times as many samples
 * would just do; a tenth more covers the estimate's own noise. Each round
 * grows by at least PRECISION_GROWTH and at most PRECISION_MAX_GROWTH, so an
 * early wild estimate cannot run far past what is needed. */
static double next_factor(double reached, double target)
{
    double factor = 1.1 * (reached / target) * (reached / target);
    return fmin(fmax(factor, PRECISION_GROWTH), PRECISION_MAX_GROWTH);
}

/* --precision: samples in growing rounds until the 95% CI of the median
 * of the kernel's samples is within +-precision of it, or --max-time or
 * --max-samples stops the case short (then marked capped). Rank 0 decides
 * after each round and tells the ranks sampling how many to take next.
 * Returns rank 0's wall time from the first sample to the last. */
static double precision_samples(struct sampling *s, bool *capped)
{
    const struct config *cfg = s->c->cfg;
    bool root = s->c->rank == 0;
    double *values = root ? xcalloc((size_t)s->cap, sizeof *values) : NULL;
    int next = (int)fmin((double)cfg->min_samples, s->cap);
    double start = MPI_Wtime(), spent = 0;
    for (int done = 0;;) {
        s->sync->take(s, done, next);
        sample_values(s, done, next, values);
        done = next;
        int plan[2] = {0, 0}; /* samples to take next (0: stop), capped */
        if (root) {
            spent = MPI_Wtime() - start;
            double per_sample = spent / done;
            double reached_now = precision_reached(values, s->late, done);
            bool reached = reached_now <= cfg->precision;
            double room = floor((cfg->max_time_s - spent) / per_sample);
            double grow = fmin(fmax(ceil(done * next_factor(reached_now, cfg->precision)),
                                    done + 1.0),
                               fmin(done + room, (double)s->cap));
            if (!reached && grow > done)
                plan[0] = (int)grow;
            plan[1] = !reached && plan[0] == 0;
        }
        CHECK_MPI(MPI_Bcast(plan, 2, MPI_INT, 0, s->comm));
        if (plan[0] == 0) {
            s->n = done;
            *capped = plan[1];
            break;
        }
        next = plan[0];
    }
    free(values);
    return spent;
}

/* n values from every rank to rank 0 (NULL elsewhere): [world][n]. */
static double *gather(const struct kcase *c, const double *mine, int n)
{
    int world;
    CHECK_MPI(MPI_Comm_size(c->comm, &world));
    double *all = c->rank == 0 ? xcalloc((size_t)world * (size_t)n, sizeof *all) : NULL;
    CHECK_MPI(MPI_Gather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, c->comm));
    return all;
}

/* The rank, among the first `ranks`, whose median of its n samples at all
 * ([rank][n]) is the largest; late samples (window starts, late[i] set) and
 * those a --late rank was made late in left out. */
static int slowest_rank(const double *all, int ranks, int n, const unsigned char *late,
                        const struct late *skew)
{
    double *mine = xcalloc((size_t)n + 1, sizeof *mine), worst = -1;
    int slowest = 0;
    for (int rank = 0; rank < ranks; rank++) {
        int kept = 0;
        for (int i = 0; i < n; i++)
            if ((!late || !late[i]) && late_delay(skew, i) == 0)
                mine[kept++] = all[(size_t)rank * n + i];
        double median = kept ? median_in_place(mine, kept) : 0;
        if (median > worst) {
            worst = median;
            slowest = rank;
        }
    }
    free(mine);
    return slowest;
}

/* Gathers every rank's samples (and phases) to rank 0, which writes the
 * case record; the kernel's report adds its fields. samples_s is the
 * kernel's sample: rank 0's, or for timed_by max the per-sample maximum over
 * the ranks taking part; a collective's (one call per sample) are its
 * slowest rank's, the rank whose median call is longest, as OSU's and IMB's
 * maximum is the slowest rank's mean. Per call, the maximum over ranks that
 * leave a barrier one after another picks whichever rank left first and
 * waited for the others, a role that moves from call to call: on 4 ranks
 * sharing 2 cores it read 1.2-1.5x the slowest rank's own median. */
static void gather_and_record(const struct sampling *s, struct case_record *r)
{
    const struct kcase *c = s->c;
    const struct kernel *k = s->kernel;
    int n = r->samples, phases = c->phases ? c->phases->count : 0;
    double *all = gather(c, s->samples, n);
    double **phase_all = xcalloc((size_t)phases + 1, sizeof *phase_all);
    for (int p = 0; p < phases; p++)
        phase_all[p] = gather(c, s->phase_samples + (size_t)p * (size_t)s->cap, n);
    struct jsonl j;
    if (c->rank == 0) {
        int compared = k->timed_by == TIMED_BY_MAX ? c->ranks : 1;
        double *per_sample = xcalloc((size_t)n, sizeof *per_sample);
        r->slowest_rank = compared > 1 && kernel_sample_kind(k) == SAMPLE_CALL
                              ? slowest_rank(all, compared, n, s->late, &c->cfg->late)
                              : -1;
        int first = r->slowest_rank >= 0 ? r->slowest_rank : 0;
        for (int i = 0; i < n; i++) {
            per_sample[i] = all[(size_t)first * n + i];
            for (int rank = 1; r->slowest_rank < 0 && rank < compared; rank++)
                per_sample[i] = fmax(per_sample[i], all[(size_t)rank * n + i]);
        }
        r->samples_s = per_sample;
        r->rank_samples_s = all;
        r->phase_count = phases;
        r->phase_names = k->phases;
        r->phase_samples_s = (const double *const *)phase_all;
        record_case_open(&j, r);
        free(per_sample);
    }
    free(all);
    for (int p = 0; p < phases; p++)
        free(phase_all[p]);
    free(phase_all);
    if (k->report)
        k->report((struct kcase *)c, c->rank == 0 ? &j : NULL);
    if (c->rank == 0)
        record_case_close(&j);
}

bool timing_run_case(const struct config *cfg, const struct timer_info *timer, const char *variant,
                     enum send_mode mode, size_t bytes, MPI_Comm comm)
{
    const struct kernel *k = cfg->kernel;
    const char *mode_name = k->modes ? send_mode_names[mode] : NULL;
    int world;
    CHECK_MPI(MPI_Comm_size(comm, &world));
    struct kcase c = {
        .cfg = cfg,
        .comm = comm,
        .ranks = k->max_ranks ? k->max_ranks : world,
        .mode = mode,
        .bytes = bytes,
        .validate = cfg->validate,
        .variant = variant};
    CHECK_MPI(MPI_Comm_rank(comm, &c.rank));
    c.phases = sampling_phases_new(k->phases);
    int phases = c.phases ? c.phases->count : 0;

    check_case_begin(k->name, mode_name, bytes);
    if (c.rank == 0) {
        record_variant(cfg->each.key, variant);
        record_case_start(k->name, mode_name, bytes);
    }
    const char *reason = kcase_unsupported(&c);
    if (reason) {
        if (c.rank == 0)
            record_skip(k->name, mode_name, bytes, reason);
        sampling_phases_free(c.phases);
        check_case_end();
        return false;
    }

    struct sampling s = {
        .sync = cfg->sync,
        .kernel = k,
        .c = &c,
        .timer = timer,
        .active = c.rank < c.ranks,
        .batch = 1,
        .comm = MPI_COMM_NULL,
        .sample_phase = -1};
    for (int p = 0; k->sample_phase && p < phases; p++)
        if (strcmp(k->phases[p], k->sample_phase) == 0)
            s.sample_phase = p;
    s.sync->begin(&s, comm);
    double began = MPI_Wtime();
    if (s.active)
        k->setup(&c);
    uint64_t warmup = 0;
    /* A forced algorithm the library cannot run here fails its first call,
     * in the probe, on every rank alike: the case is skipped with its words. */
    jmp_buf refused;
    if (kcase_forced(&c) && setjmp(refused)) {
        if (c.rank == 0)
            record_skip(k->name, mode_name, bytes, check_refusal());
        if (s.active)
            k->teardown(&c);
        s.sync->end(&s);
        sampling_phases_free(c.phases);
        check_case_end();
        return false;
    }
    check_refusable(kcase_forced(&c) ? &refused : NULL);
    double t_iter = probe(&s, &warmup);
    check_refusable(NULL);
    s.n = sample_count(cfg, s.sync->plan(&s, comm, t_iter));
    bool adaptive = cfg->iters == 0 && cfg->precision > 0, capped = false;
    s.cap = adaptive ? (int)cfg->max_samples : s.n;
    s.samples = xcalloc((size_t)s.cap, sizeof *s.samples);
    s.phase_samples = xcalloc((size_t)phases * (size_t)s.cap, sizeof *s.phase_samples);
    double sampling_s = 0;
    if (s.comm != MPI_COMM_NULL && adaptive)
        sampling_s = precision_samples(&s, &capped);
    else if (s.comm != MPI_COMM_NULL)
        s.sync->take(&s, 0, s.n);
    s.sync->finish(&s, comm);
    if (adaptive) /* ranks that took no samples gather as many as were taken */
        CHECK_MPI(MPI_Bcast(&s.n, 1, MPI_INT, 0, comm));

    struct case_record r = {
        .kernel = k->name,
        .send_mode = mode_name,
        .bytes = bytes,
        .ranks = c.ranks,
        .window = c.window,
        .batch = s.batch,
        .warmup_iterations = warmup,
        .validated = cfg->validate,
        .timed_by = k->timed_by,
        .samples = s.n,
        .sync = s.sync->name,
        .sample = sample_kind_names[kernel_sample_kind(k)],
        .adaptive = adaptive,
        .precision_target = cfg->precision,
        .max_time_s = cfg->max_time_s,
        .sampling_s = sampling_s,
        .capped = capped,
        .sync_report = s.sync->report,
        .sampled = &s,
        .cold_cache = cfg->cold_cache && k->cold_cache,
        .llc_bytes = cache_llc_bytes(),
        .working_set_bytes = c.working_set};
    struct ceiling ceiling = ceiling_measure(&c); /* after the samples: none is touched */
    r.copy_s = ceiling.copy_s;
    r.copy_ranks = ceiling.ranks;
    r.case_s = MPI_Wtime() - began;
    gather_and_record(&s, &r);
    if (s.active)
        k->teardown(&c);
    s.sync->end(&s);
    free(s.samples);
    free(s.phase_samples);
    sampling_phases_free(c.phases);
    check_case_end();
    return true;
}
