/* pairs: one round of disjoint pairs of nodes (`commscope health`,
 * docs/health.md), chosen by --param schedule:
 *   tournament (the default): round k of a round-robin tournament. N nodes
 *     play N-1 rounds (N odd: N rounds, one node sitting out each), each
 *     round ⌊N/2⌋ disjoint pairs at once, so every pair meets exactly once;
 *     --each round=1,...,R measures them all in one launch. The circle
 *     method: in round k+1 (M the nodes made even), node M-1 meets node k
 *     and node x meets node 2k-x mod M-1.
 *   adjacent: node 2i meets node 2i+1, so the launcher's host order is the
 *     pairing (health --screen's rounds, each a random or chosen matching);
 *     N odd: the last sits out.
 * --param touch all: before the first sample, one byte each way with the same
 * local rank of every other node, so that a launch finishes only if every
 * pair of its nodes can talk (the screen's rounds meet a few pairs, and its
 * tracing of a launch that hangs assumes that any two nodes in it talked).
 *
 * One iteration, per pair: a ping-pong of n bytes (phase round_trip), then W
 * messages of n bytes from the lower node to the higher and a 1-byte
 * acknowledgement, then the same the other way (bw's protocol, each way; the
 * sender's phase sent, the receiver's received). The record's "peers" gives
 * every rank's peer this round (-1: sitting out). */
#include <stdlib.h>

#include "check.h"
#include "kernel.h"
#include "nodes.h"
#include "sampling.h"

enum { TAG_PING = 1, TAG_PONG, TAG_DATA, TAG_ACK, TAG_TOUCH };
enum { PHASE_ROUND_TRIP, PHASE_SENT, PHASE_RECEIVED };

static const char *const pairs_phases[] = {"round_trip", "sent", "received", NULL};
enum schedule { TOURNAMENT, ADJACENT };
static const char *const schedules[] = {"tournament", "adjacent", NULL};
enum touch { TOUCH_NONE, TOUCH_ALL };
static const char *const touches[] = {"none", "all", NULL};
/* clang-format off */
static const struct kparam pairs_params[] = {
    {.name = "round", PARAM_COUNT, "1", "the round, 1 to N-1 (N nodes; N odd: 1 to N)"},
    {.name = "schedule", PARAM_CHOICE, "tournament",
     "who meets whom: a round of the tournament, or node 2i with 2i+1", schedules, NULL},
    {.name = "touch", PARAM_CHOICE, "none",
     "before the first sample, a byte each way with every other node (all), or not",
     touches, NULL},
    NODES_PPN_PARAM,
    {0},
};
/* clang-format on */

struct pairs {
    struct p2p msg;
    MPI_Request *reqs;
    unsigned char ack;
    int peer; /* -1: this rank's node sits the round out */
    bool low; /* on the lower node of its pair */
};

static int rounds(int nodes)
{
    return nodes % 2 ? nodes : nodes - 1;
}

/* The node `node` meets in round k+1 (the circle method); `nodes` when it sits out. */
static int opponent(int node, int nodes, int k)
{
    int m = nodes + nodes % 2;
    if (node == m - 1)
        return k;
    if (node == k)
        return m - 1;
    return ((2 * k - node) % (m - 1) + (m - 1)) % (m - 1);
}

static int partner(const struct kcase *c, int node)
{
    int nodes = nodes_count(c), round = atoi(kcase_param(c, "round"));
    if (kcase_param_choice(c, "schedule") == ADJACENT)
        return (node ^ 1) < nodes ? node ^ 1 : nodes;
    return opponent(node, nodes, round - 1);
}

static const char *pairs_unsupported(const struct kcase *c)
{
    const char *why = nodes_unsupported(c);
    if (why)
        return why;
    return kcase_param_choice(c, "schedule") == TOURNAMENT &&
                   atoi(kcase_param(c, "round")) > rounds(nodes_count(c))
               ? "round beyond the tournament: N nodes play N-1 rounds (N odd: N)"
               : NULL;
}

