/* How the timing loop starts a sample (docs/native.md, "One timing loop"):
 * one module per method behind this interface, as ReproMPI keeps its
 * process synchronisation methods. The loop (timing.c) owns the probe, how
 * many samples to take and the record; a method owns how each sample
 * starts, what that needs, and the case record's fields about it: a
 * barrier (sync_barrier.c), or agreed start times on offset-corrected
 * clocks (sync_window.c). The loop and the methods share struct sampling
 * and its batch and phase marks (sampling.h); a method never calls the
 * loop. */
#ifndef COMMSCOPE_SYNC_H
#define COMMSCOPE_SYNC_H

#include <mpi.h>

#include "sampling.h"

struct jsonl;

struct sync_method {
    const char *name; /* the --sync value */
    /* Before the kernel's setup, collective over the case's communicator:
     * sets s->comm (and s->method, its own state), and does what must
     * happen before any kernel message is in flight. */
    void (*begin)(struct sampling *s, MPI_Comm case_comm);
    /* After the probe (t_iter seconds per iteration, the same on every
     * rank), collective over the case's communicator: sets s->batch and
     * returns the seconds one sample lasts. */
    double (*plan)(struct sampling *s, MPI_Comm case_comm, double t_iter);
    /* Samples from .. to-1, on the ranks of s->comm. */
    void (*take)(struct sampling *s, int from, int to);
    /* After sampling, on every rank of the case. */
    void (*finish)(struct sampling *s, MPI_Comm case_comm);
    /* Its own fields of the case record (docs/native.md, "Records"): on
     * rank 0, j is the open record, after the fields every method shares.
     * NULL: nothing to add. */
    void (*report)(const struct sampling *s, struct jsonl *j);
    /* Frees what begin and take made. */
    void (*end)(struct sampling *s);
};

extern const struct sync_method sync_barrier, sync_window;
/* Every method, in --help order, NULL-terminated. */
extern const struct sync_method *const sync_methods[];
const struct sync_method *sync_find(const char *name);

#endif
