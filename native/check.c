#include "check.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "records.h"

static struct {
    bool active;
    const char *kernel, *send_mode;
    size_t bytes;
} current_case;

void check_case_begin(const char *kernel, const char *send_mode, size_t bytes)
{
    current_case.active = true;
    current_case.kernel = kernel;
    current_case.send_mode = send_mode;
    current_case.bytes = bytes;
}

void check_case_end(void)
{
    current_case.active = false;
}

static int world_rank(void)
{
    int initialized = 0, finalized = 0, rank = -1;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* Any rank may write an error record (docs/native.md): the failing rank is
 * often not rank 0, and MPI_Abort leaves no chance to forward it. */
static _Noreturn void fail(const char *message, const struct mismatch *m)
{
    int rank = world_rank();
    struct error_record r = {
        .in_case = current_case.active,
        .kernel = current_case.kernel,
        .send_mode = current_case.send_mode,
        .bytes = current_case.bytes,
        .rank = rank,
        .message = message,
        .mismatch = m != NULL};
    if (m) {
        r.iteration = m->iteration;
        r.source_rank = m->source_rank;
        r.offset = m->offset;
        r.expected = m->expected;
        r.got = m->got;
    }
    record_error(&r);
    fprintf(stderr, "commscope-native: rank %d: %s\n", rank, message);
    fflush(stderr);
    /* MPICH's hydra launcher can drop the aborting rank's last output when
     * MPI_Abort tears the job down at once (seen in 2 of 30 runs, none of
     * 60 with this pause): give it time to forward the record. */
    nanosleep(&(struct timespec){.tv_nsec = 100000000}, NULL);
    MPI_Abort(MPI_COMM_WORLD, 1);
    abort(); /* MPI_Abort is not declared noreturn */
}

static jmp_buf *refusable;
static char refusal[MPI_MAX_ERROR_STRING + 64];

void check_refusable(jmp_buf *refused)
{
    refusable = refused;
}

const char *check_refusal(void)
{
    return refusal;
}

void check_mpi_failed(int rc, const char *call, const char *file, int line)
{
    char text[MPI_MAX_ERROR_STRING] = "unknown MPI error";
    int len = 0, class = MPI_ERR_UNKNOWN;
    MPI_Error_string(rc, text, &len);
    MPI_Error_class(rc, &class);
    if (refusable && class == MPI_ERR_UNSUPPORTED_OPERATION) {
        jmp_buf *back = refusable;
        refusable = NULL;
        snprintf(refusal, sizeof refusal, "the MPI library refused it: %s", text);
        longjmp(*back, 1);
    }
    char message[MPI_MAX_ERROR_STRING + 512];
    snprintf(message, sizeof message, "%s:%d: %s failed: %s", file, line, call, text);
    fail(message, NULL);
}

void die(const char *fmt, ...)
{
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    fail(message, NULL);
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        die("cannot allocate %zu x %zu bytes", count, size);
    return p;
}

void die_mismatch(const struct mismatch *m)
{
    char message[256];
    snprintf(message, sizeof message,
             "validation failed: iteration %llu, payload from rank %d, "
             "byte %zu: expected 0x%02x, got 0x%02x",
             (unsigned long long)m->iteration, m->source_rank, m->offset, m->expected, m->got);
    fail(message, m);
}
