/* The timer: MPI_Wtime, and what it costs (docs/native.md, "One timing
 * loop"). Calibrated once per run; batch sizes follow from it. */
#ifndef COMMSCOPE_TIMER_H
#define COMMSCOPE_TIMER_H

#include <mpi.h>

struct timer_info {
    double wtick_s, resolution_s, overhead_s;
    double barrier_s; /* one MPI_Barrier: the per-sample synchronisation cost */
    double barrier_median_s; /* the median of barriers timed one by one */
};

/* Collective. Every rank gets the same values: the maximum over ranks. */
struct timer_info timer_calibrate(MPI_Comm comm);

#endif
