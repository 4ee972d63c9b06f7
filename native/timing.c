/* The one timing loop (docs/native.md, "One timing loop"). Kernels supply
 * run_once; only this file reads the timer, so every kernel is measured the
 * same way: a probe that doubles as warm-up, then samples started either
 * by a barrier (batches sized against the timer's cost) or, with --sync
 * window, one call each at start times agreed on synchronised clocks;
 * per-rank samples gathered to rank 0. */
#include "timing.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "clocksync.h"
#include "jsonl.h"
#include "kernel.h"
#include "options.h"
#include "precision.h"
#include "records.h"

#define CALIBRATION_READS 100000
#define CALIBRATION_BARRIERS 1000
#define PROBE_MIN_S 1e-3
#define PROBE_MAX_ITERATIONS ((uint64_t)1 << 20)
/* Each sample spans at least this many times the cost of reading the clock
 * and of the barrier that starts it, so neither the reads nor the ranks'
 * uneven exit from the barrier is more than 1% of what is measured. */
#define TIMER_COST_FACTOR 100.0
/* The longest sample the barrier's cost alone asks for (100 us: 100x a
 * 1 us barrier). */
#define BARRIER_SPAN_MAX_S 1e-4
/* Bounds the integer conversion only; reached by a kernel doing nothing. */
#define MAX_BATCH 1073741824.0
/* --sync window: a window is WINDOW_FACTOR probe iterations, at least
 * WINDOW_MIN_S, so that one call, the ranks' clock error and the loop's
 * bookkeeping fit in it. Windows come in rounds of ROUND_S (at least one
 * window), each started at a newly agreed time: a rank descheduled for
 * milliseconds makes the rest of its round late, not every later sample. */
#define WINDOW_FACTOR 4.0
#define WINDOW_MIN_S 10e-6
#define ROUND_S 1e-3
#define ROUND_LEAD_BARRIERS 4.0
#define IDLE_NAP_S 1e-3
/* --precision: at least 10 samples (a 95% CI of the median needs 6), then
 * rounds sized by the precision reached so far (next_factor), so the checks
 * cost O(log n) sorts. */
#define PRECISION_MIN_SAMPLES 10.0
#define PRECISION_GROWTH 1.2
#define PRECISION_MAX_GROWTH 4.0

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

static void phases_start(struct phases *p, double start)
{
    if (!p)
        return;
    p->mark = start;
    for (int i = 0; i < p->count; i++)
        p->acc[i] = 0;
}

/* n iterations between two timer reads, started by a barrier; this rank's
 * elapsed seconds. Idle ranks only take part in the barrier. */
static double timed_run(const struct kernel *k, struct kcase *c, bool active,
                        uint64_t n)
{
    CHECK_MPI(MPI_Barrier(c->comm));
    double start = MPI_Wtime();
    phases_start(c->phases, start);
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
    /* The barrier's share is capped: on oversubscribed cores one barrier
     * takes milliseconds, and 100x that made every sample last seconds. */
    double clock = fmax(timer->overhead_s, timer->resolution_s);
    double target = fmax(TIMER_COST_FACTOR * clock,
                         fmin(TIMER_COST_FACTOR * timer->barrier_s, BARRIER_SPAN_MAX_S));
    double batch = ceil(target / t_iter);
    return (long long)fmin(fmax(batch, 1.0), MAX_BATCH);
}

/* --iters, or enough samples of sample_s each to fill --min-time. */
static int sample_count(const struct config *cfg, double sample_s)
{
    if (cfg->iters > 0)
        return (int)cfg->iters;
    double n = ceil(cfg->min_time_s / sample_s);
    return (int)fmin(fmax(n, (double)cfg->min_samples),
                     (double)cfg->max_samples);
}

