/* Settings as the MPI library reports them (MPI_T control variables). */
#ifndef COMMSCOPE_MPIT_H
#define COMMSCOPE_MPIT_H

#include "records.h"

enum mpit_set {
    MPIT_TRANSPORT, /* what chooses transports, and how ranks wait when idle */
    MPIT_PROTOCOLS, /* the sizes at which messages change protocol */
};

/* The control variables of one set that this library has, read now. */
struct cvar_list mpit_read(enum mpit_set set);
void mpit_free(struct cvar_list *l);

#endif
