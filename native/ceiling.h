/* The copy ceiling of a case (docs/native.md, "Copy ceilings"): after its
 * samples, ranks 0 and 1 in turn time a single-core memcpy of the case's
 * size between two buffers of their own, on their own core, warm or rotating
 * through the working set as the case's buffers do (--cold-cache); past
 * 64 MiB, a copy of 64 MiB scaled to the case's size. A transfer
 * through shared memory is at least one such copy, so bytes / copy_s bounds
 * what a one-way kernel can move between two ranks of one host. Part of the
 * timing loop: timing.c calls it, no kernel does. */
#ifndef COMMSCOPE_CEILING_H
#define COMMSCOPE_CEILING_H

struct kcase;

struct ceiling {
    double copy_s; /* the faster rank's median seconds per copy; 0: size 0 */
    int ranks;     /* ranks that measured it */
};

/* Collective over c->comm; the result on rank 0. */
struct ceiling ceiling_measure(const struct kcase *c);

#endif
