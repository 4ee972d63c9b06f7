/* How the timing loop starts a sample (docs/native.md, "One timing loop"):
 * one module per method behind this interface, as ReproMPI keeps its
 * process synchronisation methods. The loop (timing.c) owns the probe, how
 * many samples to take and the record; a method owns how each sample
 * starts, and what that needs: a barrier (sync_barrier.c), or agreed start
 * times on offset-corrected clocks (sync_window.c). */
#ifndef COMMSCOPE_SYNC_H
#define COMMSCOPE_SYNC_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "clocksync.h"

struct kcase;
struct kernel;
struct timer_info;

/* One case's sampling, shared by the loop and its sync method. */
struct sampling {
    const struct sync_method *sync;
    const struct kernel *kernel;
    struct kcase *c;
    const struct timer_info *timer;
    bool active;   /* this rank takes part in the case */
    MPI_Comm comm; /* the ranks that take samples; MPI_COMM_NULL: not this */
    long long batch;      /* iterations per sample */
    int n;                /* samples taken */
    int cap;              /* room in samples, and per phase in phase_samples */
    double *samples;      /* [cap] this rank's seconds per iteration */
    double *phase_samples; /* [phases][cap] */
    /* Set by the window method only. */
    double window_s;
    unsigned char *late; /* [n] on rank 0: some rank started sample i late */
    struct clock_sync clocks;
};

struct sync_method {
    const char *name; /* the --sync value */
    /* Before the kernel's setup, collective over the case's communicator:
     * sets s->comm, and does what must happen before any kernel message is
     * in flight. */
    void (*begin)(struct sampling *s, MPI_Comm case_comm);
    /* After the probe (t_iter seconds per iteration, the same on every
     * rank), collective over the case's communicator: sets s->batch and
     * returns the seconds one sample lasts. */
    double (*plan)(struct sampling *s, MPI_Comm case_comm, double t_iter);
    /* Samples from .. to-1, on the ranks of s->comm. */
    void (*take)(struct sampling *s, int from, int to);
    /* After sampling, on every rank of the case. */
    void (*finish)(struct sampling *s, MPI_Comm case_comm);
    void (*end)(struct sampling *s);
};

extern const struct sync_method sync_barrier, sync_window;
/* Every method, in --help order, NULL-terminated. */
extern const struct sync_method *const sync_methods[];
const struct sync_method *sync_find(const char *name);

/* For the methods and the probe (timing.c): n iterations after a barrier
 * of the case's communicator, on this rank's clock (idle ranks only take
 * part in the barrier); the phase marks start at the sample's start. */
double sync_barrier_batch(struct sampling *s, uint64_t n);
/* Starts the phase marks of a sample at start; stores the sample's phase
 * times, divided by per, at index i. */
void sampling_phases_start(struct sampling *s, double start);
void sampling_phases_store(struct sampling *s, int i, double per);

#endif
