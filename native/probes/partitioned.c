/* Compiles and links where the MPI has partitioned point-to-point
 * communication (MPI-4.0, section 4); build.py runs nothing of it. */
#include <mpi.h>

int main(void)
{
    MPI_Request s, r;
    char a[8] = {0};
    int flag;
    MPI_Psend_init(a, 2, 4, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
    MPI_Precv_init(a, 2, 4, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Pready(0, s);
    return MPI_Parrived(r, 0, &flag);
}
