#include "ceiling.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "cache.h"
#include "check.h"
#include "kernel.h"
#include "options.h"
#include "precision.h"

#define BATCH_MIN_S 2e-5    /* a timed batch lasts this long, many timer ticks */
#define BATCHES 7           /* timed batches per rank: their median */
#define BATCH_MAX ((uint64_t)1 << 20)
/* Far past the last-level cache a copy's time grows with its bytes alone, so a
 * larger case is timed on copies of this many bytes and scaled: a 2 GiB case
 * otherwise faulted in 4 GiB more per rank and spent 18 copies of 2 GiB, most
 * of a 55 s case here. Python's host ceiling copies the same 64 MiB (host.py). */
#define COPY_MAX_BYTES ((size_t)64 << 20)

/* Read after every copy, so no copy can be dropped as unused. */
static volatile unsigned char sink;

struct copies {
    unsigned char *sets; /* count x (source, destination) of stride bytes each */
    size_t stride, count, bytes;
    uint64_t per_set; /* copies per set: a window's messages share one, as in bw */
};

static void copy(struct copies *k, uint64_t i)
{
    unsigned char *src = k->sets + 2 * k->stride * cache_set(i / k->per_set, k->count);
    memcpy(src + k->stride, src, k->bytes);
    sink = src[k->stride + k->bytes - 1];
}

static double batch(struct copies *k, uint64_t n, uint64_t *i)
{
    double start = MPI_Wtime();
    for (uint64_t j = 0; j < n; j++)
        copy(k, (*i)++);
    return MPI_Wtime() - start;
}

/* The copies' memory, allocated once for the largest size of the run and kept
 * from case to case: allocating and faulting it in per case cost up to 4 ms a
 * rank warm, 30 ms cold. */
static unsigned char *scratch;
static size_t scratch_bytes;

static unsigned char *scratch_for(const struct kcase *c, size_t bytes)
{
    if (bytes > scratch_bytes) {
        size_t most = 0;
        for (size_t i = 0; i < c->cfg->sizes.n; i++) {
            size_t copied = c->cfg->sizes.v[i];
            size_t stride = buffer_round_pages(copied < COPY_MAX_BYTES ? copied : COPY_MAX_BYTES);
            size_t need = 2 * stride * cache_sets(c, 2 * stride);
            most = need > most ? need : most;
        }
        buffer_free(scratch);
        scratch_bytes = bytes > most ? bytes : most;
        scratch = buffer_alloc(scratch_bytes);
    }
    return scratch;
}

/* This rank's median seconds per copy of c->bytes (timed on COPY_MAX_BYTES
 * and scaled, past it). */
static double measure(const struct kcase *c)
{
    size_t copied = c->bytes < COPY_MAX_BYTES ? c->bytes : COPY_MAX_BYTES;
    struct copies k = {
        .bytes = copied,
        .stride = buffer_round_pages(copied),
        .per_set = c->window > 0 ? (uint64_t)c->window : 1};
    k.count = cache_sets(c, 2 * k.stride);
    k.sets = scratch_for(c, 2 * k.stride * k.count);
    uint64_t i = 0, n = 1;
    batch(&k, k.count, &i); /* every set once: a warm start for warm, a pass for cold */
    while (n < BATCH_MAX && batch(&k, n, &i) < BATCH_MIN_S)
        n *= 2;
    double per[BATCHES];
    for (int b = 0; b < BATCHES; b++)
        per[b] = batch(&k, n, &i) / (double)n;
    return median_in_place(per, BATCHES) * ((double)c->bytes / (double)copied);
}

struct ceiling ceiling_measure(const struct kcase *c)
{
    struct ceiling out = {0, c->ranks < 2 ? c->ranks : 2};
    if (c->bytes == 0)
        return out;
    /* One rank at a time: two copies at once would share the memory bus
     * and understate what one transfer may use. */
    double mine = INFINITY, fastest = 0;
    for (int r = 0; r < out.ranks; r++) {
        CHECK_MPI(MPI_Barrier(c->comm));
        if (c->rank == r)
            mine = measure(c);
    }
    CHECK_MPI(MPI_Reduce(&mine, &fastest, 1, MPI_DOUBLE, MPI_MIN, 0, c->comm));
    out.copy_s = fastest;
    return out;
}
