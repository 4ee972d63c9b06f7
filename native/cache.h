/* --cold-cache: buffers that rotate through a working set larger than the
 * last-level cache, so that every iteration touches memory the previous
 * iterations did not, after IMB's -off_cache (Intel MPI Benchmarks User
 * Guide, "-off_cache cache_size[,cache_line_size]"). IMB keeps one buffer and
 * moves its offset by a cache's worth; commscope keeps whole page-aligned
 * copies of a case's buffers ("sets") and uses set iteration mod sets. */
#ifndef COMMSCOPE_CACHE_H
#define COMMSCOPE_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct kcase;

/* The last-level cache of this host in bytes (sysfs, else sysconf), or
 * CACHE_LLC_DEFAULT when the system does not say. */
#define CACHE_LLC_DEFAULT ((size_t)32 << 20)
size_t cache_llc_bytes(void);

/* How many sets of set_bytes a case of c uses: 1 warm; cold, enough for
 * twice the last-level cache, and at least 2 unless one set alone is already
 * that large (then one set is cold by itself). */
size_t cache_sets(const struct kcase *c, size_t set_bytes);

/* The set of this iteration. */
static inline size_t cache_set(uint64_t iteration, size_t sets)
{
    return (size_t)(iteration % sets);
}

#endif
