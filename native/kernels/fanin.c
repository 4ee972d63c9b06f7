/* fanin: every rank but 0 sends one message of n bytes to rank 0 in one
 * send mode; rank 0 receives them in rank order or in arrival order (seed
 * 000's first experiment; docs/kernels-many-rank.md "fanin").
 *
 * Each iteration starts with a barrier, and the phase after it ("fanin")
 * is each rank's own time from that common start to the completion of its
 * send (rank 0: of its last receive). Without that start a batch of
 * back-to-back fan-ins couples every rank to rank 0's cycle, and the
 * per-rank differences seed 000 saw (Ssend slower the later rank 0 gets to
 * it) shrink by the batch size; senders could also run ahead of rank 0 by
 * whole iterations, which the one-message Bsend buffer would not survive.
 * Ready mode needs the barrier anyway: rank 0 posts its receives before
 * entering it, so no MPI_Rsend starts before its receive is posted. */
#include <stdlib.h>

#include "check.h"
#include "jsonl.h"
#include "kernel.h"
#include "sampling.h"

enum { TAG_FANIN = 1 };
enum order { ORDER_RANK, ORDER_ARRIVAL };
enum { PHASE_SYNC, PHASE_FANIN };

/* Arrival orders of this many last iterations go into the case record. */
#define ORDERS_KEPT 100

static const char *const fanin_orders[] = {"rank", "arrival", NULL};
/* clang-format off */
static const struct kparam fanin_params[] = {
    {.name = "order", PARAM_CHOICE, "rank",
     "rank 0 receives in rank order, or with MPI_ANY_SOURCE as they arrive",
     fanin_orders, NULL},
    {0},
};
/* clang-format on */
static const char *const fanin_phases[] = {"sync", "fanin", NULL};

struct fanin {
    struct p2p msg; /* senders: send_buf; rank 0: one buffer per sender */
    enum order order;
    /* Rank 0 only. */
    MPI_Request *reqs;    /* [senders] */
    MPI_Status *statuses; /* [senders], in the order received */
    uint64_t *counts;     /* order=arrival: [ranks][senders] */
    int *kept;            /* order=arrival: [ORDERS_KEPT][senders], a ring */
    uint64_t recorded;    /* iterations counted in counts */
};

static const char *fanin_unsupported(const struct kcase *c)
{
    if (c->mode == SEND_BUFFERED && !msg_bsend_fits(c->bytes))
        return "buffered send over INT_MAX bytes needs MPI-4 "
               "MPI_Buffer_attach_c";
    return NULL;
}

static void fanin_setup(struct kcase *c)
{
    struct fanin *s = xcalloc(1, sizeof *s);
    size_t senders = (size_t)c->ranks - 1;
    bool root = c->rank == 0;
    s->order = (enum order)kcase_param_choice(c, "order");
    p2p_init(&s->msg, c, !root, root ? (int)senders : 0);
    if (root) {
        s->reqs = xcalloc(senders, sizeof *s->reqs);
        s->statuses = xcalloc(senders, sizeof *s->statuses);
        if (s->order == ORDER_ARRIVAL) {
            s->counts = xcalloc((size_t)c->ranks * senders, sizeof *s->counts);
            s->kept = xcalloc(ORDERS_KEPT * senders, sizeof *s->kept);
        }
    } else if (c->mode == SEND_BUFFERED) {
        /* One message per iteration, delivered before the next iteration's
         * barrier ends: one message's worth of buffer suffices. */
        msg_buffer_attach(&s->msg.type, c->comm);
    }
    c->state = s;
}

/* Rank 0's k-th receive: from rank k+1, or from whoever comes next. */
static void post_receive(struct kcase *c, struct fanin *s, int k)
{
    int source = s->order == ORDER_RANK ? k + 1 : MPI_ANY_SOURCE;
    msg_irecv(p2p_recv_buf(&s->msg, k), &s->msg.type, source, TAG_FANIN, c->comm, &s->reqs[k]);
}

static void record_arrivals(const struct kcase *c, struct fanin *s)
{
    int senders = c->ranks - 1;
    int *order = s->kept + (size_t)(s->recorded % ORDERS_KEPT) * senders;
    for (int k = 0; k < senders; k++) {
        order[k] = s->statuses[k].MPI_SOURCE;
        s->counts[(size_t)order[k] * senders + k]++;
    }
    s->recorded++;
}