/* How a case's samples were taken, for its record. */
struct sampling {
    enum sync_method sync;
    long long batch;
    int n;   /* samples taken */
    int cap; /* room in the sample arrays; the stride of phase samples */
    bool adaptive; /* --precision decides the count (no --iters) */
    /* --precision only: */
    bool capped;       /* stopped by --max-time or --max-samples */
    double sampling_s; /* rank 0's wall time from first to last sample */
    /* --sync window only: */
    MPI_Comm active;      /* the ranks taking part; MPI_COMM_NULL elsewhere */
    struct clock_sync clocks;
    double window_s;
    unsigned char *late;  /* [cap] on rank 0: some rank started sample i late */
};

/* --sync barrier: samples from..to-1, each `batch` iterations after a
 * barrier, in seconds per iteration. */
static void barrier_samples(const struct kernel *k, struct kcase *c,
                            bool active, const struct sampling *s, int from,
                            int to, double *samples, double *phase_samples)
{
    for (int i = from; i < to; i++) {
        samples[i] = timed_run(k, c, active, (uint64_t)s->batch) /
                     (double)s->batch;
        for (int p = 0; c->phases && p < c->phases->count; p++)
            phase_samples[(size_t)p * (size_t)s->cap + (size_t)i] =
                c->phases->acc[p] / (double)s->batch;
    }
}

/* Rank 0 sizes the window from the probe and announces it with the sample
 * count, so every rank runs the same number of calls. */
static void window_plan(const struct config *cfg, const struct kcase *c,
                        double t_iter, struct sampling *s)
{
    double plan[2];
    if (c->rank == 0) {
        plan[0] = fmax(WINDOW_FACTOR * t_iter, WINDOW_MIN_S);
        plan[1] = sample_count(cfg, plan[0]);
    }
    CHECK_MPI(MPI_Bcast(plan, 2, MPI_DOUBLE, 0, c->comm));
    s->window_s = plan[0];
    s->n = (int)plan[1];
}

/* The start of a round, on rank 0's clock: the latest rank's clock
 * reading, plus time for the allreduce's result to reach every rank and
 * for the ranks' clock errors (each within half its round trip). */
static double round_start(const struct sampling *s, double offset,
                          const struct timer_info *timer)
{
    double now = MPI_Wtime() - offset, latest, worst_rtt = 0;
    CHECK_MPI(MPI_Allreduce(&now, &latest, 1, MPI_DOUBLE, MPI_MAX, s->active));
    for (int r = 0; r < s->clocks.ranks; r++)
        worst_rtt = fmax(worst_rtt, s->clocks.rtt_s[r]);
    return latest + fmax(s->window_s, ROUND_LEAD_BARRIERS * timer->barrier_s) +
           worst_rtt;
}

/* --sync window (after SKaMPI and ReproMPI, docs/native.md): in a round
 * starting at t0, sample j starts at t0 + j * window on rank 0's clock,
 * which each rank finds on its own clock by adding its offset. The rank
 * busy-waits until then, makes one call and records its end minus the
 * agreed start. A rank already past the start marks the sample late. */
static void window_samples(const struct kernel *k, struct kcase *c,
                           const struct timer_info *timer, struct sampling *s,
                           int from, int to, double *samples,
                           double *phase_samples)
{
    unsigned char *late = xcalloc((size_t)(to - from), 1);
    double offset = s->clocks.offset_s[c->rank];
    int per_round = (int)fmax(ceil(ROUND_S / s->window_s), 1.0);
    double t0 = 0;
    for (int i = from; i < to; i++) {
        if ((i - from) % per_round == 0)
            t0 = round_start(s, offset, timer) - (i * s->window_s);
        double start = t0 + i * s->window_s + offset;
        double now = MPI_Wtime();
        late[i - from] = now > start;
        while (now < start)
            now = MPI_Wtime();
        phases_start(c->phases, start);
        k->run_once(c);
        c->iteration++;
        samples[i] = MPI_Wtime() - start;
        for (int p = 0; c->phases && p < c->phases->count; p++)
            phase_samples[(size_t)p * (size_t)s->cap + (size_t)i] =
                c->phases->acc[p];
    }
    CHECK_MPI(MPI_Reduce(late, c->rank == 0 ? s->late + from : NULL,
                         to - from, MPI_UNSIGNED_CHAR, MPI_MAX, 0, s->active));
    free(late);
}

