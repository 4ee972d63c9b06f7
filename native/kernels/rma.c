/* rma: one-sided communication from rank 0 (the origin) to rank 1 (the
 * target), as OSU Micro-Benchmarks 7.x osu_put_latency, osu_get_latency and
 * osu_acc_latency (W = 1) and osu_put_bw, osu_get_bw (W > 1) measure it
 * (docs/kernels-rma.md). One iteration is one access epoch in which the
 * origin issues W = --window operations of n bytes each, to W distinct
 * displacements of the target's window. --param operation: MPI_Put,
 * MPI_Get, or MPI_Accumulate with MPI_SUM; --param epoch: how the epoch is
 * opened and closed; --param win: MPI_Win_allocate or MPI_Win_create. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernel.h"
#include "pattern.h"

/* LC(MPI_Put) is MPI_Put_c with MPI-4 large counts, as in msg.c. */
#if MSG_LARGE_COUNT
#define LC(fn) fn##_c
#else
#define LC(fn) fn
#endif

enum operation { OP_PUT, OP_GET, OP_ACCUMULATE };
enum epoch { EPOCH_FENCE, EPOCH_LOCK, EPOCH_LOCK_ALL_FLUSH, EPOCH_PSCW };
enum win_kind { WIN_ALLOCATE, WIN_CREATE };
enum { ORIGIN = 0, TARGET = 1 };
enum { TAG_COMPLETE = 1, TAG_CHECKED };

/* MPI_SUM is not defined on MPI_BYTE. Unsigned 64-bit sums wrap modulo
 * 2^64 in C and in MPI alike, so every sum the check expects is exact. */
typedef uint64_t acc_elem;
#define ACC_TYPE MPI_UINT64_T

static const char *const operations[] = {"put", "get", "accumulate", NULL};
static const struct element operation_elements[] = {
    {NULL, 0}, {NULL, 0}, {"uint64", sizeof(acc_elem)}};
static const char *const epochs[] = {"fence", "lock", "lock_all_flush", "pscw", NULL};
static const char *const win_kinds[] = {"allocate", "create", NULL};
/* clang-format off */
static const struct kparam rma_params[] = {
    {.name = "operation", PARAM_CHOICE, "put",
     "MPI_Put, MPI_Get, or MPI_Accumulate (MPI_SUM on uint64)", operations,
     operation_elements},
    {.name = "epoch", PARAM_EPOCH, "fence",
     "how each access epoch is opened and closed", epochs, NULL},
    {.name = "win", PARAM_CHOICE, "allocate",
     "window memory from MPI_Win_allocate, or MPI_Win_create on our own",
     win_kinds, NULL},
    {0},
};
/* clang-format on */

struct rma {
    enum operation op;
    enum epoch epoch;
    MPI_Comm pair; /* ranks 0 and 1: the window's group */
    MPI_Win win;
    MPI_Group peer;       /* pscw: the other rank */
    struct msg_type type; /* put, get: n bytes */
    int acc_count;        /* accumulate: n / 8 elements */
    size_t span;          /* W * n: the bytes one epoch touches */
    unsigned char *buf;   /* origin: source, or get's destination */
    unsigned char *memory;   /* target: the window's memory */
    unsigned char *created;  /* target, win=create: memory we free */
    unsigned char *previous; /* origin, accumulate --validate: scratch */
};

static const char *rma_unsupported(const struct kcase *c)
{
    static char reason[128];
    enum operation op = (enum operation)kcase_param_choice(c, "operation");
    if (op != OP_ACCUMULATE)
        return NULL;
    if (c->bytes % sizeof(acc_elem)) {
        snprintf(reason, sizeof reason,
                 "accumulate: %zu bytes is not a whole number of uint64 "
                 "(8-byte) elements",
                 c->bytes);
        return reason;
    }
    if (c->bytes / sizeof(acc_elem) > INT_MAX)
        return "accumulate over INT_MAX elements: rma makes no large-count "
               "MPI_Accumulate_c calls";
    return NULL;
}

