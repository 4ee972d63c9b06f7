/* Compiles and links where the MPI has the persistent collectives commscope
 * uses (MPI-4.0, section 6.13); build.py runs nothing of it. */
#include <mpi.h>

int main(void)
{
    MPI_Request r[10];
    char a[8] = {0}, b[8];
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Bcast_init(a, 1, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Scatter_init(a, 1, MPI_BYTE, b, 1, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    MPI_Gather_init(a, 1, MPI_BYTE, b, 1, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
    MPI_Reduce_init(a, b, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[4]);
    MPI_Allreduce_init(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[5]);
    MPI_Allgather_init(a, 1, MPI_BYTE, b, 1, MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL, &r[6]);
    MPI_Alltoall_init(a, 1, MPI_BYTE, b, 1, MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL, &r[7]);
    MPI_Reduce_scatter_block_init(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[8]);
    MPI_Scan_init(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[9]);
    return MPI_Startall(10, r);
}
