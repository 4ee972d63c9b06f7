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

void sampling_phases_store(struct sampling *s, int i, double per)
{
    struct phases *p = s->c->phases;
    for (int k = 0; p && k < p->count; k++)
        s->phase_samples[(size_t)k * (size_t)s->cap + (size_t)i] =
            p->acc[k] / per;
}

double sampling_barrier_batch(struct sampling *s, uint64_t n)
{
    struct kcase *c = s->c;
    void (*run_once)(struct kcase *) = s->kernel->run_once; /* one load, not one a call */
    CHECK_MPI(MPI_Barrier(c->comm));
    double start = MPI_Wtime();
    sampling_phases_start(s, start);
    if (s->active) {
        for (uint64_t i = 0; i < n; i++) {
            run_once(c);
            c->iteration++;
        }
    }
    return MPI_Wtime() - start;
}