static bool passive(const struct rma *s)
{
    return s->epoch == EPOCH_LOCK || s->epoch == EPOCH_LOCK_ALL_FLUSH;
}

/* --validate for put and accumulate: the target checks its window after
 * every epoch. A get is checked by the origin, in what it got. */
static bool target_checks(const struct kcase *c, const struct rma *s)
{
    return c->validate && s->op != OP_GET;
}

/* Only ranks 0 and 1 run setup, so the window lives on a communicator of
 * just those two, made by the two alone (MPI-3 MPI_Comm_create_group). */
static MPI_Comm pair_comm(const struct kcase *c)
{
    MPI_Group all, two;
    MPI_Comm pair;
    CHECK_MPI(MPI_Comm_group(c->comm, &all));
    CHECK_MPI(MPI_Group_incl(all, 2, (int[]){ORIGIN, TARGET}, &two));
    CHECK_MPI(MPI_Comm_create_group(c->comm, two, 0, &pair));
    CHECK_MPI(MPI_Group_free(&two));
    CHECK_MPI(MPI_Group_free(&all));
    return pair;
}

static void window_make(const struct kcase *c, struct rma *s, enum win_kind kind)
{
    MPI_Aint size = c->rank == TARGET ? (MPI_Aint)s->span : 0;
    if (kind == WIN_ALLOCATE) {
        CHECK_MPI(MPI_Win_allocate(size, 1, MPI_INFO_NULL, s->pair, &s->memory, &s->win));
    } else {
        if (c->rank == TARGET)
            s->created = s->memory = buffer_alloc(s->span);
        CHECK_MPI(MPI_Win_create(s->memory, size, 1, MPI_INFO_NULL, s->pair, &s->win));
    }
    /* Windows are born with MPI_ERRORS_ARE_FATAL; CHECK_MPI reports. */
    CHECK_MPI(MPI_Win_set_errhandler(s->win, MPI_ERRORS_RETURN));
    /* The target writes every byte of its window before the first epoch:
     * the pages are touched outside the timed iterations, as buffer_alloc
     * does, and --validate starts from known contents (zeros to accumulate
     * onto; get's pattern). Local stores go under a lock on the target's
     * own window, which also makes them public in the separate memory
     * model; the barrier keeps every epoch after them. */
    if (c->rank == TARGET) {
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, TARGET, 0, s->win));
        if (s->op == OP_GET && c->validate)
            pattern_fill(s->memory, s->span, 0, TARGET);
        else
            memset(s->memory, 0, s->span);
        CHECK_MPI(MPI_Win_unlock(TARGET, s->win));
    }
    CHECK_MPI(MPI_Barrier(s->pair));
}

static void rma_setup(struct kcase *c)
{
    struct rma *s = xcalloc(1, sizeof *s);
    s->op = (enum operation)kcase_param_choice(c, "operation");
    s->epoch = (enum epoch)kcase_param_choice(c, "epoch");
    c->window = window_limited(c);
    s->span = (size_t)c->window * c->bytes;
    s->type = msg_type_create(c->bytes);
    s->acc_count = (int)(c->bytes / sizeof(acc_elem));
    s->pair = pair_comm(c);
    if (c->rank == ORIGIN)
        s->buf = buffer_alloc(s->span);
    if (c->rank == ORIGIN && c->validate && s->op == OP_ACCUMULATE)
        s->previous = buffer_alloc(s->span);
    window_make(c, s, (enum win_kind)kcase_param_choice(c, "win"));
    if (s->epoch == EPOCH_PSCW) {
        MPI_Group group;
        CHECK_MPI(MPI_Win_get_group(s->win, &group));
        CHECK_MPI(MPI_Group_incl(group, 1, (int[]){1 - c->rank}, &s->peer));
        CHECK_MPI(MPI_Group_free(&group));
    }
    /* One passive-target epoch for the whole case; iterations flush. */
    if (s->epoch == EPOCH_LOCK_ALL_FLUSH && c->rank == ORIGIN)
        CHECK_MPI(MPI_Win_lock_all(0, s->win));
    c->state = s;
}

