/* The baseline for bench/overhead.py: the plainest MPI loops, no framework.
 * usage: bare pingpong|bw BYTES ITERATIONS [WINDOW]
 * Prints rank 0's mean seconds per iteration (a round trip, or one window plus ack).
 * bw's receives share one buffer, as commscope's bw (recv_buffers=one) and the
 * reference suites' do. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 4) {
        if (rank == 0) fprintf(stderr, "usage: bare pingpong|bw BYTES ITERATIONS [WINDOW]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int bw = strcmp(argv[1], "bw") == 0;
    int bytes = atoi(argv[2]), iters = atoi(argv[3]);
    int window = argc > 4 ? atoi(argv[4]) : 64;
    char *sbuf = malloc(bytes + 1), *rbuf = malloc(bytes + 1);
    memset(sbuf, 1, bytes + 1);
    memset(rbuf, 0, bytes + 1);
    MPI_Request req[1024];
    double t0 = 0;
    for (int i = -iters / 10; i < iters; i++) { /* the first tenth warms up */
        if (i == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (!bw && rank == 0) {
            MPI_Send(sbuf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(rbuf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (!bw && rank == 1) {
            MPI_Recv(rbuf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        } else if (rank == 0) {
            for (int w = 0; w < window; w++)
                MPI_Isend(sbuf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
            MPI_Recv(rbuf, 1, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int w = 0; w < window; w++)
                MPI_Irecv(rbuf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
            MPI_Send(sbuf, 1, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
    }
    double t = (MPI_Wtime() - t0) / iters;
    if (rank == 0) printf("%.17g\n", t);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
