/* One case's samples, shared by the timing loop (timing.c) and its sync
 * methods (sync.h), and the two things both do with a kernel: run a batch
 * of iterations after a barrier, and mark the phases of a sample. A leaf:
 * it calls neither the loop nor a method. The loop calls the methods, both
 * call this, and nothing calls back up. */
#ifndef COMMSCOPE_SAMPLING_H
#define COMMSCOPE_SAMPLING_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

struct kcase;
struct kernel;
struct sync_method;
struct timer_info;

/* Per-phase time of the current sample, for kernels with phases. */
struct phases {
    int count;
    double mark; /* clock at the last phase end, or the sample's start */
    double *acc; /* [count] seconds in each phase during this sample */
};

/* One case's sampling: what the loop and its sync method both read. */
struct sampling {
    const struct sync_method *sync;
    void *method; /* the sync method's own state, from its begin to its end */
    const struct kernel *kernel;
    struct kcase *c;
    const struct timer_info *timer;
    bool active;   /* this rank takes part in the case */
    MPI_Comm comm; /* the ranks that take samples; MPI_COMM_NULL: not this */
    long long batch;       /* iterations per sample */
    int n;                 /* samples taken */
    int cap;               /* room in samples, and per phase in phase_samples */
    double *samples;       /* [cap] this rank's seconds per iteration */
    double *phase_samples; /* [phases][cap] */
    int sample_phase;      /* the kernel's sample_phase as an index; -1: none */
    /* On rank 0, [n]: some rank started sample i late, so the precision
     * rule leaves it out. Set by a method that can start a sample late (the
     * window method, which also frees it); NULL: none was. */
    unsigned char *late;
};

/* Called by a kernel's run_once at the end of phase `phase` (an index into
 * its phases list): adds the time since the previous mark (or the
 * sample's start) to that phase. */
void sampling_phase_end(struct kcase *c, int phase);
/* The phase marks of a kernel's phases (NULL: none, and NULL returned). */
struct phases *sampling_phases_new(const char *const *names);
void sampling_phases_free(struct phases *p);
/* Starts the phase marks of a sample at start; stores the sample's phase
 * times, divided by per, at index i. */
void sampling_phases_start(struct sampling *s, double start);
/* Called by a kernel's run_once between phases that must each start
 * together on every rank (a nonblocking collective's pure, compute and
 * overlapped): a barrier of the case's ranks, then the phase marks restart,
 * so neither the barrier nor what ran since the last phase end is in any
 * phase. */
void sampling_phase_sync(struct kcase *c);
/* Sample i: `elapsed` seconds of `per` iterations, and their phase times
 * (each divided by per). The sample is the kernel's sample_phase where it
 * names one, else elapsed / per. */
void sampling_store(struct sampling *s, int i, double elapsed, double per);
/* After a timed run_once, untimed: the kernel's verify (kernel.h), then the
 * iteration count moves on. */
void sampling_next_iteration(struct sampling *s);

/* n iterations after a barrier of the case's communicator, on this rank's
 * clock (idle ranks only take part in the barrier); the phase marks start
 * at the batch's start. The clock is read before the last iteration's
 * verify. The loop's probe and --sync barrier's samples. */
double sampling_barrier_batch(struct sampling *s, uint64_t n);

#endif
