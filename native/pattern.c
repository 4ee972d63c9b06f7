#include "pattern.h"

#include <string.h>

/* 2^64 / golden ratio, odd: consecutive words of a payload all differ. */
#define GOLDEN_GAMMA 0x9e3779b97f4a7c15ULL

/* SplitMix64's output function (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014): distinct (iteration, rank)
 * pairs get unrelated seeds. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t seed_of(uint64_t iteration, int rank)
{
    return mix64(mix64(iteration) ^ (uint64_t)(unsigned)rank);
}

/* Word w (bytes 8w .. 8w+7) is seed + (w+1) * GOLDEN_GAMMA, a Weyl
 * sequence: one addition per word, so filling and checking run at memory
 * speed even for payloads over 2 GiB, yet two seeds differ in every word
 * and a payload shifted by whole words differs in every word too. */
void pattern_fill(void *buf, size_t bytes, uint64_t iteration, int rank)
{
    unsigned char *p = buf;
    uint64_t v = seed_of(iteration, rank);
    size_t words = bytes / 8;
    for (size_t w = 0; w < words; w++) {
        v += GOLDEN_GAMMA;
        memcpy(p + 8 * w, &v, 8);
    }
    v += GOLDEN_GAMMA;
    memcpy(p + 8 * words, &v, bytes % 8);
}

/* The first differing byte of an 8-byte (or shorter, final) word. */
static bool first_bad_byte(const unsigned char *at, uint64_t v, size_t n, size_t base,
                           size_t *offset, unsigned *expected, unsigned *got)
{
    unsigned char want[8];
    memcpy(want, &v, 8);
    for (size_t b = 0; b < n; b++) {
        if (at[b] != want[b]) {
            *offset = base + b;
            *expected = want[b];
            *got = at[b];
            return true;
        }
    }
    return false;
}

bool pattern_find_mismatch(const void *buf, size_t bytes, uint64_t iteration, int rank,
                           size_t *offset, unsigned *expected, unsigned *got)
{
    const unsigned char *p = buf;
    uint64_t v = seed_of(iteration, rank);
    size_t words = bytes / 8;
    for (size_t w = 0; w < words; w++) {
        uint64_t have;
        v += GOLDEN_GAMMA;
        memcpy(&have, p + 8 * w, 8);
        if (have != v)
            return first_bad_byte(p + 8 * w, v, 8, 8 * w, offset, expected, got);
    }
    v += GOLDEN_GAMMA;
    return first_bad_byte(p + 8 * words, v, bytes % 8, 8 * words, offset, expected, got);
}
