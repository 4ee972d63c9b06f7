/* multi_lat: P/2 pairs ping-pong at once, as osu_multi_lat does (OSU
 * Micro-Benchmarks: rank i pings rank i + P/2 and takes its reply). One
 * iteration is one round trip of every pair; the sample is rank 0's, pair
 * 0's round trip, which osu_multi_lat prints, and each rank's own round trip
 * is the phase `round_trip`, from which every pair's latency is reported
 * (docs/native.md, "multi_lat"). The slowest rank per sample, the sample
 * before, was a maximum over noisy ranks that no pair's own figure showed. */
#include <stdlib.h>

#include "check.h"
#include "kernel.h"
#include "sampling.h"

enum { TAG_PING = 1, TAG_PONG };
enum { PHASE_ROUND_TRIP };

static const char *const multi_lat_phases[] = {"round_trip", NULL};

static bool pings(const struct kcase *c)
{
    return c->rank < c->ranks / 2;
}

static void multi_lat_setup(struct kcase *c)
{
    struct p2p *msg = xcalloc(1, sizeof *msg);
    p2p_init(msg, c, true, 1);
    c->state = msg;
}

static void multi_lat_run_once(struct kcase *c)
{
    struct p2p *msg = c->state;
    int half = c->ranks / 2;
    if (pings(c)) {
        int peer = c->rank + half;
        payload_fill(c, p2p_send_buf(msg));
        msg_send(SEND_STANDARD, p2p_send_buf(msg), &msg->type, peer, TAG_PING, c->comm);
        msg_recv(p2p_recv_buf(msg, 0), &msg->type, peer, TAG_PONG, c->comm);
        payload_check(c, p2p_recv_buf(msg, 0), peer);
    } else {
        int peer = c->rank - half;
        msg_recv(p2p_recv_buf(msg, 0), &msg->type, peer, TAG_PING, c->comm);
        payload_check(c, p2p_recv_buf(msg, 0), peer);
        payload_fill(c, p2p_send_buf(msg));
        msg_send(SEND_STANDARD, p2p_send_buf(msg), &msg->type, peer, TAG_PONG, c->comm);
    }
    sampling_phase_end(c, PHASE_ROUND_TRIP);
}

static void multi_lat_teardown(struct kcase *c)
{
    p2p_free(c->state);
    free(c->state);
}

const struct kernel kernel_multi_lat = {
    .name = "multi_lat",
    .description = "P/2 pairs ping-pong at once; each pair's half round trip",
    .family = FAMILY_MANY_RANK,
    .min_ranks = 2,
    .ranks_multiple = 2, /* pairs rank i with i + P/2 */
    .timed_by = TIMED_BY_ORIGIN,
    .setup = multi_lat_setup,
    .run_once = multi_lat_run_once,
    .teardown = multi_lat_teardown,
    .phases = multi_lat_phases,
};
