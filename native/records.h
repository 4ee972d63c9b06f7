/* The records rank 0 writes around each case (docs/native.md, "Records");
 * the context record is context.c's, error records check.c's. */
#ifndef COMMSCOPE_RECORDS_H
#define COMMSCOPE_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jsonl.h"
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
/* Writes the case record's fields and leaves it open for more (kernel
 * reports, phases); record_case_close ends and writes it. */
void record_case_open(struct jsonl *j, const struct case_record *r);
void record_case_close(struct jsonl *j);
/* A list of per-rank lists: values[rank * n + i]. */
void record_rank_lists(struct jsonl *j, const char *key, const double *values,
                       int ranks, int n);
void record_end(long long cases);

#endif
