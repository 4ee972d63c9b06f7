/* Offset estimation by Cristian's method (F. Cristian, "Probabilistic clock
 * synchronization", Distributed Computing 3(3), 1989), as SKaMPI does for
 * its window-based collective timing (T. Worsch, R. Reussner, W. Augustin,
 * "On benchmarking collective MPI operations", EuroPVM/MPI 2002): rank 0
 * sends a ping at t_send, rank r answers with its clock reading t_r, rank 0
 * reads t_recv. If the reply was read halfway, r's offset is
 * t_r - (t_send + t_recv) / 2, wrong by at most (t_recv - t_send) / 2
 * whatever the two legs' delays; of many exchanges the one with the
 * smallest round trip is kept, as it bounds the error tightest. Drift is
 * not modelled (Jones and Koenig fit a linear one: "Clock synchronization
 * in high-end computing environments", Concurrency Computat.: Pract.
 * Exper. 25(6), 2013); the timing loop estimates offsets anew for every
 * case instead, so drift only accrues over one case. */
#include "clocksync.h"

#include <math.h>
#include <stdlib.h>

#include "check.h"

#define EXCHANGES 100
/* Below MPI's guaranteed MPI_TAG_UB (32767) and used by no kernel. */
#define TAG_CLOCK 31001

static void exchange_with(int peer, MPI_Comm comm, double *offset, double *rtt)
{
    *rtt = INFINITY;
    for (int e = 0; e < EXCHANGES; e++) {
        double remote;
        double t_send = MPI_Wtime();
        CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_CLOCK, comm));
        CHECK_MPI(MPI_Recv(&remote, 1, MPI_DOUBLE, peer, TAG_CLOCK, comm, MPI_STATUS_IGNORE));
        double t_recv = MPI_Wtime();
        if (t_recv - t_send < *rtt) {
            *rtt = t_recv - t_send;
            *offset = remote - (t_send + t_recv) / 2;
        }
    }
}

static void answer(MPI_Comm comm)
{
    for (int e = 0; e < EXCHANGES; e++) {
        CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_CLOCK, comm, MPI_STATUS_IGNORE));
        double now = MPI_Wtime();
        CHECK_MPI(MPI_Send(&now, 1, MPI_DOUBLE, 0, TAG_CLOCK, comm));
    }
}

void clock_sync_estimate(struct clock_sync *s, MPI_Comm comm)
{
    int rank, ranks;
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    CHECK_MPI(MPI_Comm_size(comm, &ranks));
    /* offset_s then rtt_s, one allocation so one broadcast carries both. */
    double *both = xcalloc(2 * (size_t)ranks, sizeof *both);
    if (rank == 0)
        for (int r = 1; r < ranks; r++)
            exchange_with(r, comm, &both[r], &both[ranks + r]);
    else
        answer(comm);
    CHECK_MPI(MPI_Bcast(both, 2 * ranks, MPI_DOUBLE, 0, comm));
    *s = (struct clock_sync){.ranks = ranks, .offset_s = both, .rtt_s = both + ranks};
}

void clock_sync_free(struct clock_sync *s)
{
    free(s->offset_s);
    *s = (struct clock_sync){0};
}
