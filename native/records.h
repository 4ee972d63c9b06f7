/* Every record of the JSON Lines stream (docs/native.md, "Records"), written
 * here and only here: the context, case_start, case, skip, error and end
 * records, from facts the other parts gather. What only a sync method or a
 * kernel knows, its report hook adds to the open case record: the sync
 * method's fields (sync.h) where the record calls it, the kernel's last;
 * each is documented with its method or kernel. */
#ifndef COMMSCOPE_RECORDS_H
#define COMMSCOPE_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jsonl.h"
#include "kernel.h"

/* The records' schema: ingest refuses a stream of any other. */
#define RECORDS_SCHEMA 1

/* One MPI_T control variable as the library holds it (mpit.c). */
struct cvar {
    const char *name;
    enum { CVAR_TEXT, CVAR_INT, CVAR_BOOL } type;
    const char *text;
    long long value; /* CVAR_INT, CVAR_BOOL */
};

struct cvar_list {
    bool available; /* MPI_T could be used; else the list is empty */
    struct cvar *v;
    int n;
};

struct context_record {
    const char *commscope_version;
    const char *mpi_library, *mpi_library_version, *mpi_standard;
    bool large_count;
    int ranks;
    /* [ranks] each, rank order: hosts and bindings are host_chars apart. */
    const char *hosts, *bindings;
    size_t host_chars;
    const int *cpus;  /* -1: unknown */
    const int *nodes; /* lowest rank of its MPI_COMM_TYPE_SHARED */
    /* MPI_T control variables: what chooses transports, and the sizes at which the
     * library changes protocol (eager limits, single-copy thresholds) */
    struct cvar_list transport, protocols;
    double wtick_s, resolution_s, overhead_s, barrier_s, barrier_median_s;
    const char *compiler;
    int argc;
    char **argv;
    const char *utc;
    const char *kernel; /* NULL with --info */
};

struct sampling;

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
    const char *sync;
    const char *sample; /* what one sample is: sample_kind_names (kernel.h) */
    int slowest_rank;   /* whose samples samples_s are (a collective's); -1: none */
    double case_s; /* rank 0's seconds from the kernel's set-up to the record */
    /* --precision only (adaptive) */
    bool adaptive;
    double precision_target, max_time_s, sampling_s;
    bool capped;
    /* The sync method's own fields (its report hook, sync.h), written after
     * the fields above; NULL: it has none. */
    void (*sync_report)(const struct sampling *s, struct jsonl *j);
    const struct sampling *sampled; /* the loop's, for sync_report */
    /* the copy ceiling (ceiling.h) and the cache state of the buffers */
    double copy_s; /* 0: none (size 0) */
    int copy_ranks;
    bool cold_cache;
    size_t llc_bytes, working_set_bytes; /* rank 0's */
    /* kernels with phases: [phase][ranks][samples] */
    int phase_count;
    const char *const *phase_names;
    const double *const *phase_samples_s;
};

/* A failure on any rank (check.c). */
struct error_record {
    bool in_case; /* else kernel, send_mode and bytes are null */
    const char *kernel, *send_mode;
    size_t bytes;
    int rank;
    const char *message;
    bool mismatch; /* a --validate failure: the fields below are set */
    uint64_t iteration;
    int source_rank;
    size_t offset;
    unsigned expected, got;
};

void record_context(const struct context_record *r);
/* With --each: the parameter it varies and its value for the records of
 * the cases that follow (case_start, skip, case), as their `variant`. */
void record_variant(const char *key, const char *value);
void record_case_start(const char *kernel, const char *send_mode, size_t bytes);
void record_skip(const char *kernel, const char *send_mode, size_t bytes, const char *reason);
/* Writes the case record's fields and leaves it open for the kernel's
 * report; record_case_close ends and writes it. */
void record_case_open(struct jsonl *j, const struct case_record *r);
void record_case_close(struct jsonl *j);
void record_error(const struct error_record *r);
void record_end(long long cases);

#endif