/* A byte each way with local rank l of every other node: O(N) requests, freed here. */
static void touch_every_node(struct kcase *c)
{
    int nodes = nodes_count(c), node = c->rank / nodes_ppn(c), n = 0;
    MPI_Request *reqs = xcalloc(2 * (size_t)nodes, sizeof *reqs);
    unsigned char out = 1, *in = xcalloc((size_t)nodes, 1);
    for (int other = 0; other < nodes; other++) {
        if (other == node)
            continue;
        int peer = nodes_rank(c, other);
        CHECK_MPI(MPI_Irecv(&in[other], 1, MPI_BYTE, peer, TAG_TOUCH, c->comm, &reqs[n++]));
        CHECK_MPI(MPI_Isend(&out, 1, MPI_BYTE, peer, TAG_TOUCH, c->comm, &reqs[n++]));
    }
    CHECK_MPI(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    free(in);
    free(reqs);
}

static void pairs_setup(struct kcase *c)
{
    if (kcase_param_choice(c, "touch") == TOUCH_ALL)
        touch_every_node(c);
    struct pairs *s = xcalloc(1, sizeof *s);
    int nodes = nodes_count(c), node = c->rank / nodes_ppn(c);
    int other = partner(c, node);
    s->peer = other < nodes ? nodes_rank(c, other) : -1;
    s->low = node < other;
    c->window = window_limited(c);
    p2p_init(&s->msg, c, true, 1);
    s->reqs = xcalloc((size_t)c->window, sizeof *s->reqs);
    c->state = s;
}

static void stream_out(struct kcase *c, struct pairs *s)
{
    payload_fill(c, p2p_send_buf(&s->msg));
    for (int i = 0; i < c->window; i++)
        msg_isend(p2p_send_buf(&s->msg), &s->msg.type, s->peer, TAG_DATA, c->comm, &s->reqs[i]);
    CHECK_MPI(MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE));
    CHECK_MPI(MPI_Recv(&s->ack, 1, MPI_BYTE, s->peer, TAG_ACK, c->comm, MPI_STATUS_IGNORE));
    sampling_phase_end(c, PHASE_SENT);
}

static void stream_in(struct kcase *c, struct pairs *s)
{
    for (int i = 0; i < c->window; i++)
        msg_irecv(p2p_recv_buf(&s->msg, 0), &s->msg.type, s->peer, TAG_DATA, c->comm, &s->reqs[i]);
    CHECK_MPI(MPI_Waitall(c->window, s->reqs, MPI_STATUSES_IGNORE));
    payload_check(c, p2p_recv_buf(&s->msg, 0), s->peer);
    CHECK_MPI(MPI_Send(&s->ack, 1, MPI_BYTE, s->peer, TAG_ACK, c->comm));
    sampling_phase_end(c, PHASE_RECEIVED);
}

static void pairs_run_once(struct kcase *c)
{
    struct pairs *s = c->state;
    if (s->peer < 0)
        return;
    void *out = p2p_send_buf(&s->msg), *in = p2p_recv_buf(&s->msg, 0);
    payload_fill(c, out);
    if (s->low) {
        msg_send(SEND_STANDARD, out, &s->msg.type, s->peer, TAG_PING, c->comm);
        msg_recv(in, &s->msg.type, s->peer, TAG_PONG, c->comm);
    } else {
        msg_recv(in, &s->msg.type, s->peer, TAG_PING, c->comm);
        msg_send(SEND_STANDARD, out, &s->msg.type, s->peer, TAG_PONG, c->comm);
    }
    payload_check(c, in, s->peer);
    sampling_phase_end(c, PHASE_ROUND_TRIP);
    if (s->low) {
        stream_out(c, s);
        stream_in(c, s);
    } else {
        stream_in(c, s);
        stream_out(c, s);
    }
}

static void pairs_report(struct kcase *c, struct jsonl *j)
{
    nodes_report_peers(c, j, ((struct pairs *)c->state)->peer);
}

static void pairs_teardown(struct kcase *c)
{
    struct pairs *s = c->state;
    p2p_free(&s->msg);
    free(s->reqs);
    free(s);
}

const struct kernel kernel_pairs = {
    .name = "pairs",
    .description = "one round of a tournament of the nodes: each pair's round trip and "
                   "W n-byte messages each way",
    .family = FAMILY_HEALTH,
    .min_ranks = 2,
    .default_window = 8,
    .timed_by = TIMED_BY_MAX,
    .params = pairs_params,
    .unsupported = pairs_unsupported,
    .setup = pairs_setup,
    .run_once = pairs_run_once,
    .teardown = pairs_teardown,
    .report = pairs_report,
    .phases = pairs_phases,
};
