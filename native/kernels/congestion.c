/* congestion: canaries measured beside aggressors, as GPCNeT measures
 * congestion (S. Chunduri et al., "GPCNeT: Designing a Benchmark Suite for
 * Inducing and Measuring Contention in HPC Networks", SC'19;
 * docs/under-load.md). Ranks 0..canaries-1 are the canaries: an iteration
 * is one canary operation among them (pingpong: canary 0 and 1 exchange n
 * bytes; bw: canary 0 streams a window of n-byte messages to canary 1, which
 * acknowledges; allreduce: n bytes over the canaries), and the sample is
 * canary 0's. The other ranks are aggressors, in groups of --param group
 * (member m of group j is rank canaries + m * groups + j): from set-up to
 * teardown each keeps its pattern's messages in flight (bw: each even rank
 * of a group streams to the next; incast: every rank of a group to its
 * first; alltoall; bcast from its first), DEPTH of them, each
 * of aggressor_bytes. An aggressor's iteration only tests its requests and
 * reposts those done: the messages move in MPI's progress while it waits in
 * the loop's barriers. --param aggressor none leaves them idle: the isolated
 * phase, measured in the same launch as the congested one (--each
 * aggressor=none,incast). canary idle leaves the canaries idle instead (an
 * iteration sleeps 10 ms): the aggressors alone, their own rate. An aggressor
 * reposts only in its iterations, once a sample: what it has in flight
 * (DEPTH x aggressor_bytes a stream) must outlast a canary's sample, or the
 * canary has the path to itself at the end of each. The record's
 * aggressor_Bps is the aggressors' delivered rate. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "jsonl.h"
#include "kernel.h"

#define DEPTH 8 /* messages in flight from each aggressor sender */
#define IDLE_NS 10000000L /* an idle canary's iteration: 10 ms */
enum { TAG_CANARY = 1, TAG_ACK, TAG_AGGRESSOR, TAG_COUNT };
enum canary { CANARY_PINGPONG, CANARY_BW, CANARY_ALLREDUCE, CANARY_IDLE };
enum aggressor { AGG_NONE, AGG_INCAST, AGG_ALLTOALL, AGG_BCAST, AGG_BW };
static const char *const canaries[] = {"pingpong", "bw", "allreduce", "idle", NULL};
static const char *const aggressors[] = {"none", "incast", "alltoall", "bcast", "bw", NULL};

/* A point-to-point stream of one aggressor: its requests, the buffers they
 * use, and how many were posted and completed. */
struct stream {
    int peer;
    bool sends;
    MPI_Request req[DEPTH];
    long long seq[DEPTH]; /* which of the stream's messages each slot's is */
    long long posted;
};

struct congestion {
    enum canary canary;
    enum aggressor aggressor;
    int canaries, group;
    MPI_Comm team;  /* the canaries, or this aggressor's group */
    MPI_Comm count; /* team's duplicate: the teardown's agreement */
    int team_rank, team_size;
    unsigned char *canary_buf, *canary_recv, ack;
    MPI_Request *window;
    size_t bytes; /* aggressor_bytes */
    unsigned char *send, *recv;
    struct stream *streams; /* point-to-point patterns */
    int nstreams;
    MPI_Request coll; /* alltoall, bcast: the one in flight */
    long long started;
    /* Payload received by this aggressor after the first of its iterations
     * that found messages done, and the times of that iteration and the last
     * that did: its steady rate, which set-up's ramp and teardown's drain do
     * not dilute. These clock reads time no sample: they are the aggressors'
     * own figure. */
    long long delivered, found;
    double first_s, last_s;
};

static long long count_param(const struct kcase *c, const char *key)
{
    return atoll(kcase_param(c, key));
}

static int canary_count(const struct kcase *c)
{
    return (int)count_param(c, "canaries");
}

static const char *congestion_unsupported(const struct kcase *c)
{
    int world, canary = canary_count(c), group = (int)count_param(c, "group");
    CHECK_MPI(MPI_Comm_size(c->comm, &world));
    if (canary < 2 || canary > world)
        return "canaries must be 2 or more, and no more than the ranks";
    if ((world - canary) % group)
        return "the ranks after the canaries must be whole groups of --param group";
    if (kcase_param_choice(c, "canary") != CANARY_ALLREDUCE && canary != 2)
        return "a pingpong or bw canary is a pair: --param canaries=2";
    if (kcase_param_choice(c, "aggressor") == AGG_BW && group % 2)
        return "bw aggressors stream in pairs: an even --param group";
    if (kcase_param_choice(c, "canary") == CANARY_ALLREDUCE && c->bytes % sizeof(int))
        return "an allreduce canary reduces ints: a size of whole 4-byte elements";
    return NULL;
}

