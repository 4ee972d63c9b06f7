/* mbw_mr: P/2 pairs stream at once, as osu_mbw_mr does (OSU Micro-Benchmarks:
 * rank i sends to rank i + P/2). Each sender keeps W messages of n bytes in
 * flight to its receiver, which posts W receives into one buffer and sends a
 * 1-byte acknowledgement once all arrived (bw's protocol, per pair). The
 * sample is the slowest rank's: the aggregate moves P/2 W n bytes in it.
 * With the ranks placed in blocks (the first half on one node), the P/2
 * senders share one node: what the max-rate model fits (docs/models.md).
 *
 * --param pairing: half (the default, OSU's), adjacent (2k sends to 2k + 1),
 * or across: the ranks ordered by node (the MPI_COMM_TYPE_SHARED group they
 * share) and then by rank, the first half of that order sending to the
 * second, so that pairs cross nodes wherever the placement allows, round-robin
 * placements too. The pairs are in the case record. */
#include <stdlib.h>

#include "check.h"
#include "context.h"
#include "jsonl.h"
#include "kernel.h"

enum { TAG_DATA = 1, TAG_ACK };

enum pairing { PAIRING_HALF, PAIRING_ADJACENT, PAIRING_ACROSS };
static const char *const mbw_mr_pairings[] = {"half", "adjacent", "across", NULL};
/* clang-format off */
static const struct kparam mbw_mr_params[] = {
    /* No default, so that runs from before it keep their identity. */
    {.name = "pairing", PARAM_CHOICE, NULL,
     "half: rank i sends to i + P/2 (osu_mbw_mr, the default); adjacent: 2k to "
     "2k + 1; across: the ranks ordered by node, the first half to the second",
     mbw_mr_pairings, NULL},
    {0},
};
/* clang-format on */

struct mbw_mr {
    struct p2p msg;
    MPI_Request *reqs;
    unsigned char ack;
    bool sender;
    int peer;
};

/* Every rank's node (context.h's shm_node), gathered. */
static int *nodes_of(const struct kcase *c)
{
    int first = shm_node(c->comm, c->rank);
    int *nodes = xcalloc((size_t)c->ranks, sizeof *nodes);
    CHECK_MPI(MPI_Allgather(&first, 1, MPI_INT, nodes, 1, MPI_INT, c->comm));
    return nodes;
}

/* A rank's place in the across order: its node, then itself. */
static int by_node(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

static void pair_across(const struct kcase *c, struct mbw_mr *s)
{
    int *nodes = nodes_of(c);
    int (*order)[2] = xcalloc((size_t)c->ranks, sizeof *order);
    int half = c->ranks / 2, mine = 0;
    for (int r = 0; r < c->ranks; r++) {
        order[r][0] = nodes[r];
        order[r][1] = r;
    }
    qsort(order, (size_t)c->ranks, sizeof *order, by_node);
    for (int i = 0; i < c->ranks; i++)
        if (order[i][1] == c->rank)
            mine = i;
    s->sender = mine < half;
    s->peer = order[s->sender ? mine + half : mine - half][1];
    free(order);
    free(nodes);
}

static void mbw_mr_setup(struct kcase *c)
{
    struct mbw_mr *s = xcalloc(1, sizeof *s);
    enum pairing pairing = kcase_param(c, "pairing")
                               ? (enum pairing)kcase_param_choice(c, "pairing")
                               : PAIRING_HALF;
    int half = c->ranks / 2;
    if (pairing == PAIRING_ACROSS) {
        pair_across(c, s);
    } else if (pairing == PAIRING_ADJACENT) {
        s->sender = c->rank % 2 == 0;
        s->peer = c->rank ^ 1;
    } else {
        s->sender = c->rank < half;
        s->peer = s->sender ? c->rank + half : c->rank - half;
    }
    c->window = window_limited(c);
    p2p_init(&s->msg, c, s->sender, s->sender ? 0 : 1);
    s->reqs = xcalloc((size_t)c->window, sizeof *s->reqs);
    c->state = s;
}

/* "pairs": [sender, receiver] of every pair, by sender. */
static void mbw_mr_report(struct kcase *c, struct jsonl *j)
{
    struct mbw_mr *s = c->state;
    int mine[2] = {s->sender, s->peer};
    int *all = xcalloc((size_t)c->ranks * 2, sizeof *all);
    CHECK_MPI(MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, 0, c->comm));
    if (j) {
        jsonl_open(j, "pairs", '[');
        for (int r = 0; r < c->ranks; r++) {
            if (!all[2 * r])
                continue;
            jsonl_open(j, NULL, '[');
            jsonl_int(j, NULL, r);
            jsonl_int(j, NULL, all[2 * r + 1]);
            jsonl_close(j, ']');
        }
        jsonl_close(j, ']');
    }
    free(all);
}

static void mbw_mr_run_once(struct kcase *c)
{
    struct mbw_mr *s = c->state;
    int peer = s->peer;
    if (s->sender) {
        payload_fill(c, p2p_send_buf(&s->msg));
        for (int i = 0; i < c->window; i++)
            msg_isend(p2p_send_buf(&s->msg), &s->msg.type, peer, TAG_DATA, c->comm, &s->reqs[i]);
        CHECK_MPI(MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE));
        CHECK_MPI(MPI_Recv(&s->ack, 1, MPI_BYTE, peer, TAG_ACK, c->comm, MPI_STATUS_IGNORE));
        return;
    }
    for (int i = 0; i < c->window; i++)
        msg_irecv(p2p_recv_buf(&s->msg, 0), &s->msg.type, peer, TAG_DATA, c->comm, &s->reqs[i]);
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
    .ranks_multiple = 2, /* pairs rank i with i + P/2 */
    .default_window = 64,
    .timed_by = TIMED_BY_MAX,
    .params = mbw_mr_params,
    .setup = mbw_mr_setup,
    .run_once = mbw_mr_run_once,
    .teardown = mbw_mr_teardown,
    .report = mbw_mr_report,
};
