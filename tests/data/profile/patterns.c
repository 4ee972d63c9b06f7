/* The communication patterns of real applications, each K times, for the profile tests
 * (test_profile_patterns.py):
 *   patterns calls K   each pattern below, K times a rank, on a ring of the ranks
 *   patterns exchange K BYTES   the exchange alone, of BYTES (bench/profile.py)
 *   patterns abort K   K MPI_Allreduce of 8 bytes, then the last rank calls MPI_Abort
 *                      with code 7 while the others wait for it in MPI_Recv
 *   patterns exit K    K MPI_Allreduce of 8 bytes, MPI_Finalize, then exit status 5
 * The patterns, each at a size of its own so that its rows stand apart:
 *   exchange   MPI_Irecv from the left, blocking MPI_Send to the right, MPI_Wait: 8 KiB
 *   waitall    two MPI_Irecv, two MPI_Isend (both neighbours), MPI_Waitall: 1 KiB
 *   waitany    the same, completed by MPI_Waitany one at a time: 2 KiB
 *   testsome   MPI_Irecv + MPI_Isend polled by MPI_Testsome, no work: 64 KiB
 *   persistent MPI_Recv_init + MPI_Send_init, MPI_Startall + MPI_Waitall: 512 B
 *   vector     MPI_Sendrecv of one vector type (16 blocks of 4 doubles, stride 8): 512 B
 *   cart       MPI_Sendrecv_replace of 256 doubles (2 KiB) along a periodic 1-D
 *              Cartesian communicator made from MPI_Comm_split with ranks reversed,
 *              its neighbours from MPI_Cart_shift */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define BIG 65536

static int rank, size, left, right;
static char *sbuf, *rbuf;

static void exchange(int k, int bytes)
{
    for (int i = 0; i < k; i++) {
        MPI_Request r;
        MPI_Irecv(rbuf, bytes, MPI_BYTE, left, 1, MPI_COMM_WORLD, &r);
        MPI_Send(sbuf, bytes, MPI_BYTE, right, 1, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
}

static void both_ways(int bytes, MPI_Request r[4])
{
    MPI_Irecv(rbuf, bytes, MPI_BYTE, left, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(rbuf + bytes, bytes, MPI_BYTE, right, 3, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(sbuf, bytes, MPI_BYTE, right, 2, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(sbuf + bytes, bytes, MPI_BYTE, left, 3, MPI_COMM_WORLD, &r[3]);
}

static void waits(int k)
{
    MPI_Request r[4];
    for (int i = 0; i < k; i++) {
        both_ways(1024, r);
        MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    }
    for (int i = 0; i < k; i++) {
        both_ways(2048, r);
        for (int left_ = 4, which; left_ > 0; left_--)
            MPI_Waitany(4, r, &which, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < k; i++) {
        int done = 0, out, at[2];
        MPI_Irecv(rbuf, BIG, MPI_BYTE, left, 4, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(sbuf, BIG, MPI_BYTE, right, 4, MPI_COMM_WORLD, &r[1]);
        while (done < 2) {
            MPI_Testsome(2, r, &out, at, MPI_STATUSES_IGNORE);
            done += out == MPI_UNDEFINED ? 0 : out;
        }
    }
}

static void persistent(int k)
{
    MPI_Request r[2];
    MPI_Recv_init(rbuf, 512, MPI_BYTE, left, 5, MPI_COMM_WORLD, &r[0]);
    MPI_Send_init(sbuf, 512, MPI_BYTE, right, 5, MPI_COMM_WORLD, &r[1]);
    for (int i = 0; i < k; i++) {
        MPI_Startall(2, r);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
}

static void vector(int k)
{
    MPI_Datatype v;
    MPI_Type_vector(16, 4, 8, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    for (int i = 0; i < k; i++)
        MPI_Sendrecv(sbuf, 1, v, right, 6, rbuf, 1, v, left, 6, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    MPI_Type_free(&v);
}

static void cart(int k)
{
    MPI_Comm reversed, ring;
    int periodic = 1, from, to;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    MPI_Cart_create(reversed, 1, &size, &periodic, 0, &ring);
    MPI_Cart_shift(ring, 0, 1, &from, &to);
    for (int i = 0; i < k; i++)
        MPI_Sendrecv_replace(sbuf, 256, MPI_DOUBLE, to, 7, from, 7, ring, MPI_STATUS_IGNORE);
    MPI_Comm_free(&ring);
    MPI_Comm_free(&reversed);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "calls";
    int k = argc > 2 ? atoi(argv[2]) : 10;
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    int bytes = argc > 3 ? atoi(argv[3]) : 8192;
    sbuf = calloc(2 * BIG + (size_t)bytes, 1);
    rbuf = calloc(2 * BIG + (size_t)bytes, 1);
    if (!strcmp(mode, "exchange")) {
        exchange(k, bytes);
    } else if (!strcmp(mode, "calls")) {
        exchange(k, 8192);
        waits(k);
        persistent(k);
        vector(k);
        cart(k);
    } else {
        double x = 1, y;
        for (int i = 0; i < k; i++)
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (!strcmp(mode, "abort")) {
            if (rank == size - 1)
                MPI_Abort(MPI_COMM_WORLD, 7);
            MPI_Recv(rbuf, 1, MPI_BYTE, size - 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return !strcmp(mode, "exit") ? 5 : 0;
}
