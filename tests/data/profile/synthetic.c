/* A program of exactly known MPI calls, for the profile tests (test_profile.py):
 *   synthetic A B C D E [X [O [FILE]]]
 * A MPI_Allreduce of 8 bytes on every rank's world; B MPI_Bcast of 1024 bytes;
 * C MPI_Send/MPI_Recv of 4096 bytes from each even rank to the next odd one;
 * D MPI_Irecv + MPI_Isend of 65536 bytes with the ring's neighbours, then
 * MPI_Waitall; E MPI_Allreduce of 64 bytes on each half of the ranks (split).
 * An MPI_Barrier before each part takes up the ranks' skew, so that a part's
 * calls are timed from a common start. X: exit with status X before
 * MPI_Finalize, as a program that fails (0: not). O: microseconds of work
 * between posting part D's exchange and waiting for it. FILE: each rank adds to it
 * the work it did, as its clock read it: "work_s RANK SECONDS". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double worked; /* seconds */

static void work(double us)
{
    double start = MPI_Wtime(), now;
    while (((now = MPI_Wtime()) - start) * 1e6 < us)
        ;
    worked += now - start;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, n[7] = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 7 && i + 1 < argc; i++)
        n[i] = atoi(argv[i + 1]);
    char *buf = calloc(2 * 65536, 1);
    double x[8] = {0}, y[8];
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n[0]; i++)
        MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n[1]; i++)
        MPI_Bcast(buf, 1024, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    int partner = rank ^ 1;
    for (int i = 0; i < n[2] && partner < size; i++) {
        if (rank % 2 == 0)
            MPI_Send(buf, 4096, MPI_BYTE, partner, 0, MPI_COMM_WORLD);
        else
            MPI_Recv(buf, 4096, MPI_BYTE, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    for (int i = 0; i < n[3]; i++) {
        MPI_Request r[2];
        MPI_Irecv(buf, 65536, MPI_BYTE, left, 1, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(buf + 65536, 65536, MPI_BYTE, right, 1, MPI_COMM_WORLD, &r[1]);
        work(n[6]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, rank, &half);
    for (int i = 0; i < n[4]; i++)
        MPI_Allreduce(x, y, 8, MPI_DOUBLE, MPI_SUM, half);
    MPI_Comm_free(&half);
    free(buf);
    FILE *f = argc > 8 ? fopen(argv[8], "a") : NULL;
    if (f) {
        fprintf(f, "work_s %d %.9f\n", rank, worked);
        fclose(f);
    }
    if (n[5])
        exit(n[5]);
    MPI_Finalize();
    return 0;
}
