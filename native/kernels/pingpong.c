/* pingpong: rank 0 sends n bytes to rank 1, rank 1 sends n bytes back; one
 * iteration is one round trip and latency is half of it (docs/native.md,
 * "Kernels"; the definition of OSU osu_latency and IMB PingPong), in each
 * of six send modes. --param persistent makes each send and receive a
 * persistent request once, in the four modes that have one; the receives
 * are then started before their messages can arrive (ready mode needs it,
 * and every mode does the same). */
#include <stdlib.h>

#include "check.h"
#include "kernel.h"

enum { TAG_PING = 1, TAG_PONG, TAG_READY };

struct pingpong {
    struct p2p msg;
    /* ready mode or persistent, rank 1: the receive of the next ping */
    MPI_Request next_ping;
    MPI_Request send, recv; /* persistent: this rank's requests */
};

static const char *pingpong_unsupported(const struct kcase *c)
{
    if (c->mode == SEND_BUFFERED && !msg_bsend_fits(c->bytes))
        return "buffered send over INT_MAX bytes needs MPI-4 "
               "MPI_Buffer_attach_c";
    return p2p_unsupported(c);
}

/* Rank 0 sends pings and receives pongs, rank 1 the other way round; warm
 * buffers only (persistent binds_buffers: no --cold-cache), so one request each. */
static void persist(struct kcase *c, struct pingpong *p)
{
    int peer = 1 - c->rank;
    msg_send_init(c->mode, p2p_send_buf(&p->msg), &p->msg.type, peer,
                  c->rank == 0 ? TAG_PING : TAG_PONG, c->comm, &p->send);
    msg_recv_init(p2p_recv_buf(&p->msg, 0), &p->msg.type, peer, c->rank == 0 ? TAG_PONG : TAG_PING,
                  c->comm, &p->recv);
    if (c->rank == 1)
        CHECK_MPI(MPI_Start(&p->recv));
}

static void pingpong_setup(struct kcase *c)
{
    struct pingpong *p = xcalloc(1, sizeof *p);
    p2p_init(&p->msg, c, true, 1);
    p->next_ping = p->send = p->recv = MPI_REQUEST_NULL;
    if (c->mode == SEND_BUFFERED)
        msg_buffer_attach(&p->msg.type, c->comm);
    if (kcase_param_switch(c, "persistent"))
        persist(c, p);
    /* MPI_Rsend is correct only once the matching receive is posted: rank 1
     * posts the receive for the first ping, then says so in a zero-byte
     * message that rank 0 waits for. */
    if (c->mode == SEND_READY && c->rank == 1 && !kcase_param_switch(c, "persistent")) {
        msg_irecv(p2p_recv_buf(&p->msg, 0), &p->msg.type, 0, TAG_PING, c->comm, &p->next_ping);
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_READY, c->comm));
    } else if (c->mode == SEND_READY && c->rank == 1) {
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_READY, c->comm));
    } else if (c->mode == SEND_READY) {
        CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_READY, c->comm, MPI_STATUS_IGNORE));
    }
    c->state = p;
}