/* Accumulate's input for this iteration is pattern(i) - pattern(i-1),
 * word by word modulo 2^64 (pattern(-1): the zeros the target started
 * with), so after the epoch the target's window holds exactly pattern(i),
 * the value a put would have left: a lost, repeated or overwriting
 * accumulate fails the same check. */
static void accumulate_input(const struct kcase *c, struct rma *s)
{
    pattern_fill(s->buf, s->span, c->iteration, ORIGIN);
    if (c->iteration == 0)
        return;
    pattern_fill(s->previous, s->span, c->iteration - 1, ORIGIN);
    for (size_t at = 0; at < s->span; at += sizeof(acc_elem)) {
        acc_elem now, before;
        memcpy(&now, s->buf + at, sizeof now);
        memcpy(&before, s->previous + at, sizeof before);
        now -= before;
        memcpy(s->buf + at, &now, sizeof now);
    }
}

/* --validate, before the epoch: what a put sends, what an accumulate adds,
 * and for a get the complement of what it should fetch, so that every byte
 * the get leaves unwritten fails the check. */
static void origin_prepare(const struct kcase *c, struct rma *s)
{
    if (!c->validate)
        return;
    if (s->op == OP_PUT) {
        pattern_fill(s->buf, s->span, c->iteration, ORIGIN);
    } else if (s->op == OP_ACCUMULATE) {
        accumulate_input(c, s);
    } else {
        pattern_fill(s->buf, s->span, 0, TARGET);
        for (size_t i = 0; i < s->span; i++)
            s->buf[i] = (unsigned char)~s->buf[i];
    }
}

static void origin_open(const struct rma *s)
{
    switch (s->epoch) {
    case EPOCH_FENCE:
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, s->win));
        break;
    case EPOCH_LOCK:
        CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, TARGET, 0, s->win));
        break;
    case EPOCH_LOCK_ALL_FLUSH: /* opened in setup */
        break;
    case EPOCH_PSCW:
        CHECK_MPI(MPI_Win_start(s->peer, 0, s->win));
        break;
    }
}

/* Each closing call returns once the epoch's operations are complete at
 * the origin; the second fence, unlock and flush also complete them at the
 * target, MPI_Win_complete does not: the target's MPI_Win_wait waits for
 * that (MPI-3.1 11.5). */
static void origin_close(const struct rma *s)
{
    switch (s->epoch) {
    case EPOCH_FENCE:
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, s->win));
        break;
    case EPOCH_LOCK:
        CHECK_MPI(MPI_Win_unlock(TARGET, s->win));
        break;
    case EPOCH_LOCK_ALL_FLUSH:
        CHECK_MPI(MPI_Win_flush(TARGET, s->win));
        break;
    case EPOCH_PSCW:
        CHECK_MPI(MPI_Win_complete(s->win));
        break;
    }
}

/* Operation j moves bytes j*n .. (j+1)*n - 1 of the origin's buffer to or
 * from the same displacement of the target's window (disp_unit 1). */
static void issue(const struct kcase *c, const struct rma *s)
{
    const struct msg_type *t = &s->type;
    for (int j = 0; j < c->window; j++) {
        size_t at = (size_t)j * c->bytes;
        switch (s->op) {
        case OP_PUT:
            CHECK_MPI(LC(MPI_Put)(s->buf + at, t->count, t->type, TARGET, (MPI_Aint)at, t->count,
                                  t->type, s->win));
            break;
        case OP_GET:
            CHECK_MPI(LC(MPI_Get)(s->buf + at, t->count, t->type, TARGET, (MPI_Aint)at, t->count,
                                  t->type, s->win));
            break;
        case OP_ACCUMULATE:
            CHECK_MPI(MPI_Accumulate(s->buf + at, s->acc_count, ACC_TYPE, TARGET, (MPI_Aint)at,
                                     s->acc_count, ACC_TYPE, MPI_SUM, s->win));
            break;
        }
    }
}

