/* partitioned: pingpong with MPI-4 partitioned communication (MPI-4.0,
 * chapter 4). Each direction's message of n bytes is --param partitions=P
 * partitions of n/P bytes, one persistent partitioned request per side
 * made in set-up. The sender marks the partitions ready one by one
 * (MPI_Pready), as threads that each fill one would; the receiver waits for
 * each partition in turn with MPI_Parrived, then completes the request. One
 * iteration is one round trip; latency is half of it, as pingpong's. */
#include <stdlib.h>

#include "check.h"
#include "jsonl.h"
#include "kernel.h"

enum { TAG_PING = 1, TAG_PONG };

struct partitioned {
    struct p2p msg;
    int partitions;
    MPI_Request send, recv;
};

/* That every size splits into the partitions is the kind's rule
 * (PARAM_PARTS, kcase_unsupported), checked after this. */
static const char *partitioned_unsupported(const struct kcase *c)
{
    (void)c;
    if (!COMMSCOPE_HAVE_PARTITIONED)
        return "this MPI lacks MPI-4 partitioned communication";
    return NULL;
}

#if COMMSCOPE_HAVE_PARTITIONED
/* Open MPI 5.0's partitioned component duplicates MPI_COMM_WORLD the first
 * time a rank calls it, and that duplication completes only once every rank
 * has called it: with ranks idle beside the pair, the pair's first request
 * waited forever (open-mpi/ompi#12969). So every rank sends itself one
 * partitioned byte first. */
static void partitioned_prepare(MPI_Comm comm)
{
    int rank;
    char out = 0, in;
    MPI_Request r[2];
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    CHECK_MPI(MPI_Psend_init(&out, 1, 1, MPI_BYTE, rank, 0, comm, MPI_INFO_NULL, &r[0]));
    CHECK_MPI(MPI_Precv_init(&in, 1, 1, MPI_BYTE, rank, 0, comm, MPI_INFO_NULL, &r[1]));
    CHECK_MPI(MPI_Startall(2, r));
    CHECK_MPI(MPI_Pready(0, r[0]));
    CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK_MPI(MPI_Request_free(&r[0]));
    CHECK_MPI(MPI_Request_free(&r[1]));
}

static void partitioned_setup(struct kcase *c)
{
    struct partitioned *p = xcalloc(1, sizeof *p);
    p2p_init(&p->msg, c, true, 1);
    p->partitions = atoi(kcase_param(c, "partitions"));
    MPI_Count each = (MPI_Count)(c->bytes / (size_t)p->partitions);
    int peer = 1 - c->rank;
    CHECK_MPI(MPI_Psend_init(p2p_send_buf(&p->msg), p->partitions, each, MPI_BYTE, peer,
                             c->rank == 0 ? TAG_PING : TAG_PONG, c->comm, MPI_INFO_NULL,
                             &p->send));
    CHECK_MPI(MPI_Precv_init(p2p_recv_buf(&p->msg, 0), p->partitions, each, MPI_BYTE, peer,
                             c->rank == 0 ? TAG_PONG : TAG_PING, c->comm, MPI_INFO_NULL,
                             &p->recv));
    c->state = p;
}

static void send_partitions(struct kcase *c, struct partitioned *p)
{
    payload_fill(c, p2p_send_buf(&p->msg));
    CHECK_MPI(MPI_Start(&p->send));
    for (int i = 0; i < p->partitions; i++)
        CHECK_MPI(MPI_Pready(i, p->send));
    CHECK_MPI(MPI_Wait(&p->send, MPI_STATUS_IGNORE));
}

static void receive_partitions(struct kcase *c, struct partitioned *p, int from)
{
    for (int i = 0; i < p->partitions; i++)
        for (int arrived = 0; !arrived;)
            CHECK_MPI(MPI_Parrived(p->recv, i, &arrived));
    CHECK_MPI(MPI_Wait(&p->recv, MPI_STATUS_IGNORE));
    payload_check(c, p2p_recv_buf(&p->msg, 0), from);
}

static void partitioned_run_once(struct kcase *c)
{
    struct partitioned *p = c->state;
    /* Started first, so neither side's send waits on a receive not yet started. */
    CHECK_MPI(MPI_Start(&p->recv));
    if (c->rank == 0) {
        send_partitions(c, p);
        receive_partitions(c, p, 1);
    } else {
        receive_partitions(c, p, 0);
        send_partitions(c, p);
    }
}

static void partitioned_teardown(struct kcase *c)
{
    struct partitioned *p = c->state;
    CHECK_MPI(MPI_Request_free(&p->send));
    CHECK_MPI(MPI_Request_free(&p->recv));
    p2p_free(&p->msg);
    free(p);
}
#else
/* Never called: every case is unsupported without partitioned communication. */
static void partitioned_setup(struct kcase *c)
{
    die("partitioned: %s", partitioned_unsupported(c));
}

static void partitioned_prepare(MPI_Comm comm)
{
    (void)comm;
}
static void partitioned_run_once(struct kcase *c)
{
    (void)c;
}
static void partitioned_teardown(struct kcase *c)
{
    (void)c;
}
#endif

static void partitioned_report(struct kcase *c, struct jsonl *j)
{
    if (j)
        jsonl_int(j, "partition_bytes",
                  (long long)(c->bytes / (size_t)atoll(kcase_param(c, "partitions"))));
}

/* clang-format off */
static const struct kparam partitioned_params[] = {
    {.name = "partitions", PARAM_PARTS, "4", "partitions per message, each n/P bytes; "
     "sizes are whole multiples of P", NULL, NULL},
    {0}};
/* clang-format on */

const struct kernel kernel_partitioned = {
    .name = "partitioned",
    .description = "pingpong of P partitions (MPI_Psend_init, MPI_Pready, MPI_Parrived); "
                   "latency t/2",
    .family = FAMILY_POINT_TO_POINT,
    .min_ranks = 2,
    .max_ranks = 2,
    .timed_by = TIMED_BY_ORIGIN,
    .needs = FEATURE_PARTITIONED,
    .params = partitioned_params,
    .prepare = partitioned_prepare,
    .unsupported = partitioned_unsupported,
    .setup = partitioned_setup,
    .run_once = partitioned_run_once,
    .teardown = partitioned_teardown,
    .report = partitioned_report,
};
