/* mbw_mr: P/2 pairs stream at once, as osu_mbw_mr does (OSU Micro-Benchmarks:
 * rank i sends to rank i + P/2). Each sender keeps W messages of n bytes in
 * flight to its receiver, which posts W receives into one buffer and sends a
 * 1-byte acknowledgement once all arrived (bw's protocol, per pair). The
 * sample is the slowest rank's: the aggregate moves P/2 W n bytes in it.
 * With the ranks placed in blocks (the first half on one node), the P/2
 * senders share one node: what the max-rate model fits (docs/models.md). */
#include <stdlib.h>

#include "check.h"
#include "kernel.h"

enum { TAG_DATA = 1, TAG_ACK };

struct mbw_mr {
    struct p2p msg;
    MPI_Request *reqs;
    unsigned char ack;
};

static const char *mbw_mr_unsupported(const struct kcase *c)
{
    return c->ranks % 2 ? "mbw_mr pairs the ranks: give an even --np" : NULL;
}

static bool sends(const struct kcase *c)
{
    return c->rank < c->ranks / 2;
}

static void mbw_mr_setup(struct kcase *c)
{
    struct mbw_mr *s = xcalloc(1, sizeof *s);
    c->window = window_limited(c);
    p2p_init(&s->msg, c, sends(c), sends(c) ? 0 : 1);
    s->reqs = xcalloc((size_t)c->window, sizeof *s->reqs);
    c->state = s;
}

static void mbw_mr_run_once(struct kcase *c)
{
    struct mbw_mr *s = c->state;
    int half = c->ranks / 2;
    if (sends(c)) {
        int peer = c->rank + half;
        payload_fill(c, p2p_send_buf(&s->msg));
        for (int i = 0; i < c->window; i++)
            msg_isend(p2p_send_buf(&s->msg), &s->msg.type, peer, TAG_DATA, c->comm,
                      &s->reqs[i]);
        CHECK_MPI(MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE));
        CHECK_MPI(MPI_Recv(&s->ack, 1, MPI_BYTE, peer, TAG_ACK, c->comm, MPI_STATUS_IGNORE));
        return;
    }
    int peer = c->rank - half;
    for (int i = 0; i < c->window; i++)
        msg_irecv(p2p_recv_buf(&s->msg, 0), &s->msg.type, peer, TAG_DATA, c->comm,
                  &s->reqs[i]);
    CHECK_MPI(MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE));
    payload_check(c, p2p_recv_buf(&s->msg, 0), peer);
    CHECK_MPI(MPI_Send(&s->ack, 1, MPI_BYTE, peer, TAG_ACK, c->comm));
}

static void mbw_mr_teardown(struct kcase *c)
{
    struct mbw_mr *s = c->state;
    p2p_free(&s->msg);
    free(s->reqs);
    free(s);
}

const struct kernel kernel_mbw_mr = {
    .name = "mbw_mr",
    .description = "P/2 pairs stream W messages at once; aggregate bandwidth P/2*W*n/t",
    .family = FAMILY_MANY_RANK,
    .min_ranks = 2,
    .default_window = 64,
    .timed_by = TIMED_BY_MAX,
    .unsupported = mbw_mr_unsupported,
    .setup = mbw_mr_setup,
    .run_once = mbw_mr_run_once,
    .teardown = mbw_mr_teardown,
};
