/* The records rank 0 writes around each case (docs/native.md, "Records");
 * the context record is context.c's, error records check.c's. */
#ifndef COMMSCOPE_RECORDS_H
#define COMMSCOPE_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

struct case_record {
    const char *kernel;
    const char *send_mode; /* NULL: the kernel has no modes */
    size_t bytes;
    int ranks;  /* ranks taking part */
    int window; /* 0: none */
    long long batch;
    uint64_t warmup_iterations;
    bool validated;
    enum timed_by timed_by;
    int samples;                  /* per rank */
    const double *samples_s;      /* [samples] */
    const double *rank_samples_s; /* [ranks][samples] */
};

void record_case_start(const char *kernel, const char *send_mode,
                       size_t bytes);
void record_skip(const char *kernel, const char *send_mode, size_t bytes,
                 const char *reason);
void record_case(const struct case_record *r);
void record_end(long long cases);

#endif