static void stream_post(struct congestion *s, struct stream *t, int slot)
{
    if (t->sends)
        CHECK_MPI(MPI_Isend(s->send, (int)s->bytes, MPI_BYTE, t->peer, TAG_AGGRESSOR, s->team,
                            &t->req[slot]));
    else
        CHECK_MPI(MPI_Irecv(s->recv + (size_t)slot * s->bytes, (int)s->bytes, MPI_BYTE, t->peer,
                            TAG_AGGRESSOR, s->team, &t->req[slot]));
    t->seq[slot] = t->posted++;
}

/* The streams this aggressor takes part in: bw pairs ranks 2k -> 2k+1 of the
 * group; incast sends every rank's to the group's first, which receives one
 * stream from each. */
static void streams_setup(struct congestion *s)
{
    int me = s->team_rank, n = s->team_size;
    if (s->aggressor == AGG_BW) {
        s->nstreams = 1;
        s->streams = xcalloc(1, sizeof *s->streams);
        s->streams[0] = (struct stream){.peer = me ^ 1, .sends = me % 2 == 0};
    } else if (me == 0) {
        s->nstreams = n - 1;
        s->streams = xcalloc((size_t)n, sizeof *s->streams);
        for (int r = 1; r < n; r++)
            s->streams[r - 1] = (struct stream){.peer = r, .sends = false};
    } else {
        s->nstreams = 1;
        s->streams = xcalloc(1, sizeof *s->streams);
        s->streams[0] = (struct stream){.peer = 0, .sends = true};
    }
    /* one receive buffer a slot: the stream's DEPTH receives never share one */
    s->recv = buffer_alloc((size_t)DEPTH * s->nstreams * s->bytes);
    for (int i = 0; i < s->nstreams; i++)
        for (int slot = 0; slot < DEPTH; slot++)
            stream_post(s, &s->streams[i], slot);
}

static void coll_start(struct congestion *s)
{
    if (s->aggressor == AGG_ALLTOALL)
        CHECK_MPI(MPI_Ialltoall(s->send, (int)s->bytes, MPI_BYTE, s->recv, (int)s->bytes, MPI_BYTE,
                                s->team, &s->coll));
    else
        CHECK_MPI(MPI_Ibcast(s->team_rank == 0 ? s->send : s->recv, (int)s->bytes, MPI_BYTE, 0,
                             s->team, &s->coll));
    s->started++;
}

/* What one completed operation delivered to this aggressor. */
static long long coll_delivered(const struct congestion *s)
{
    if (s->aggressor == AGG_ALLTOALL)
        return (long long)(s->team_size - 1) * (long long)s->bytes;
    return s->team_rank == 0 ? 0 : (long long)s->bytes;
}

static void congestion_setup(struct kcase *c)
{
    struct congestion *s = xcalloc(1, sizeof *s);
    s->canary = kcase_param_choice(c, "canary");
    s->aggressor = kcase_param_choice(c, "aggressor");
    s->canaries = canary_count(c);
    s->group = (int)count_param(c, "group");
    s->bytes = (size_t)count_param(c, "aggressor_bytes");
    bool canary = c->rank < s->canaries;
    int world;
    CHECK_MPI(MPI_Comm_size(c->comm, &world));
    /* member m of group j is rank canaries + m * groups + j: each member's block of ranks
     * is contiguous, so a launcher that fills hosts in order puts a block on one side */
    int groups = (world - s->canaries) / s->group;
    int color = canary ? 0 : 1 + (c->rank - s->canaries) % groups;
    CHECK_MPI(MPI_Comm_split(c->comm, color, c->rank, &s->team));
    CHECK_MPI(MPI_Comm_dup(s->team, &s->count));
    CHECK_MPI(MPI_Comm_rank(s->team, &s->team_rank));
    CHECK_MPI(MPI_Comm_size(s->team, &s->team_size));
    c->state = s;
    if (canary) {
        c->window = s->canary == CANARY_BW ? window_limited(c) : 0;
        s->canary_buf = buffer_alloc(c->bytes);
        s->canary_recv = buffer_alloc(c->bytes);
        s->window = xcalloc((size_t)(c->window ? c->window : 1), sizeof *s->window);
        return;
    }
    c->window = 0;
    if (s->aggressor == AGG_NONE)
        return;
    if (s->aggressor == AGG_ALLTOALL || s->aggressor == AGG_BCAST) {
        size_t blocks = s->aggressor == AGG_ALLTOALL ? (size_t)s->team_size : 1;
        s->send = buffer_alloc(blocks * s->bytes);
        s->recv = buffer_alloc(blocks * s->bytes);
        coll_start(s);
        return;
    }
    s->send = buffer_alloc(s->bytes);
    streams_setup(s);
}

