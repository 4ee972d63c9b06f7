/* Clock offsets between ranks, for --sync window (docs/native.md, "One
 * timing loop"). Open MPI's MPI_Wtime counts from each process's own start
 * (ranks differ by milliseconds), and clocks of different hosts differ
 * anyway, so agreed start times need each rank's offset to rank 0. */
#ifndef COMMSCOPE_CLOCKSYNC_H
#define COMMSCOPE_CLOCKSYNC_H

#include <mpi.h>

struct clock_sync {
    int ranks;        /* the ranks of the communicator */
    double *offset_s; /* [ranks] rank r's MPI_Wtime minus rank 0's */
    double *rtt_s;    /* [ranks] round trip of the exchange kept; the
                       * offset's error is at most half of it */
};

/* Collective over comm: rank 0 exchanges timestamps with every other rank
 * in turn, then broadcasts the results to all. */
void clock_sync_estimate(struct clock_sync *s, MPI_Comm comm);
void clock_sync_free(struct clock_sync *s);

#endif