static void receive_all(struct kcase *c, struct fanin *s)
{
    int senders = c->ranks - 1;
    if (c->mode == SEND_READY) {
        /* Posted before the barrier, which no sender leaves before rank 0
         * has entered it: every MPI_Rsend finds its receive posted. Receives
         * with the same envelope match in the order posted (MPI 3.1,
         * 3.5), so with MPI_ANY_SOURCE the k-th one gets the k-th
         * message matched. */
        for (int k = 0; k < senders; k++)
            post_receive(c, s, k);
        CHECK_MPI(MPI_Barrier(c->comm));
        sampling_phase_end(c, PHASE_SYNC);
        CHECK_MPI(MPI_Waitall(senders, s->reqs, s->statuses));
    } else {
        CHECK_MPI(MPI_Barrier(c->comm));
        sampling_phase_end(c, PHASE_SYNC);
        /* One blocking receive after the other, each reporting its source
         * (MPI_Irecv + MPI_Wait, so both orders make the same calls). */
        for (int k = 0; k < senders; k++) {
            post_receive(c, s, k);
            CHECK_MPI(MPI_Wait(&s->reqs[k], &s->statuses[k]));
        }
    }
    for (int k = 0; k < senders; k++)
        payload_check(c, p2p_recv_buf(&s->msg, k), s->statuses[k].MPI_SOURCE);
    sampling_phase_end(c, PHASE_FANIN);
    if (s->order == ORDER_ARRIVAL)
        record_arrivals(c, s);
}

static void send_one(struct kcase *c, struct fanin *s)
{
    payload_fill(c, p2p_send_buf(&s->msg));
    CHECK_MPI(MPI_Barrier(c->comm));
    sampling_phase_end(c, PHASE_SYNC);
    if (c->mode == SEND_NONBLOCKING) {
        MPI_Request req;
        msg_isend(p2p_send_buf(&s->msg), &s->msg.type, 0, TAG_FANIN, c->comm, &req);
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        msg_send(c->mode, p2p_send_buf(&s->msg), &s->msg.type, 0, TAG_FANIN, c->comm);
    }
    sampling_phase_end(c, PHASE_FANIN);
}

static void fanin_run_once(struct kcase *c)
{
    if (c->rank == 0)
        receive_all(c, c->state);
    else
        send_one(c, c->state);
}

/* order=arrival: how often each rank arrived in each position, and the
 * last orders themselves, numbered so Python can tell warm-up from timed
 * iterations (the kernel cannot: docs/kernels-many-rank.md). */
static void fanin_report(struct kcase *c, struct jsonl *j)
{
    struct fanin *s = c->state;
    if (!j || s->order != ORDER_ARRIVAL)
        return;
    int senders = c->ranks - 1;
    jsonl_uint(j, "arrival_iterations", s->recorded);
    jsonl_open(j, "arrival_counts", '[');
    for (int rank = 0; rank < c->ranks; rank++) {
        jsonl_open(j, NULL, '[');
        for (int k = 0; k < senders; k++)
            jsonl_uint(j, NULL, s->counts[(size_t)rank * senders + k]);
        jsonl_close(j, ']');
    }
    jsonl_close(j, ']');
    uint64_t kept = s->recorded < ORDERS_KEPT ? s->recorded : ORDERS_KEPT;
    jsonl_uint(j, "arrival_orders_first_iteration", s->recorded - kept);
    jsonl_open(j, "arrival_orders", '[');
    for (uint64_t i = s->recorded - kept; i < s->recorded; i++) {
        const int *order = s->kept + (size_t)(i % ORDERS_KEPT) * senders;
        jsonl_open(j, NULL, '[');
        for (int k = 0; k < senders; k++)
            jsonl_int(j, NULL, order[k]);
        jsonl_close(j, ']');
    }
    jsonl_close(j, ']');
}

static void fanin_teardown(struct kcase *c)
{
    struct fanin *s = c->state;
    if (c->rank != 0 && c->mode == SEND_BUFFERED)
        msg_buffer_detach();
    p2p_free(&s->msg);
    free(s->reqs);
    free(s->statuses);
    free(s->counts);
    free(s->kept);
    free(s);
}

const struct kernel kernel_fanin = {
    .name = "fanin",
    .description = "every rank sends n bytes to rank 0 (--param "
                   "order=rank|arrival); per-rank send time in phase fanin",
    .family = FAMILY_MANY_RANK,
    .min_ranks = 2,
    .modes = SEND_MODE_BIT(SEND_STANDARD) | SEND_MODE_BIT(SEND_SYNCHRONOUS) |
             SEND_MODE_BIT(SEND_BUFFERED) | SEND_MODE_BIT(SEND_READY) |
             SEND_MODE_BIT(SEND_NONBLOCKING),
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = fanin_params,
    .unsupported = fanin_unsupported,
    .setup = fanin_setup,
    .run_once = fanin_run_once,
    .teardown = fanin_teardown,
    .phases = fanin_phases,
    .report = fanin_report,
};