static void initiate(struct kcase *c, struct pingpong *p)
{
    const struct msg_type *t = &p->msg.type;
    void *ping = p2p_send_buf(&p->msg), *pong = p2p_recv_buf(&p->msg, 0);
    MPI_Request req[2];
    payload_fill(c, ping);
    switch (c->mode) {
    case SEND_READY:
        /* The pong's receive is posted before the ping leaves, and rank 1
         * sends the pong only after the ping arrived: its Rsend is legal. */
        msg_irecv(pong, t, 1, TAG_PONG, c->comm, &req[0]);
        msg_send(SEND_READY, ping, t, 1, TAG_PING, c->comm);
        CHECK_MPI(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
        break;
    case SEND_NONBLOCKING:
        msg_irecv(pong, t, 1, TAG_PONG, c->comm, &req[0]);
        msg_isend(ping, t, 1, TAG_PING, c->comm, &req[1]);
        CHECK_MPI(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        break;
    case SEND_SENDRECV:
        msg_sendrecv(ping, 1, TAG_PING, pong, 1, TAG_PONG, t, c->comm);
        break;
    default: /* standard, synchronous, buffered */
        msg_send(c->mode, ping, t, 1, TAG_PING, c->comm);
        msg_recv(pong, t, 1, TAG_PONG, c->comm);
        break;
    }
    payload_check(c, pong, 1);
}

static void echo(struct kcase *c, struct pingpong *p)
{
    const struct msg_type *t = &p->msg.type;
    void *ping = p2p_recv_buf(&p->msg, 0), *pong = p2p_send_buf(&p->msg);
    MPI_Request req;
    switch (c->mode) {
    case SEND_READY:
        CHECK_MPI(MPI_Wait(&p->next_ping, MPI_STATUS_IGNORE));
        payload_check(c, ping, 0);
        payload_fill(c, pong);
        /* Posted before pong i leaves, and rank 0 sends ping i+1 only after
         * pong i arrived: rank 0's next Rsend finds it, in iteration i+1's
         * buffer (--cold-cache: another set). */
        msg_irecv(p2p_recv_buf_at(&p->msg, 0, c->iteration + 1), t, 0, TAG_PING, c->comm,
                  &p->next_ping);
        msg_send(SEND_READY, pong, t, 0, TAG_PONG, c->comm);
        break;
    case SEND_NONBLOCKING:
        msg_irecv(ping, t, 0, TAG_PING, c->comm, &req);
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        payload_check(c, ping, 0);
        payload_fill(c, pong);
        msg_isend(pong, t, 0, TAG_PONG, c->comm, &req);
        CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        break;
    default: /* standard, synchronous, buffered; sendrecv echoes standard */
        msg_recv(ping, t, 0, TAG_PING, c->comm);
        payload_check(c, ping, 0);
        payload_fill(c, pong);
        msg_send(c->mode == SEND_SENDRECV ? SEND_STANDARD : c->mode, pong, t, 0, TAG_PONG,
                 c->comm);
        break;
    }
}

static void persistent_round_trip(struct kcase *c, struct pingpong *p)
{
    if (c->rank == 0) {
        payload_fill(c, p2p_send_buf(&p->msg));
        CHECK_MPI(MPI_Start(&p->recv));
        CHECK_MPI(MPI_Start(&p->send));
        CHECK_MPI(MPI_Wait(&p->send, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Wait(&p->recv, MPI_STATUS_IGNORE));
        payload_check(c, p2p_recv_buf(&p->msg, 0), 1);
        return;
    }
    CHECK_MPI(MPI_Wait(&p->recv, MPI_STATUS_IGNORE));
    payload_check(c, p2p_recv_buf(&p->msg, 0), 0);
    payload_fill(c, p2p_send_buf(&p->msg));
    CHECK_MPI(MPI_Start(&p->recv)); /* the next ping's, before the pong leaves */
    CHECK_MPI(MPI_Start(&p->send));
    CHECK_MPI(MPI_Wait(&p->send, MPI_STATUS_IGNORE));
}

static void pingpong_run_once(struct kcase *c)
{
    struct pingpong *p = c->state;
    if (p->send != MPI_REQUEST_NULL)
        persistent_round_trip(c, p);
    else if (c->rank == 0)
        initiate(c, p);
    else
        echo(c, p);
}

static void pingpong_teardown(struct kcase *c)
{
    struct pingpong *p = c->state;
    /* Ready mode and persistent requests leave rank 1 one receive for a
     * ping that never comes. */
    MPI_Request *left = p->send != MPI_REQUEST_NULL && c->rank == 1 ? &p->recv : &p->next_ping;
    if (*left != MPI_REQUEST_NULL) {
        MPI_Status status;
        int cancelled;
        CHECK_MPI(MPI_Cancel(left));
        CHECK_MPI(MPI_Wait(left, &status));
        CHECK_MPI(MPI_Test_cancelled(&status, &cancelled));
        if (!cancelled)
            die("%s: a message matched the receive left posted after the last ping",
                send_mode_names[c->mode]);
    }
    if (p->send != MPI_REQUEST_NULL) {
        CHECK_MPI(MPI_Request_free(&p->send));
        CHECK_MPI(MPI_Request_free(&p->recv));
    }
    if (c->mode == SEND_BUFFERED)
        msg_buffer_detach();
    p2p_free(&p->msg);
    free(p);
}

static const struct kparam pingpong_params[] = {
    P2P_PERSISTENT_PARAM(PERSISTENT_MODES), P2P_DTYPE_PARAM, P2P_LAYOUT_PARAM, {0}};

const struct kernel kernel_pingpong = {
    .name = "pingpong",
    .description = "rank 0 sends, rank 1 sends back; latency t/2",
    .family = FAMILY_POINT_TO_POINT,
    .min_ranks = 2,
    .max_ranks = 2,
    .modes = SEND_MODE_BIT(SEND_STANDARD) | SEND_MODE_BIT(SEND_SYNCHRONOUS) |
             SEND_MODE_BIT(SEND_BUFFERED) | SEND_MODE_BIT(SEND_READY) |
             SEND_MODE_BIT(SEND_NONBLOCKING) | SEND_MODE_BIT(SEND_SENDRECV),
    .timed_by = TIMED_BY_ORIGIN,
    .cold_cache = true,
    .params = pingpong_params,
    .unsupported = pingpong_unsupported,
    .setup = pingpong_setup,
    .run_once = pingpong_run_once,
    .teardown = pingpong_teardown,
};
