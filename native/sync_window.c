/* --sync window (docs/native.md), after SKaMPI and ReproMPI: in a round
 * starting at t0, sample j starts at t0 + j * window on rank 0's clock,
 * which each rank finds on its own clock by adding its offset. The rank
 * busy-waits until then, makes one call and records its end minus the
 * agreed start. A rank already past the start marks the sample late. */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "clocksync.h"
#include "jsonl.h"
#include "kernel.h"
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

/* The method's own state, from window_begin to window_end. */
struct window {
    double window_s;
    struct clock_sync clocks; /* the ranks taking part only */
};

/* Window rounds and clock synchronisation involve only the ranks taking
 * part, and happen before setup: from then on a kernel may keep a receive
 * posted (pingpong's ready mode) that no other message may meet. */
static void window_begin(struct sampling *s, MPI_Comm case_comm)
{
    struct window *w = xcalloc(1, sizeof *w);
    s->method = w;
    CHECK_MPI(MPI_Comm_split(case_comm, s->active ? 0 : MPI_UNDEFINED,
                             s->c->rank, &s->comm));
    if (s->active)
        clock_sync_estimate(&w->clocks, s->comm);
}

/* Rank 0 sizes the window from the probe and announces it, so every rank
 * runs the same number of calls. One call per sample. */
static double window_plan(struct sampling *s, MPI_Comm case_comm,
                          double t_iter)
{
    struct window *w = s->method;
    if (s->c->rank == 0)
        w->window_s = fmax(WINDOW_FACTOR * t_iter, WINDOW_MIN_S);
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
    return latest + fmax(w->window_s, ROUND_LEAD_BARRIERS * s->timer->barrier_s) +
           worst_rtt;
}

static void window_take(struct sampling *s, int from, int to)
{
    struct kcase *c = s->c;
    const struct window *w = s->method;
    unsigned char *late = xcalloc((size_t)(to - from), 1);
    double offset = w->clocks.offset_s[c->rank];
    int per_round = (int)fmax(ceil(ROUND_S / w->window_s), 1.0);
    double t0 = 0;
    for (int i = from; i < to; i++) {
        if ((i - from) % per_round == 0)
            t0 = round_start(s, offset) - (i * w->window_s);
        double start = t0 + i * w->window_s + offset;
        double now = MPI_Wtime();
        late[i - from] = now > start;
        while (now < start)
            now = MPI_Wtime();
        sampling_phases_start(s, start);
        s->kernel->run_once(c);
        sampling_store(s, i, MPI_Wtime() - start, 1.0);
        sampling_next_iteration(s);
    }
    if (c->rank == 0) {
        unsigned char *grown = realloc(s->late, (size_t)to);
        if (!grown)
            die("cannot allocate %d late flags", to);
        s->late = grown;
    }
    CHECK_MPI(MPI_Reduce(late, c->rank == 0 ? s->late + from : NULL,
                         to - from, MPI_UNSIGNED_CHAR, MPI_MAX, 0, s->comm));
    free(late);
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
        nanosleep(&(struct timespec){.tv_nsec = (long)(IDLE_NAP_S * 1e9)},
                  NULL);
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
}

static void window_end(struct sampling *s)
{
    struct window *w = s->method;
    free(s->late);
    s->late = NULL;
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
