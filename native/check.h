/* Failure reporting. Every MPI call goes through CHECK_MPI: a failure becomes
 * an `error` record (docs/native.md, "Records") naming file, line and
 * MPI_Error_string, then MPI_Abort ends the whole job, so no rank waits
 * forever on a peer that has given up. */
#ifndef COMMSCOPE_CHECK_H
#define COMMSCOPE_CHECK_H

#include <mpi.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#define CHECK_MPI(call)                                                  \
    do {                                                                 \
        int check_rc_ = (call);                                          \
        if (check_rc_ != MPI_SUCCESS)                                    \
            check_mpi_failed(check_rc_, #call, __FILE__, __LINE__);      \
    } while (0)

/* The case in flight, so error records can name it; set only by the timing
 * loop. send_mode is NULL for kernels without modes. */
void check_case_begin(const char *kernel, const char *send_mode, size_t bytes);
void check_case_end(void);

/* While `refused` is set, a call the library refuses as unsupported
 * (MPI_ERR_UNSUPPORTED_OPERATION) returns there instead of ending the job:
 * an algorithm forced where the library cannot run it, e.g. Open MPI's
 * two_proc on more ranks, refused by every rank at the same call. NULL:
 * every failure ends the job. check_refusal: the library's words. */
void check_refusable(jmp_buf *refused);
const char *check_refusal(void);

_Noreturn void check_mpi_failed(int rc, const char *call, const char *file, int line);
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* calloc that dies (with an error record) instead of returning NULL. */
void *xcalloc(size_t count, size_t size);

/* A received payload differs from the --validate pattern. */
struct mismatch {
    uint64_t iteration;
    int source_rank;
    size_t offset;
    unsigned expected, got;
};
_Noreturn void die_mismatch(const struct mismatch *m);

#endif
