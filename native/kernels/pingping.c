/* pingping: both ranks send n bytes to each other at once, so the two
 * messages cross (IMB PingPing, docs/native.md "Kernels"). Each rank's
 * iteration ends when its own message is out and the other's is in; the
 * sample is the slower rank's. */
#include <stdlib.h>

#include "check.h"
#include "kernel.h"

enum { TAG_PING = 1 };

static void pingping_setup(struct kcase *c)
{
    struct p2p *b = xcalloc(1, sizeof *b);
    p2p_init(b, c, true, 1);
    c->state = b;
}

static void pingping_run_once(struct kcase *c)
{
    struct p2p *b = c->state;
    int peer = 1 - c->rank;
    MPI_Request req;
    payload_fill(c, p2p_send_buf(b));
    msg_isend(p2p_send_buf(b), &b->type, peer, TAG_PING, c->comm, &req);
    msg_recv(p2p_recv_buf(b, 0), &b->type, peer, TAG_PING, c->comm);
    CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    payload_check(c, p2p_recv_buf(b, 0), peer);
}

static void pingping_teardown(struct kcase *c)
{
    p2p_free(c->state);
    free(c->state);
}

static const struct kparam pingping_params[] = {P2P_DTYPE_PARAM, {0}};

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
