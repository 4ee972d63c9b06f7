/* The collective algorithms the MPI library itself offers, and forcing one
 * for a case (docs/tune.md). Open MPI's coll/tuned and MPICH each hold, per
 * collective, a control variable that selects its algorithm; commscope reads
 * the choices from the library through MPI_T and never keeps a table. */
#ifndef COMMSCOPE_ALGORITHM_H
#define COMMSCOPE_ALGORITHM_H

#include <mpi.h>
#include <stdbool.h>

struct algorithms {
    /* The library's variable for this collective, as looked for; whether
     * the library has it is n > 0. */
    char setting[96];
    /* The library has the setting but will not change it while a job runs
     * (MPI_T scope constant or read-only: Open MPI 5.0's allgatherv): no choices. */
    bool fixed;
    int n;
    const char **names; /* NULL-terminated; the library's own choice (0) left out */
    int *values;        /* the variable's value for each name */
    /* The integer variables named <setting>_<what>, as read: how a forced
     * algorithm runs (Open MPI's segmentsize, tree_fanout, chain_fanout,
     * max_requests), which a rules file must repeat to run it alike. */
    int companions;
    const char **companion_names; /* the <what> */
    long long *companion_values;
};

/* The algorithms of one collective (a kernel's name). Needs no MPI_Init;
 * read once, then kept. */
const struct algorithms *algorithms_of(const char *collective);

/* A communicator that is a duplicate of comm, made after the library was
 * told to use algorithm `name` (NULL: its own choice) for `collective`:
 * Open MPI's coll/tuned reads the forced algorithm when a communicator is
 * made, MPICH at each call. Collective over comm. */
MPI_Comm algorithm_comm(const char *collective, const char *name, MPI_Comm comm);

#endif