static void canary_once(struct kcase *c, struct congestion *s)
{
    int n = (int)c->bytes;
    switch (s->canary) {
    case CANARY_PINGPONG:
        if (s->team_rank == 0) {
            CHECK_MPI(MPI_Send(s->canary_buf, n, MPI_BYTE, 1, TAG_CANARY, s->team));
            CHECK_MPI(MPI_Recv(s->canary_recv, n, MPI_BYTE, 1, TAG_CANARY, s->team,
                               MPI_STATUS_IGNORE));
        } else {
            CHECK_MPI(MPI_Recv(s->canary_recv, n, MPI_BYTE, 0, TAG_CANARY, s->team,
                               MPI_STATUS_IGNORE));
            CHECK_MPI(MPI_Send(s->canary_buf, n, MPI_BYTE, 0, TAG_CANARY, s->team));
        }
        return;
    case CANARY_BW:
        for (int i = 0; i < c->window; i++) {
            if (s->team_rank == 0)
                CHECK_MPI(MPI_Isend(s->canary_buf, n, MPI_BYTE, 1, TAG_CANARY, s->team,
                                    &s->window[i]));
            else
                CHECK_MPI(MPI_Irecv(s->canary_recv, n, MPI_BYTE, 0, TAG_CANARY, s->team,
                                    &s->window[i]));
        }
        CHECK_MPI(MPI_Waitall(c->window, s->window, MPI_STATUSES_IGNORE));
        if (s->team_rank == 0)
            CHECK_MPI(MPI_Recv(&s->ack, 1, MPI_BYTE, 1, TAG_ACK, s->team, MPI_STATUS_IGNORE));
        else
            CHECK_MPI(MPI_Send(&s->ack, 1, MPI_BYTE, 0, TAG_ACK, s->team));
        return;
    case CANARY_ALLREDUCE:
        CHECK_MPI(MPI_Allreduce(s->canary_buf, s->canary_recv, n / (int)sizeof(int), MPI_INT,
                                MPI_SUM, s->team));
        return;
    case CANARY_IDLE: /* long enough for the aggressors' messages to arrive, the core free */
        nanosleep(&(struct timespec){.tv_nsec = IDLE_NS}, NULL);
        return;
    }
}

/* The end of an aggressor's iteration: what it found done joins the rate
 * unless this is the first iteration that found any (its messages may have
 * been done long before). */
static void arrived(struct congestion *s)
{
    if (s->found == 0)
        return;
    s->last_s = MPI_Wtime();
    if (s->first_s == 0)
        s->first_s = s->last_s;
    else
        s->delivered += s->found;
    s->found = 0;
}

/* Each stream's requests done since the last test are counted and posted
 * again: DEPTH stay in flight. */
static void aggressor_once(struct congestion *s)
{
    if (s->aggressor == AGG_ALLTOALL || s->aggressor == AGG_BCAST) {
        int done;
        CHECK_MPI(MPI_Test(&s->coll, &done, MPI_STATUS_IGNORE));
        if (done) {
            s->found += coll_delivered(s);
            coll_start(s);
        }
        arrived(s);
        return;
    }
    for (int i = 0; i < s->nstreams; i++) {
        struct stream *t = &s->streams[i];
        for (int slot = 0; slot < DEPTH; slot++) {
            int done;
            CHECK_MPI(MPI_Test(&t->req[slot], &done, MPI_STATUS_IGNORE));
            if (!done)
                continue;
            s->found += t->sends ? 0 : (long long)s->bytes;
            stream_post(s, t, slot);
        }
    }
    arrived(s);
}

static void congestion_run_once(struct kcase *c)
{
    struct congestion *s = c->state;
    if (c->rank < s->canaries)
        canary_once(c, s);
    else if (s->aggressor != AGG_NONE)
        aggressor_once(s);
}

/* The aggressors' delivered rate: each receiving aggressor's steady rate,
 * summed (0 where none saw two completions). */
