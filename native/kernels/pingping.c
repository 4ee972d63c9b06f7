/* pingping: both ranks send n bytes to each other at once, so the two
 * messages cross (IMB PingPing, docs/native.md "Kernels"): MPI_Isend,
 * MPI_Recv, MPI_Wait. Each rank's iteration ends when its own message is
 * out and the other's is in; the sample is the slower rank's. --as makes
 * the same exchange of other calls: sendrecv (MPI_Sendrecv, IMB Sendrecv's
 * call) or isend+irecv (both nonblocking, then MPI_Waitall), for the
 * guideline that MPI_Sendrecv is no slower than the two (docs/guidelines.md). */
#include <stdlib.h>

#include "check.h"
#include "kernel.h"

enum { TAG_PING = 1 };
enum { ITSELF = -1, SENDRECV, ISEND_IRECV };
static const char *const mockups[] = {"sendrecv", "isend+irecv", NULL};

struct pingping {
    struct p2p msg;
    int as;
};

static void pingping_setup(struct kcase *c)
{
    struct pingping *p = xcalloc(1, sizeof *p);
    p2p_init(&p->msg, c, true, 1);
    p->as = kcase_param(c, "as") ? kcase_param_choice(c, "as") : ITSELF;
    c->state = p;
}

static void pingping_run_once(struct kcase *c)
{
    struct pingping *p = c->state;
    struct p2p *b = &p->msg;
    int peer = 1 - c->rank;
    MPI_Request req[2];
    payload_fill(c, p2p_send_buf(b));
    switch (p->as) {
    case SENDRECV:
        msg_sendrecv(p2p_send_buf(b), peer, TAG_PING, p2p_recv_buf(b, 0), peer, TAG_PING, &b->type,
                     c->comm);
        break;
    case ISEND_IRECV:
        msg_irecv(p2p_recv_buf(b, 0), &b->type, peer, TAG_PING, c->comm, &req[0]);
        msg_isend(p2p_send_buf(b), &b->type, peer, TAG_PING, c->comm, &req[1]);
        CHECK_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        break;
    default:
        msg_isend(p2p_send_buf(b), &b->type, peer, TAG_PING, c->comm, &req[0]);
        msg_recv(p2p_recv_buf(b, 0), &b->type, peer, TAG_PING, c->comm);
        CHECK_MPI(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    }
    payload_check(c, p2p_recv_buf(b, 0), peer);
}

static void pingping_teardown(struct kcase *c)
{
    struct pingping *p = c->state;
    p2p_free(&p->msg);
    free(p);
}

/* clang-format off */
static const struct kparam pingping_params[] = {
    P2P_DTYPE_PARAM,
    {.name = "as", PARAM_CHOICE, NULL, "the exchange made of other calls "
     "(docs/guidelines.md); default MPI_Isend, MPI_Recv, MPI_Wait", mockups, NULL},
    {0}};
/* clang-format on */

const struct kernel kernel_pingping = {
    .name = "pingping",
    .description = "ranks 0 and 1 send to each other at once; latency t",
    .family = FAMILY_POINT_TO_POINT,
    .min_ranks = 2,
    .max_ranks = 2,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = pingping_params,
    .unsupported = p2p_unsupported,
    .setup = pingping_setup,
    .run_once = pingping_run_once,
    .teardown = pingping_teardown,
};
