#include "timer.h"

#include <math.h>

#include "check.h"
#include "precision.h"

#define CALIBRATION_READS 100000
#define CALIBRATION_BARRIERS 1000

struct timer_info timer_calibrate(MPI_Comm comm)
{
    double took[CALIBRATION_BARRIERS];
    double local[4], agreed[4];
    double start = MPI_Wtime();
    for (int i = 0; i < CALIBRATION_READS; i++)
        (void)MPI_Wtime();
    local[0] = (MPI_Wtime() - start) / CALIBRATION_READS;

    /* Smallest non-zero step between consecutive reads; a coarse clock
     * may need more reads than the overhead loop to step at all. */
    double previous = MPI_Wtime(), resolution = INFINITY;
    for (long i = 0; i < CALIBRATION_READS || isinf(resolution); i++) {
        double now = MPI_Wtime();
        if (now > previous && now - previous < resolution)
            resolution = now - previous;
        previous = now;
    }
    local[1] = resolution;

    CHECK_MPI(MPI_Barrier(comm));
    start = MPI_Wtime();
    /* Each barrier timed on its own, in one loop (a second loop would add its
     * thousand barriers' packets to every launch between hosts): their mean is
     * what synchronising costs a run, stalls and all (a descheduled rank makes
     * one barrier last a time slice); what one barrier takes is their median,
     * which a few stalls leave alone. */
    for (int i = 0; i < CALIBRATION_BARRIERS; i++) {
        double begun = MPI_Wtime();
        CHECK_MPI(MPI_Barrier(comm));
        took[i] = MPI_Wtime() - begun;
    }
    local[2] = (MPI_Wtime() - start) / CALIBRATION_BARRIERS;
    local[3] = median_in_place(took, CALIBRATION_BARRIERS);
    /* Batch sizes follow from these, and all ranks must run the same
     * number of iterations: every rank takes the worst rank's values. */
    CHECK_MPI(MPI_Allreduce(local, agreed, 4, MPI_DOUBLE, MPI_MAX, comm));
    return (struct timer_info){
        .wtick_s = MPI_Wtick(),
        .overhead_s = agreed[0],
        .resolution_s = agreed[1],
        .barrier_s = agreed[2],
        .barrier_median_s = agreed[3]};
}
