/* Transport settings as the MPI library reports them (MPI_T control variables). */
#ifndef COMMSCOPE_MPIT_H
#define COMMSCOPE_MPIT_H

#include <stdbool.h>

#include "records.h"

struct cvar_list {
    bool available; /* MPI_T could be used; else the list is empty */
    struct cvar *v;
    int n;
};

/* The transport-related control variables this library has, read now. */
struct cvar_list mpit_transport(void);
void mpit_free(struct cvar_list *l);

#endif
