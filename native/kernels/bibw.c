/* bibw: ranks 0 and 1 each post W receives and W sends of n bytes to the
 * other, then wait for all (OSU osu_bibw, docs/native.md "Kernels"); the
 * sample is the slower rank's. The receives go to one buffer, as
 * osu_bibw's do, or to W distinct ones (--param recv_buffers). */
#include <stdlib.h>

#include "check.h"
#include "jsonl.h"
#include "kernel.h"

enum { TAG_DATA = 1 };

struct bibw {
    struct p2p msg;
    MPI_Request *reqs; /* W receives, then W sends */
    int slots;         /* receive buffers: 1, or the window */
};

static void bibw_setup(struct kcase *c)
{
    struct bibw *s = xcalloc(1, sizeof *s);
    c->window = window_limited(c);
    s->slots = recv_slots(c);
    /* As in osu_bibw, each rank sends the same buffer W times. */
    p2p_init(&s->msg, c, true, s->slots);
    s->reqs = xcalloc(2 * (size_t)c->window, sizeof *s->reqs);
    c->state = s;
}

static void bibw_run_once(struct kcase *c)
{
    struct bibw *s = c->state;
    int peer = 1 - c->rank, w = c->window;
    payload_fill(c, p2p_send_buf(&s->msg));
    for (int i = 0; i < w; i++)
        msg_irecv(p2p_recv_buf(&s->msg, i % s->slots), &s->msg.type, peer, TAG_DATA, c->comm,
                  &s->reqs[i]);
    for (int i = 0; i < w; i++)
        msg_isend(p2p_send_buf(&s->msg), &s->msg.type, peer, TAG_DATA, c->comm, &s->reqs[w + i]);
    CHECK_MPI(MPI_Waitall(2 * w, s->reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < s->slots; i++)
        payload_check(c, p2p_recv_buf(&s->msg, i), peer);
}

static void bibw_report(struct kcase *c, struct jsonl *j)
{
    if (j)
        recv_slots_report(j, ((struct bibw *)c->state)->slots);
}

static void bibw_teardown(struct kcase *c)
{
    struct bibw *s = c->state;
    p2p_free(&s->msg);
    free(s->reqs);
    free(s);
}

static const struct kparam bibw_params[] = {RECV_BUFFERS_PARAM, P2P_DTYPE_PARAM, {0}};

const struct kernel kernel_bibw = {
    .name = "bibw",
    .description = "ranks 0 and 1 both stream W messages; bandwidth 2*W*n/t",
    .family = FAMILY_POINT_TO_POINT,
    .min_ranks = 2,
    .max_ranks = 2,
    .default_window = 64,
    .timed_by = TIMED_BY_MAX,
    .cold_cache = true,
    .params = bibw_params,
    .unsupported = p2p_unsupported,
    .setup = bibw_setup,
    .run_once = bibw_run_once,
    .teardown = bibw_teardown,
    .report = bibw_report,
};
