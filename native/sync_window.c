/* --sync window (docs/native.md), after SKaMPI and ReproMPI: in a round
 * starting at t0, sample j starts at t0 + j * window on rank 0's clock,
 * which each rank finds on its own clock by adding its offset. The rank
 * busy-waits until then, makes one call and records its end minus the
 * agreed start. A rank already past the start marks the sample late.
 * With --late, one rank waits a delay first in some samples (late_*). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "clocksync.h"
#include "jsonl.h"
#include "kernel.h"
#include "options.h"
#include "sync.h"
#include "timer.h"

/* A window is WINDOW_FACTOR probe iterations, at least WINDOW_MIN_S, so
 * that one call, the ranks' clock error and the loop's bookkeeping fit in
 * it. Windows come in rounds of ROUND_S (at least one window), each started
 * at a newly agreed time: a rank descheduled for milliseconds makes the
 * rest of its round late, not every later sample. */
#define WINDOW_FACTOR 4.0
#define WINDOW_MIN_S 10e-6
#define ROUND_S 1e-3
#define ROUND_LEAD_BARRIERS 4.0
#define IDLE_NAP_S 1e-3
/* --late: a late sample's window holds its delay, and this much more for the
 * sleep's overshoot (80-100 us here, a scheduler tick on a busy host), so the
 * next sample still starts on time. */
#define LATE_SLACK_S 1e-3

/* The method's own state, from window_begin to window_end. */
struct window {
    double window_s;
    struct clock_sync clocks; /* the ranks taking part only */
    /* --late, on rank 0, [n]: how late the sample's late rank entered its
     * call after the agreed start, or with --late-placebo how long it waited
     * after it: the delay as it was, measured (0: a punctual sample). */
    double *waited_s;
};

/* The late rank of a sample: the one given, or drawn from the sample's
 * index by a hash every rank computes alike (splitmix64), without a
 * message between them. */
static int late_rank(const struct late *late, int sample, int ranks)
{
    if (late->rank != LATE_RANDOM)
        return late->rank;
    uint64_t z = (uint64_t)sample + 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return (int)((z ^ (z >> 31)) % (uint64_t)ranks);
}

/* Sleeping gives the late rank's core to others, as a rank held up by I/O
 * or the OS would; the time it overshoots is measured, not assumed. */
static void late_wait(const struct late *late, double seconds)
{
    double until = MPI_Wtime() + seconds;
    if (!late->spin)
        nanosleep(
            &(struct timespec){
                .tv_sec = (time_t)seconds, .tv_nsec = (long)(fmod(seconds, 1.0) * 1e9)},
            NULL);
    while (MPI_Wtime() < until)
        ;
}

/* Window rounds and clock synchronisation involve only the ranks taking
 * part, and happen before setup: from then on a kernel may keep a receive
 * posted (pingpong's ready mode) that no other message may meet. */
static void window_begin(struct sampling *s, MPI_Comm case_comm)
{
    struct window *w = xcalloc(1, sizeof *w);
    s->method = w;
    CHECK_MPI(MPI_Comm_split(case_comm, s->active ? 0 : MPI_UNDEFINED, s->c->rank, &s->comm));
    if (s->active)
        clock_sync_estimate(&w->clocks, s->comm);
}

/* Rank 0 sizes the window from the probe and announces it, so every rank
 * runs the same number of calls. One call per sample. */
static double window_plan(struct sampling *s, MPI_Comm case_comm, double t_iter)
{
    struct window *w = s->method;
    const struct late *late = &s->c->cfg->late;
    double longest = 0;
    for (size_t i = 0; i < late->n; i++)
        longest = fmax(longest, late->delays_s[i]);
    if (late->n && late->rank >= s->c->ranks)
        die("--late: rank %d is not one of the case's %d ranks", late->rank, s->c->ranks);
    /* a late sample's call ends its delay after a punctual one's */
    if (s->c->rank == 0)
        w->window_s = fmax(WINDOW_FACTOR * t_iter, WINDOW_MIN_S) +
                      (late->n ? longest + LATE_SLACK_S : 0);
    CHECK_MPI(MPI_Bcast(&w->window_s, 1, MPI_DOUBLE, 0, case_comm));
    s->batch = 1;
    return w->window_s;
}

/* The start of a round, on rank 0's clock: the latest rank's clock
 * reading, plus time for the allreduce's result to reach every rank and
 * for the ranks' clock errors (each within half its round trip). */
static double round_start(const struct sampling *s, double offset)
{
    const struct window *w = s->method;
    double now = MPI_Wtime() - offset, latest, worst_rtt = 0;
    CHECK_MPI(MPI_Allreduce(&now, &latest, 1, MPI_DOUBLE, MPI_MAX, s->comm));
    for (int r = 0; r < w->clocks.ranks; r++)
        worst_rtt = fmax(worst_rtt, w->clocks.rtt_s[r]);
    return latest + fmax(w->window_s, ROUND_LEAD_BARRIERS * s->timer->barrier_s) + worst_rtt;
}

static void *grown(void *p, int n, size_t size)
{
    void *more = realloc(p, (size_t)n * size);
    if (!more)
        die("cannot allocate %d sample flags", n);
    return more;
}