static void check(const struct kcase *c, const unsigned char *buf, size_t bytes, uint64_t key,
                  int source_rank)
{
    struct mismatch m = {.iteration = c->iteration, .source_rank = source_rank};
    if (pattern_find_mismatch(buf, bytes, key, source_rank, &m.offset, &m.expected, &m.got))
        die_mismatch(&m);
}

static void origin_run_once(struct kcase *c, struct rma *s)
{
    origin_prepare(c, s);
    origin_open(s);
    issue(c, s);
    origin_close(s);
    if (c->validate && s->op == OP_GET)
        check(c, s->buf, s->span, 0, TARGET);
    /* A passive target learns that the epoch is complete only by message;
     * the origin opens its next epoch only after the target has checked,
     * so no put lands in the window during the check. */
    if (target_checks(c, s) && passive(s)) {
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, TARGET, TAG_COMPLETE, s->pair));
        CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, TARGET, TAG_CHECKED, s->pair, MPI_STATUS_IGNORE));
    }
}

/* The target takes part in fence and pscw epochs; a passive target makes
 * no call at all, unless it checks. Its check reads the window after the
 * epoch completed: after the closing fence or MPI_Win_wait, which the
 * origin's next epoch cannot overtake (MPI-3.1 11.5.1, 11.5.2), or, for a
 * passive target, under a lock on its own window. */
static void target_run_once(struct kcase *c, struct rma *s)
{
    if (s->epoch == EPOCH_FENCE) {
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, s->win));
        CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, s->win));
    } else if (s->epoch == EPOCH_PSCW) {
        CHECK_MPI(MPI_Win_post(s->peer, 0, s->win));
        CHECK_MPI(MPI_Win_wait(s->win));
    }
    if (!target_checks(c, s))
        return;
    if (!passive(s)) {
        check(c, s->memory, s->span, c->iteration, ORIGIN);
        return;
    }
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, ORIGIN, TAG_COMPLETE, s->pair, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, TARGET, 0, s->win));
    check(c, s->memory, s->span, c->iteration, ORIGIN);
    CHECK_MPI(MPI_Win_unlock(TARGET, s->win));
    CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, ORIGIN, TAG_CHECKED, s->pair));
}

static void rma_run_once(struct kcase *c)
{
    if (c->rank == ORIGIN)
        origin_run_once(c, c->state);
    else
        target_run_once(c, c->state);
}

static void rma_teardown(struct kcase *c)
{
    struct rma *s = c->state;
    if (s->epoch == EPOCH_LOCK_ALL_FLUSH && c->rank == ORIGIN)
        CHECK_MPI(MPI_Win_unlock_all(s->win));
    if (s->epoch == EPOCH_PSCW)
        CHECK_MPI(MPI_Group_free(&s->peer));
    CHECK_MPI(MPI_Win_free(&s->win));
    CHECK_MPI(MPI_Comm_free(&s->pair));
    msg_type_free(&s->type);
    buffer_free(s->created);
    buffer_free(s->buf);
    buffer_free(s->previous);
    free(s);
}

const struct kernel kernel_rma = {
    .name = "rma",
    .description = "rank 0 puts, gets or accumulates W x n bytes into rank "
                   "1's window in one epoch; latency t, bandwidth W*n/t",
    .family = FAMILY_ONE_SIDED,
    .min_ranks = 2,
    .max_ranks = 2,
    .default_window = 1,
    .timed_by = TIMED_BY_ORIGIN,
    .params = rma_params,
    .unsupported = rma_unsupported,
    .setup = rma_setup,
    .run_once = rma_run_once,
    .teardown = rma_teardown,
};
