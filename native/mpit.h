/* Transport settings as the MPI library reports them (MPI_T control variables). */
#ifndef COMMSCOPE_MPIT_H
#define COMMSCOPE_MPIT_H

#include <mpi.h>
#include <stdbool.h>

struct jsonl;

/* Adds "library_transport": {cvar: value, ...} to an open record (or null). */
void mpit_write_transport(struct jsonl *j);

#endif
