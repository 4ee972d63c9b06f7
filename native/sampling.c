#include "sampling.h"

#include <stdlib.h>

#include "check.h"
#include "kernel.h"

void sampling_phase_end(struct kcase *c, int phase)
{
    struct phases *p = c->phases;
    double now = MPI_Wtime();
    p->acc[phase] += now - p->mark;
    p->mark = now;
}

struct phases *sampling_phases_new(const char *const *names)
{
    if (!names)
        return NULL;
    struct phases *p = xcalloc(1, sizeof *p);
    while (names[p->count])
        p->count++;
    p->acc = xcalloc((size_t)p->count, sizeof *p->acc);
    return p;
}

void sampling_phases_free(struct phases *p)
{
    if (!p)
        return;
    free(p->acc);
    free(p);
}

void sampling_phases_start(struct sampling *s, double start)
{
    struct phases *p = s->c->phases;
    if (!p)
        return;
    p->mark = start;
    for (int i = 0; i < p->count; i++)
        p->acc[i] = 0;
}

void sampling_phase_sync(struct kcase *c)
{
    CHECK_MPI(MPI_Barrier(c->comm));
    c->phases->mark = MPI_Wtime();
}

void sampling_store(struct sampling *s, int i, double elapsed, double per)
{
    struct phases *p = s->c->phases;
    for (int k = 0; p && k < p->count; k++)
        s->phase_samples[(size_t)k * (size_t)s->cap + (size_t)i] = p->acc[k] / per;
    s->samples[i] = s->sample_phase >= 0 ? p->acc[s->sample_phase] / per : elapsed / per;
}

void sampling_next_iteration(struct sampling *s)
{
    if (s->kernel->verify)
        s->kernel->verify(s->c);
    s->c->iteration++;
}

double sampling_barrier_batch(struct sampling *s, uint64_t n)
{
    struct kcase *c = s->c;
    void (*run_once)(struct kcase *) = s->kernel->run_once; /* one load, not one a call */
    CHECK_MPI(MPI_Barrier(c->comm));
    double start = MPI_Wtime();
    sampling_phases_start(s, start);
    if (!s->active || n == 0)
        return MPI_Wtime() - start;
    for (uint64_t i = 1; i < n; i++) {
        run_once(c);
        sampling_next_iteration(s);
    }
    run_once(c);
    double elapsed = MPI_Wtime() - start;
    sampling_next_iteration(s);
    return elapsed;
}
