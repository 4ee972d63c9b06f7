/* The --validate payload pattern: a pure function of (iteration, sending
 * rank, byte offset), different in every 8-byte word, so a receiver
 * detects a shifted, truncated, stale (previous iteration) or wrong-sender
 * payload, not only a corrupted byte. */
#ifndef COMMSCOPE_PATTERN_H
#define COMMSCOPE_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void pattern_fill(void *buf, size_t bytes, uint64_t iteration, int rank);

/* True on a mismatch, with the first bad byte's offset and values. */
bool pattern_find_mismatch(const void *buf, size_t bytes, uint64_t iteration, int rank,
                           size_t *offset, unsigned *expected, unsigned *got);

#endif