/* Samples from..to-1 by the case's synchronisation, on the ranks that take
 * them: every rank of the case with barriers, the active ones in windows. */
static void take_range(const struct kernel *k, struct kcase *c,
                       const struct timer_info *timer, bool active,
                       struct sampling *s, int from, int to, double *samples,
                       double *phase_samples)
{
    if (s->sync == SYNC_BARRIER)
        barrier_samples(k, c, active, s, from, to, samples, phase_samples);
    else
        window_samples(k, c, timer, s, from, to, samples, phase_samples);
}

/* The kernel's samples from..to-1 at rank 0 (values[i]): its own, or the
 * maximum over the ranks taking part, as the case record defines them. */
static void sample_values(const struct kernel *k, const struct kcase *c,
                          MPI_Comm comm, const double *samples, int from,
                          int to, double *values)
{
    int n = to - from;
    double *mine = xcalloc((size_t)n, sizeof *mine);
    bool counts = c->rank == 0 ||
                  (k->timed_by == TIMED_BY_MAX && c->rank < c->ranks);
    for (int i = 0; counts && i < n; i++)
        mine[i] = samples[from + i];
    CHECK_MPI(MPI_Reduce(mine, c->rank == 0 ? values + from : NULL, n,
                         MPI_DOUBLE, MPI_MAX, 0, comm));
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
 * after each round and tells the ranks sampling how many to take next. */
static void precision_samples(const struct kernel *k, struct kcase *c,
                              const struct timer_info *timer, bool active,
                              struct sampling *s, MPI_Comm comm,
                              double *samples, double *phase_samples)
{
    const struct config *cfg = c->cfg;
    double *values = c->rank == 0 ? xcalloc((size_t)s->cap, sizeof *values)
                                  : NULL;
    int next = (int)fmin(fmax((double)cfg->min_samples, PRECISION_MIN_SAMPLES),
                         s->cap);
    double start = MPI_Wtime();
    for (int done = 0;;) {
        take_range(k, c, timer, active, s, done, next, samples, phase_samples);
        sample_values(k, c, comm, samples, done, next, values);
        done = next;
        int plan[2] = {0, 0}; /* samples to take next (0: stop), capped */
        if (c->rank == 0) {
            double spent = MPI_Wtime() - start, per_sample = spent / done;
            s->sampling_s = spent;
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
        CHECK_MPI(MPI_Bcast(plan, 2, MPI_INT, 0, comm));
        if (plan[0] == 0) {
            s->n = done;
            s->capped = plan[1];
            break;
        }
        next = plan[0];
    }
    free(values);
}

/* Ranks the kernel does not use wait for the others to finish without
 * spinning in the gather that follows, which would take CPU time from the
 * ranks measured: a nonblocking barrier, tested between naps. */
static void idle_until_done(MPI_Comm comm, bool active)
{
    MPI_Request done;
    CHECK_MPI(MPI_Ibarrier(comm, &done));
    if (active) {
        CHECK_MPI(MPI_Wait(&done, MPI_STATUS_IGNORE));
        return;
    }
    for (int finished = 0;;) {
        CHECK_MPI(MPI_Test(&done, &finished, MPI_STATUS_IGNORE));
        if (finished)
            return;
        nanosleep(&(struct timespec){.tv_nsec = (long)(IDLE_NAP_S * 1e9)},
                  NULL);
    }
}

/* The record's sync fields (docs/native.md, "Records"). */
static void record_sampling(struct jsonl *j, const struct config *cfg,
                            const struct sampling *s)
{
    jsonl_str(j, "sync", sync_method_names[s->sync]);
    if (s->adaptive) {
        jsonl_num(j, "precision_target", cfg->precision);
        jsonl_num(j, "max_time_s", cfg->max_time_s);
        jsonl_num(j, "sampling_s", s->sampling_s);
        jsonl_bool(j, "capped", s->capped);
    }
    if (s->sync != SYNC_WINDOW)
        return;
    jsonl_num(j, "window_s", s->window_s);
    jsonl_open(j, "invalid", '[');
    for (int i = 0; i < s->n; i++)
        if (s->late[i])
            jsonl_int(j, NULL, i);
    jsonl_close(j, ']');
    jsonl_open(j, "clock_offsets_s", '[');
    for (int r = 0; r < s->clocks.ranks; r++)
        jsonl_num(j, NULL, s->clocks.offset_s[r]);
    jsonl_close(j, ']');
    jsonl_open(j, "clock_rtt_s", '[');
    for (int r = 0; r < s->clocks.ranks; r++)
        jsonl_num(j, NULL, s->clocks.rtt_s[r]);
    jsonl_close(j, ']');
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
                              struct case_record *r, const struct sampling *s,
                              const double *mine, const double *phase_samples)
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
        record_sampling(&j, c->cfg, s);
        free(per_sample);
        free(all);
    }
    if (c->phases) {
        if (c->rank == 0)
            jsonl_open(&j, "phase_samples_s", '{');
        for (int p = 0; p < c->phases->count; p++) {
            double *phase = gather(c, phase_samples + (size_t)p * (size_t)s->cap, n);
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
        free(phases.acc);
        check_case_end();
        return false;
    }

    struct sampling s = {.sync = cfg->sync, .batch = 1,
                         .active = MPI_COMM_NULL};
    if (s.sync == SYNC_WINDOW) {
        /* Window rounds and clock synchronisation involve only the ranks
         * taking part. */
        CHECK_MPI(MPI_Comm_split(comm, active ? 0 : MPI_UNDEFINED, c.rank,
                                 &s.active));
        /* Before setup: from then on a kernel may keep a receive posted
         * (pingpong's ready mode) that no other message may meet. */
        if (active)
            clock_sync_estimate(&s.clocks, s.active);
    }
    if (active)
        k->setup(&c);
    uint64_t warmup = 0;
    double t_iter = probe(k, &c, active, timer, &warmup);
    if (s.sync == SYNC_WINDOW) {
        window_plan(cfg, &c, t_iter, &s);
    } else {
        s.batch = batch_size(timer, t_iter);
        s.n = sample_count(cfg, (double)s.batch * t_iter);
    }
    s.adaptive = cfg->iters == 0 && cfg->precision > 0;
    s.cap = s.adaptive ? (int)cfg->max_samples : s.n;
    double *samples = xcalloc((size_t)s.cap, sizeof *samples);
    double *phase_samples = xcalloc((size_t)phases.count * (size_t)s.cap,
                                    sizeof *phase_samples);
    if (c.rank == 0 && s.sync == SYNC_WINDOW)
        s.late = xcalloc((size_t)s.cap, 1);
    /* Window rounds involve only the active ranks; the others wait. */
    bool sampling = s.sync == SYNC_BARRIER || active;
    MPI_Comm sampling_comm = s.sync == SYNC_BARRIER ? comm : s.active;
    if (sampling && s.adaptive)
        precision_samples(k, &c, timer, active, &s, sampling_comm, samples,
                          phase_samples);
    else if (sampling)
        take_range(k, &c, timer, active, &s, 0, s.n, samples, phase_samples);
    if (s.sync == SYNC_WINDOW)
        idle_until_done(comm, active);
    if (s.adaptive) /* idle ranks gather as many samples as were taken */
        CHECK_MPI(MPI_Bcast(&s.n, 1, MPI_INT, 0, comm));

    struct case_record r = {
        .kernel = k->name, .send_mode = mode_name, .bytes = bytes,
        .ranks = c.ranks, .window = c.window, .batch = s.batch,
        .warmup_iterations = warmup, .validated = cfg->validate,
        .timed_by = k->timed_by, .samples = s.n};
    gather_and_record(k, &c, &r, &s, samples, phase_samples);
    if (active)
        k->teardown(&c);
    free(samples);
    free(phase_samples);
    free(phases.acc);
    free(s.late);
    if (s.active != MPI_COMM_NULL) {
        clock_sync_free(&s.clocks);
        CHECK_MPI(MPI_Comm_free(&s.active));
    }
    check_case_end();
    return true;
}
