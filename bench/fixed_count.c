/* The fixed-count baseline for bench/time_to_answer.py: what a CI-less tool
 * does, one launch sweeping every size with a fixed number of iterations.
 * Counts are the OSU Micro-Benchmarks' defaults (OMB 5.x: latency 10000
 * iterations + 100 warm-up up to 8 KiB, 1000 + 10 above; bw 100 + 10 up to
 * 8 KiB, 20 + 2 above, window 64), which print one mean per size. The bw
 * window moves the same data as osu_bw and commscope's bw kernel (its default
 * recv_buffers=one): the sender sends one buffer W times and the receiver
 * posts its W receives into one buffer.
 * usage: fixed_count latency|bw MAX_BYTES
 * Prints one line per size: bytes and mean seconds per iteration. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE 8192
#define WINDOW 64

static double latency(char *buf, int bytes, int rank)
{
    int iters = bytes > LARGE ? 1000 : 10000, skip = bytes > LARGE ? 10 : 100;
    double t0 = 0;
    for (int i = 0; i < iters + skip; i++) {
        if (i == skip) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / iters;
}

static double bandwidth(char *buf, int bytes, int rank)
{
    int iters = bytes > LARGE ? 20 : 100, skip = bytes > LARGE ? 2 : 10;
    MPI_Request req[WINDOW];
    double t0 = 0;
    for (int i = 0; i < iters + skip; i++) {
        if (i == skip) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        for (int w = 0; w < WINDOW; w++) {
            if (rank == 0)
                MPI_Isend(buf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req[w]);
            else
                MPI_Irecv(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req[w]);
        }
        MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        if (rank == 0)
            MPI_Recv(buf, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(buf, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    }
    return (MPI_Wtime() - t0) / iters;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: fixed_count latency|bw MAX_BYTES\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int bw = strcmp(argv[1], "bw") == 0, max = atoi(argv[2]);
    char *buf = calloc((size_t)max + 1, 1);
    for (int bytes = bw; bytes <= max; bytes = bytes ? 2 * bytes : 1) {
        double t = bw ? bandwidth(buf, bytes, rank) : latency(buf, bytes, rank);
        if (rank == 0)
            printf("%d %.17g\n", bytes, t);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
