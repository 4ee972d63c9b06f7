/* ring: the P ranks form a periodic chain, right = rank + 1, left =
 * rank - 1 (mod P), in one of three patterns (docs/kernels-many-rank.md
 * "ring"):
 *   ring      seed 001: every rank starts one message rightward (clockwise)
 *             and one leftward; each of P steps forwards what the last step
 *             brought, so after P steps each message is back at its origin;
 *   sendrecv  IMB Sendrecv: MPI_Sendrecv to the right, from the left;
 *   exchange  IMB Exchange: MPI_Isend to both neighbours, MPI_Irecv from
 *             both, MPI_Waitall.
 * With two ranks the left and right neighbour are the same rank: the two
 * directions always carry different tags, so they cannot be mixed up. */
#include <stdlib.h>

#include "check.h"
#include "kernel.h"

enum pattern { PATTERN_RING, PATTERN_SENDRECV, PATTERN_EXCHANGE };
enum direction { RIGHTWARD, LEFTWARD };

static const char *const ring_patterns[] = {"ring", "sendrecv", "exchange", NULL};
/* The order of a ring step's calls. It matters: over Open MPI's TCP, with
 * the receives posted first, each step of rendezvous-sized messages took
 * as long as its four messages one after another, twice the send-first
 * time (docs/kernels-many-rank.md, "ring"). */
static const char *const ring_posts[] = {"recv-first", "send-first", NULL};
/* clang-format off */
static const struct kparam ring_params[] = {
    {.name = "pattern", PARAM_CHOICE, "ring",
     "both-way forwarding ring (seed 001), IMB Sendrecv, or IMB Exchange",
     ring_patterns, NULL},
    /* No default, so that runs from before it keep their identity. */
    {.name = "post", PARAM_CHOICE, NULL,
     "pattern ring: each step's receives before its sends (recv-first, the "
     "default) or after them",
     ring_posts, NULL},
    {0},
};
/* clang-format on */

struct ring {
    struct p2p msg; /* send_buf: this rank's own payload */
    enum pattern pattern;
    bool send_first;
    int left, right;
};

/* A message's tag names its origin and direction, so every receive
 * matches exactly one message: the one it is waiting for. */
static int tag_of(int origin, enum direction d)
{
    return 2 * origin + (int)d;
}

static const char *ring_unsupported(const struct kcase *c)
{
    void *value;
    int flag;
    CHECK_MPI(MPI_Comm_get_attr(c->comm, MPI_TAG_UB, &value, &flag));
    if (!flag || *(int *)value < tag_of(c->ranks - 1, LEFTWARD))
        return "ring needs tags up to 2 * ranks - 1, over this MPI's "
               "MPI_TAG_UB";
    return NULL;
}

static void ring_setup(struct kcase *c)
{
    struct ring *s = xcalloc(1, sizeof *s);
    static const int slots[] = {
        [PATTERN_RING] = 4, [PATTERN_SENDRECV] = 1, [PATTERN_EXCHANGE] = 2};
    s->pattern = (enum pattern)kcase_param_choice(c, "pattern");
    s->send_first = kcase_param(c, "post") && kcase_param_choice(c, "post") == 1;
    s->left = (c->rank + c->ranks - 1) % c->ranks;
    s->right = (c->rank + 1) % c->ranks;
    p2p_init(&s->msg, c, true, slots[s->pattern]);
    c->state = s;
}

/* Step k (1..P) brings, from the left, the rightward message that started
 * k ranks to the left, and from the right the leftward one that started k
 * ranks to the right; step P brings back this rank's own two messages.
 * Each step receives into the buffers the previous step did not, and sends
 * on what the previous step brought. */
static void circulate(struct kcase *c, struct ring *s)
{
    const struct msg_type *t = &s->msg.type;
    int p = c->ranks, rank = c->rank;
    const void *out_right = p2p_send_buf(&s->msg), *out_left = p2p_send_buf(&s->msg);
    payload_fill(c, p2p_send_buf(&s->msg));
    for (int k = 1; k <= p; k++) {
        void *in_left = p2p_recv_buf(&s->msg, k % 2);
        void *in_right = p2p_recv_buf(&s->msg, 2 + k % 2);
        int from_left = (rank - k + p) % p, from_right = (rank + k) % p;
        int sent_right = (rank - k + 1 + p) % p, sent_left = (rank + k - 1) % p;
        MPI_Request req[4];
        for (int turn = 0; turn < 2; turn++) {
            if (turn == s->send_first) {
                msg_irecv(in_left, t, s->left, tag_of(from_left, RIGHTWARD), c->comm, &req[0]);
                msg_irecv(in_right, t, s->right, tag_of(from_right, LEFTWARD), c->comm, &req[1]);
            } else {
                msg_isend(out_right, t, s->right, tag_of(sent_right, RIGHTWARD), c->comm, &req[2]);
                msg_isend(out_left, t, s->left, tag_of(sent_left, LEFTWARD), c->comm, &req[3]);
            }
        }
        CHECK_MPI(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
        payload_check(c, in_left, from_left);
        payload_check(c, in_right, from_right);
        out_right = in_left;
        out_left = in_right;
    }
}

static void sendrecv(struct kcase *c, struct ring *s)
{
    void *in = p2p_recv_buf(&s->msg, 0);
    payload_fill(c, p2p_send_buf(&s->msg));
    msg_sendrecv(p2p_send_buf(&s->msg), s->right, tag_of(c->rank, RIGHTWARD), in, s->left,
                 tag_of(s->left, RIGHTWARD), &s->msg.type, c->comm);
    payload_check(c, in, s->left);
}

/* In IMB Exchange's order: both sends, then both receives. */
static void exchange(struct kcase *c, struct ring *s)
{
    const struct msg_type *t = &s->msg.type;
    void *in_left = p2p_recv_buf(&s->msg, 0);
    void *in_right = p2p_recv_buf(&s->msg, 1);
    MPI_Request req[4];
    payload_fill(c, p2p_send_buf(&s->msg));
    msg_isend(p2p_send_buf(&s->msg), t, s->right, tag_of(c->rank, RIGHTWARD), c->comm, &req[0]);
    msg_isend(p2p_send_buf(&s->msg), t, s->left, tag_of(c->rank, LEFTWARD), c->comm, &req[1]);
    msg_irecv(in_left, t, s->left, tag_of(s->left, RIGHTWARD), c->comm, &req[2]);
    msg_irecv(in_right, t, s->right, tag_of(s->right, LEFTWARD), c->comm, &req[3]);
    CHECK_MPI(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
    payload_check(c, in_left, s->left);
    payload_check(c, in_right, s->right);
}

static void ring_run_once(struct kcase *c)
{
    struct ring *s = c->state;
    switch (s->pattern) {
    case PATTERN_RING:
        circulate(c, s);
        break;
    case PATTERN_SENDRECV:
        sendrecv(c, s);
        break;
    case PATTERN_EXCHANGE:
        exchange(c, s);
        break;
    }
}

static void ring_teardown(struct kcase *c)
{
    struct ring *s = c->state;
    p2p_free(&s->msg);
    free(s);
}

const struct kernel kernel_ring = {
    .name = "ring",
    .description = "periodic chain of all ranks, --param "
                   "pattern=ring|sendrecv|exchange",
    .family = FAMILY_MANY_RANK,
    .min_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = ring_params,
    .unsupported = ring_unsupported,
    .setup = ring_setup,
    .run_once = ring_run_once,
    .teardown = ring_teardown,
};
