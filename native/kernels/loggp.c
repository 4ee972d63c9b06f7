/* loggp: what the LogGP model's parameters (Alexandrov, Ionescu, Schauser &
 * Scheiman, SPAA 1995) are made of, measured per size m as Kielmann, Bal &
 * Verstoep measure the parameterised LogP model (IPDPS Workshops 2000,
 * LNCS 1800): each iteration times, as phases (docs/native.md, "loggp"),
 *   o_s: rank 0's MPI_Send of m bytes to rank 1, already in its receive;
 *   ack: rank 0's wait for rank 1's empty reply (o_s + ack: the round trip);
 *   o_r: rank 1's MPI_Recv of m bytes that arrived while it waited (it first
 *        spins for twice a round trip timed in setup);
 *   gap: rank 0 sends W messages back to back and waits for rank 1's empty
 *        reply to the last (W g(m) and one round trip of nothing);
 * and everything else of the iteration as rest. A receive of a message sent
 * by rendezvous cannot start before the receive is posted, so beyond the
 * library's eager limit o_r also holds the transfer. */
#include <stdlib.h>

#include "check.h"
#include "kernel.h"
#include "sampling.h"

enum { TAG_DATA = 1, TAG_ACK, TAG_DELAY };
enum { PHASE_O_S, PHASE_ACK, PHASE_O_R, PHASE_GAP, PHASE_REST };
static const char *const loggp_phases[] = {"o_s", "ack", "o_r", "gap", "rest", NULL};

enum { DELAY_ROUNDS = 16 }; /* round trips timed in setup, for the receiver's wait */

struct loggp {
    struct p2p msg;
    double delay_s; /* rank 1's wait before the timed receive */
};

static void ack_send(const struct kcase *c, int to)
{
    CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, to, TAG_ACK, c->comm));
}

static void ack_recv(const struct kcase *c, int from)
{
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, from, TAG_ACK, c->comm, MPI_STATUS_IGNORE));
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Twice the median of DELAY_ROUNDS round trips of m bytes there and none
 * back, plus 1 us: long enough for the message to be in before rank 1
 * receives it. Rank 0 times them and tells rank 1. */
static double receiver_delay(const struct kcase *c, struct loggp *s)
{
    double rtt[DELAY_ROUNDS], delay = 0;
    for (int i = 0; i < DELAY_ROUNDS; i++) {
        if (c->rank == 0) {
            double start = MPI_Wtime();
            msg_send(SEND_STANDARD, p2p_send_buf(&s->msg), &s->msg.type, 1, TAG_DATA, c->comm);
            ack_recv(c, 1);
            rtt[i] = MPI_Wtime() - start;
        } else {
            msg_recv(p2p_recv_buf(&s->msg, 0), &s->msg.type, 0, TAG_DATA, c->comm);
            ack_send(c, 0);
        }
    }
    if (c->rank == 0) {
        qsort(rtt, DELAY_ROUNDS, sizeof *rtt, by_value);
        delay = 2 * rtt[DELAY_ROUNDS / 2] + 1e-6;
        CHECK_MPI(MPI_Send(&delay, 1, MPI_DOUBLE, 1, TAG_DELAY, c->comm));
    } else {
        CHECK_MPI(MPI_Recv(&delay, 1, MPI_DOUBLE, 0, TAG_DELAY, c->comm, MPI_STATUS_IGNORE));
    }
    return delay;
}

static void loggp_setup(struct kcase *c)
{
    struct loggp *s = xcalloc(1, sizeof *s);
    c->window = window_limited(c);
    p2p_init(&s->msg, c, c->rank == 0, c->rank == 1 ? 1 : 0);
    s->delay_s = receiver_delay(c, s);
    c->state = s;
}

static void sender(struct kcase *c, struct loggp *s)
{
    void *buf = p2p_send_buf(&s->msg);
    payload_fill(c, buf);
    sampling_phase_end(c, PHASE_REST);
    msg_send(SEND_STANDARD, buf, &s->msg.type, 1, TAG_DATA, c->comm);
    sampling_phase_end(c, PHASE_O_S);
    ack_recv(c, 1);
    sampling_phase_end(c, PHASE_ACK);
    msg_send(SEND_STANDARD, buf, &s->msg.type, 1, TAG_DATA, c->comm); /* for o_r */
    ack_recv(c, 1);
    sampling_phase_end(c, PHASE_REST);
    for (int i = 0; i < c->window; i++)
        msg_send(SEND_STANDARD, buf, &s->msg.type, 1, TAG_DATA, c->comm);
    ack_recv(c, 1);
    sampling_phase_end(c, PHASE_GAP);
}

static void receiver(struct kcase *c, struct loggp *s)
{
    void *buf = p2p_recv_buf(&s->msg, 0);
    msg_recv(buf, &s->msg.type, 0, TAG_DATA, c->comm);
    payload_check(c, buf, 0);
    ack_send(c, 0);
    double until = MPI_Wtime() + s->delay_s;
    while (MPI_Wtime() < until)
        ; /* the message arrives meanwhile: the receive below only takes it in */
    sampling_phase_end(c, PHASE_REST);
    msg_recv(buf, &s->msg.type, 0, TAG_DATA, c->comm);
    sampling_phase_end(c, PHASE_O_R);
    ack_send(c, 0);
    for (int i = 0; i < c->window; i++)
        msg_recv(buf, &s->msg.type, 0, TAG_DATA, c->comm);
    ack_send(c, 0);
    sampling_phase_end(c, PHASE_REST);
}

static void loggp_run_once(struct kcase *c)
{
    if (c->rank == 0)
        sender(c, c->state);
    else
        receiver(c, c->state);
}

static void loggp_teardown(struct kcase *c)
{
    struct loggp *s = c->state;
    p2p_free(&s->msg);
    free(s);
}

const struct kernel kernel_loggp = {
    .name = "loggp",
    .description = "LogGP's parts per size: o_s, o_r, the gap of W messages; phases",
    .family = FAMILY_POINT_TO_POINT,
    .min_ranks = 2,
    .max_ranks = 2,
    .default_window = 32,
    .timed_by = TIMED_BY_ORIGIN,
    .setup = loggp_setup,
    .run_once = loggp_run_once,
    .teardown = loggp_teardown,
    .phases = loggp_phases,
};
