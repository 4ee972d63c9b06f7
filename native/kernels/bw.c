/* bw: rank 0 keeps W messages of n bytes in flight to rank 1, which posts
 * W receives and answers with a 1-byte acknowledgement once all arrived
 * (OSU osu_bw, docs/native.md "Kernels"). The acknowledgement makes rank
 * 0's clock cover delivery, not just the local completion of its sends.
 * The receives go to one buffer, as osu_bw's do, or to W distinct ones
 * (--param recv_buffers). --param persistent makes the W sends and W
 * receives persistent requests once, started together each iteration
 * (MPI_Startall), as OSU's osu_bw_persistent does. */
#include <stdlib.h>

#include "check.h"
#include "jsonl.h"
#include "kernel.h"

enum { TAG_DATA = 1, TAG_ACK };

struct bw {
    struct p2p msg;
    MPI_Request *reqs;
    int slots; /* receive buffers: 1, or the window */
    bool persistent; /* reqs are persistent requests */
    unsigned char ack;
};

/* Message i of the window: rank 0's send, rank 1's receive; persistent:
 * made into a persistent request. */
static void post(struct kcase *c, struct bw *s, int i, bool persistent)
{
    void (*recv)(void *, const struct msg_type *, int, int, MPI_Comm,
                 MPI_Request *) = persistent ? msg_recv_init : msg_irecv;
    if (c->rank == 0 && persistent)
        msg_send_init(SEND_STANDARD, p2p_send_buf(&s->msg), &s->msg.type, 1, TAG_DATA, c->comm,
                      &s->reqs[i]);
    else if (c->rank == 0)
        msg_isend(p2p_send_buf(&s->msg), &s->msg.type, 1, TAG_DATA, c->comm, &s->reqs[i]);
    else
        recv(p2p_recv_buf(&s->msg, i % s->slots), &s->msg.type, 0, TAG_DATA, c->comm, &s->reqs[i]);
}

static void start_window(struct kcase *c, struct bw *s)
{
    if (s->persistent)
        CHECK_MPI(MPI_Startall(c->window, s->reqs));
    else
        for (int i = 0; i < c->window; i++)
            post(c, s, i, false);
}

static void bw_setup(struct kcase *c)
{
    struct bw *s = xcalloc(1, sizeof *s);
    c->window = window_limited(c);
    s->slots = recv_slots(c);
    /* As in osu_bw, the sender sends the same buffer W times. */
    p2p_init(&s->msg, c, c->rank == 0, c->rank == 1 ? s->slots : 0);
    s->reqs = xcalloc((size_t)c->window, sizeof *s->reqs);
    s->persistent = kcase_param_switch(c, "persistent");
    for (int i = 0; s->persistent && i < c->window; i++)
        post(c, s, i, true);
    c->state = s;
}

static void bw_run_once(struct kcase *c)
{
    struct bw *s = c->state;
    if (c->rank == 0) {
        payload_fill(c, p2p_send_buf(&s->msg));
        start_window(c, s);
        CHECK_MPI(MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE));
        CHECK_MPI(MPI_Recv(&s->ack, 1, MPI_BYTE, 1, TAG_ACK, c->comm, MPI_STATUS_IGNORE));
        return;
    }
    start_window(c, s);
    CHECK_MPI(MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < s->slots; i++)
        payload_check(c, p2p_recv_buf(&s->msg, i), 0);
    CHECK_MPI(MPI_Send(&s->ack, 1, MPI_BYTE, 0, TAG_ACK, c->comm));
}

static void bw_report(struct kcase *c, struct jsonl *j)
{
    if (j)
        recv_slots_report(j, ((struct bw *)c->state)->slots);
}

static void bw_teardown(struct kcase *c)
{
    struct bw *s = c->state;
    for (int i = 0; s->persistent && i < c->window; i++)
        CHECK_MPI(MPI_Request_free(&s->reqs[i]));
    p2p_free(&s->msg);
    free(s->reqs);
    free(s);
}

static const struct kparam bw_params[] = {
    RECV_BUFFERS_PARAM, P2P_PERSISTENT_PARAM(0), P2P_DTYPE_PARAM, P2P_LAYOUT_PARAM, {0}};

const struct kernel kernel_bw = {
    .name = "bw",
    .description = "rank 0 streams W messages to rank 1; bandwidth W*n/t",
    .family = FAMILY_POINT_TO_POINT,
    .min_ranks = 2,
    .max_ranks = 2,
    .default_window = 64,
    .timed_by = TIMED_BY_ORIGIN,
    .cold_cache = true,
    .params = bw_params,
    .unsupported = p2p_unsupported,
    .setup = bw_setup,
    .run_once = bw_run_once,
    .teardown = bw_teardown,
    .report = bw_report,
};
