/* shift: every node sends to the node d after it and receives from the node
 * d before it, all at once, as mpiGraph measures the fabric under full load
 * (LLNL mpiGraph: for each distance, rank i sends to i+d and receives from
 * i-d). One iteration: W messages of n bytes each way; a rank's phase
 * received ends when all W from its source have arrived, sent when its own
 * W sends complete. --each distance=1,...,N-1 measures every distance in one
 * launch (`commscope health --pattern shift`, docs/health.md). The record's
 * "peers" gives every rank's source. */
#include <stdlib.h>

#include "check.h"
#include "kernel.h"
#include "nodes.h"
#include "sampling.h"

enum { TAG_DATA = 1 };
enum { PHASE_RECEIVED, PHASE_SENT };

static const char *const shift_phases[] = {"received", "sent", NULL};
/* clang-format off */
static const struct kparam shift_params[] = {
    {.name = "distance", PARAM_COUNT, "1", "d: node x sends to x+d, receives from x-d "
     "(mod N), 1 to N-1"},
    NODES_PPN_PARAM,
    {0},
};
/* clang-format on */

struct shift {
    struct p2p msg;
    MPI_Request *reqs; /* the window's receives, then its sends */
    int source, dest;
};

static const char *shift_unsupported(const struct kcase *c)
{
    const char *why = nodes_unsupported(c);
    if (why)
        return why;
    return atoi(kcase_param(c, "distance")) >= nodes_count(c)
               ? "distance beyond the nodes: N nodes have distances 1 to N-1"
               : NULL;
}

static void shift_setup(struct kcase *c)
{
    struct shift *s = xcalloc(1, sizeof *s);
    int nodes = nodes_count(c), node = c->rank / nodes_ppn(c);
    int d = atoi(kcase_param(c, "distance"));
    s->dest = nodes_rank(c, (node + d) % nodes);
    s->source = nodes_rank(c, (node - d + nodes) % nodes);
    c->window = window_limited(c);
    p2p_init(&s->msg, c, true, 1);
    s->reqs = xcalloc(2 * (size_t)c->window, sizeof *s->reqs);
    c->state = s;
}

static void shift_run_once(struct kcase *c)
{
    struct shift *s = c->state;
    int w = c->window;
    payload_fill(c, p2p_send_buf(&s->msg));
    for (int i = 0; i < w; i++)
        msg_irecv(p2p_recv_buf(&s->msg, 0), &s->msg.type, s->source, TAG_DATA, c->comm,
                  &s->reqs[i]);
    for (int i = 0; i < w; i++)
        msg_isend(p2p_send_buf(&s->msg), &s->msg.type, s->dest, TAG_DATA, c->comm,
                  &s->reqs[w + i]);
    CHECK_MPI(MPI_Waitall(w, s->reqs, MPI_STATUSES_IGNORE));
    sampling_phase_end(c, PHASE_RECEIVED);
    payload_check(c, p2p_recv_buf(&s->msg, 0), s->source);
    CHECK_MPI(MPI_Waitall(w, s->reqs + w, MPI_STATUSES_IGNORE));
    sampling_phase_end(c, PHASE_SENT);
}

static void shift_report(struct kcase *c, struct jsonl *j)
{
    nodes_report_peers(c, j, ((struct shift *)c->state)->source);
}

static void shift_teardown(struct kcase *c)
{
    struct shift *s = c->state;
    p2p_free(&s->msg);
    free(s->reqs);
    free(s);
}

const struct kernel kernel_shift = {
    .name = "shift",
    .description = "every node sends W n-byte messages to the node d after it and receives "
                   "from the one d before, at once",
    .family = FAMILY_HEALTH,
    .min_ranks = 2,
    .default_window = 8,
    .timed_by = TIMED_BY_MAX,
    .params = shift_params,
    .unsupported = shift_unsupported,
    .setup = shift_setup,
    .run_once = shift_run_once,
    .teardown = shift_teardown,
    .report = shift_report,
    .phases = shift_phases,
};
