/* The context record: the first record of a run (docs/native.md). */
#ifndef COMMSCOPE_CONTEXT_H
#define COMMSCOPE_CONTEXT_H

#include <mpi.h>

struct config;
struct timer_info;

/* Collective over comm: the lowest rank of this rank's MPI_COMM_TYPE_SHARED
 * group, the node as the library counts it (ranks with equal values share
 * memory). */
int shm_node(MPI_Comm comm, int rank);

/* Collective: gathers each rank's host and CPU; rank 0 writes the record. */
void context_write(const struct config *cfg, const struct timer_info *timer, int argc, char **argv,
                   MPI_Comm comm);

#endif