static void congestion_report(struct kcase *c, struct jsonl *j)
{
    struct congestion *s = c->state;
    double mine = s->last_s > s->first_s ? (double)s->delivered / (s->last_s - s->first_s) : 0,
           total = 0;
    CHECK_MPI(MPI_Reduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, 0, c->comm));
    if (!j)
        return;
    jsonl_num(j, "aggressor_Bps", total);
    jsonl_int(j, "aggressor_ranks", c->ranks - s->canaries);
}

/* Every stream's receiver learns how many messages its sender posted, posts
 * as many more receives as it lacks or cancels those it posted beyond them,
 * and both wait for the rest: nothing is left in flight. */
static void streams_drain(struct congestion *s)
{
    for (int i = 0; i < s->nstreams; i++) {
        struct stream *t = &s->streams[i];
        long long sent = t->posted;
        if (t->sends) {
            CHECK_MPI(MPI_Send(&sent, 1, MPI_LONG_LONG, t->peer, TAG_COUNT, s->count));
            CHECK_MPI(MPI_Waitall(DEPTH, t->req, MPI_STATUSES_IGNORE));
            continue;
        }
        CHECK_MPI(MPI_Recv(&sent, 1, MPI_LONG_LONG, t->peer, TAG_COUNT, s->count,
                           MPI_STATUS_IGNORE));
        /* receives match in the order posted: those past `sent` match nothing */
        for (int slot = 0; slot < DEPTH; slot++) {
            if (t->seq[slot] >= sent)
                CHECK_MPI(MPI_Cancel(&t->req[slot]));
            CHECK_MPI(MPI_Wait(&t->req[slot], MPI_STATUS_IGNORE));
        }
        for (long long k = t->posted; k < sent; k++)
            CHECK_MPI(MPI_Recv(s->recv, (int)s->bytes, MPI_BYTE, t->peer, TAG_AGGRESSOR, s->team,
                               MPI_STATUS_IGNORE));
    }
}

/* Every rank of the group starts as many operations as the one that started
 * most, in order, then waits for them. */
static void coll_drain(struct congestion *s)
{
    long long most;
    CHECK_MPI(MPI_Wait(&s->coll, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Allreduce(&s->started, &most, 1, MPI_LONG_LONG, MPI_MAX, s->count));
    while (s->started < most) {
        coll_start(s);
        CHECK_MPI(MPI_Wait(&s->coll, MPI_STATUS_IGNORE));
    }
}

static void congestion_teardown(struct kcase *c)
{
    struct congestion *s = c->state;
    if (c->rank >= s->canaries && s->aggressor != AGG_NONE) {
        if (s->aggressor == AGG_ALLTOALL || s->aggressor == AGG_BCAST)
            coll_drain(s);
        else
            streams_drain(s);
    }
    if (s->canary_buf) {
        buffer_free(s->canary_buf);
        buffer_free(s->canary_recv);
    }
    if (s->send)
        buffer_free(s->send);
    if (s->recv)
        buffer_free(s->recv);
    free(s->window);
    free(s->streams);
    CHECK_MPI(MPI_Comm_free(&s->count));
    CHECK_MPI(MPI_Comm_free(&s->team));
    free(s);
}

/* clang-format off */
static const struct kparam params[] = {
    {.name = "canary", PARAM_CHOICE, "pingpong", "what the canaries measure; idle: "
     "nothing (the aggressors' own rate)", canaries, NULL},
    {.name = "canaries", PARAM_COUNT, "2", "ranks 0..N-1 are the canaries", NULL, NULL},
    {.name = "aggressor", PARAM_CHOICE, "none", "the aggressors' pattern; none: idle "
     "(the isolated phase)", aggressors, NULL},
    {.name = "group", PARAM_COUNT, "2", "aggressor ranks in each group", NULL, NULL},
    {.name = "aggressor_bytes", PARAM_COUNT, "262144", "each aggressor message's size",
     NULL, NULL},
    {0}};
/* clang-format on */

const struct kernel kernel_congestion = {
    .name = "congestion",
    .description = "canaries measured beside aggressor traffic (GPCNeT's congestion test)",
    .family = FAMILY_HEALTH,
    .min_ranks = 2,
    .default_window = 8,
    .timed_by = TIMED_BY_ORIGIN,
    .params = params,
    .unsupported = congestion_unsupported,
    .setup = congestion_setup,
    .run_once = congestion_run_once,
    .teardown = congestion_teardown,
    .report = congestion_report,
};