static void window_take(struct sampling *s, int from, int to)
{
    struct kcase *c = s->c;
    struct window *w = s->method;
    const struct late *skew = &c->cfg->late;
    unsigned char *late = xcalloc((size_t)(to - from), 1);
    double *waited = xcalloc((size_t)(to - from), sizeof *waited);
    double offset = w->clocks.offset_s[c->rank];
    int per_round = (int)fmax(ceil(ROUND_S / w->window_s), 1.0), ranks;
    CHECK_MPI(MPI_Comm_size(s->comm, &ranks));
    double t0 = 0;
    for (int i = from; i < to; i++) {
        if ((i - from) % per_round == 0)
            t0 = round_start(s, offset) - (i * w->window_s);
        double start = t0 + i * w->window_s + offset;
        double now = MPI_Wtime();
        late[i - from] = now > start;
        while (now < start)
            now = MPI_Wtime();
        double delay = skew->n && c->rank == late_rank(skew, i, ranks) ? late_delay(skew, i) : 0;
        if (delay > 0 && !skew->placebo) {
            late_wait(skew, delay);
            waited[i - from] = MPI_Wtime() - start;
        }
        sampling_phases_start(s, start);
        s->kernel->run_once(c);
        sampling_store(s, i, MPI_Wtime() - start, 1.0);
        if (delay > 0 && skew->placebo) {
            double end = MPI_Wtime();
            late_wait(skew, delay);
            waited[i - from] = MPI_Wtime() - end;
        }
        sampling_next_iteration(s);
    }
    if (c->rank == 0) {
        s->late = grown(s->late, to, 1);
        if (skew->n)
            w->waited_s = grown(w->waited_s, to, sizeof *w->waited_s);
    }
    CHECK_MPI(MPI_Reduce(late, c->rank == 0 ? s->late + from : NULL, to - from, MPI_UNSIGNED_CHAR,
                         MPI_MAX, 0, s->comm));
    if (skew->n)
        CHECK_MPI(MPI_Reduce(waited, c->rank == 0 ? w->waited_s + from : NULL, to - from,
                             MPI_DOUBLE, MPI_MAX, 0, s->comm));
    free(late);
    free(waited);
}

/* Ranks the kernel does not use wait for the others to finish without
 * spinning in the gather that follows, which would take CPU time from the
 * ranks measured: a nonblocking barrier, tested between naps. */
static void window_finish(struct sampling *s, MPI_Comm case_comm)
{
    MPI_Request done;
    CHECK_MPI(MPI_Ibarrier(case_comm, &done));
    if (s->active) {
        CHECK_MPI(MPI_Wait(&done, MPI_STATUS_IGNORE));
        return;
    }
    for (int finished = 0;;) {
        CHECK_MPI(MPI_Test(&done, &finished, MPI_STATUS_IGNORE));
        if (finished)
            return;
        nanosleep(&(struct timespec){.tv_nsec = (long)(IDLE_NAP_S * 1e9)}, NULL);
    }
}

/* The window, the samples started late (their indices, ascending) and
 * the clocks, so that a reader can leave those samples out and bound each
 * rank's start error by half its round trip. */
static void window_report(const struct sampling *s, struct jsonl *j)
{
    const struct window *w = s->method;
    jsonl_num(j, "window_s", w->window_s);
    jsonl_open(j, "invalid", '[');
    for (int i = 0; i < s->n; i++)
        if (s->late && s->late[i])
            jsonl_int(j, NULL, i);
    jsonl_close(j, ']');
    jsonl_nums(j, "clock_offsets_s", w->clocks.offset_s, w->clocks.ranks);
    jsonl_nums(j, "clock_rtt_s", w->clocks.rtt_s, w->clocks.ranks);
    const struct late *late = &s->c->cfg->late;
    if (!late->n)
        return;
    jsonl_open(j, "late", '{');
    if (late->rank == LATE_RANDOM)
        jsonl_str(j, "rank", "random");
    else
        jsonl_int(j, "rank", late->rank);
    jsonl_nums(j, "delays_s", late->delays_s, (int)late->n);
    jsonl_str(j, "wait", late->spin ? "spin" : "sleep");
    jsonl_bool(j, "placebo", late->placebo);
    jsonl_open(j, "ranks", '[');
    for (int i = 0; i < s->n; i++)
        jsonl_int(j, NULL, late_delay(late, i) > 0 ? late_rank(late, i, w->clocks.ranks) : -1);
    jsonl_close(j, ']');
    jsonl_nums(j, "waited_s", w->waited_s, s->n);
    jsonl_close(j, '}');
}

static void window_end(struct sampling *s)
{
    struct window *w = s->method;
    free(s->late);
    s->late = NULL;
    free(w->waited_s);
    if (s->comm != MPI_COMM_NULL) {
        clock_sync_free(&w->clocks);
        CHECK_MPI(MPI_Comm_free(&s->comm));
    }
    free(w);
    s->method = NULL;
}

const struct sync_method sync_window = {
    .name = "window",
    .begin = window_begin,
    .plan = window_plan,
    .take = window_take,
    .finish = window_finish,
    .report = window_report,
    .end = window_end,
};
