#include "coll.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "check.h"
#include "options.h"
#include "pattern.h"

const char *const coll_dtype_names[] = {"int", "long", "float", "double", NULL};
const struct element coll_dtype_elements[] = {
    {"int", sizeof(int)},
    {"long", sizeof(long)},
    {"float", sizeof(float)},
    {"double", sizeof(double)}};
/* Up to where the type holds every integer exactly: INT_MAX, float's 24-bit
 * and double's 53-bit significands (long, as double: far beyond any job). */
static const double dtype_exact[] = {INT_MAX, 9007199254740992.0, 16777216.0, 9007199254740992.0};
const char *const coll_op_names[] = {"sum", "max", "min", "user", NULL};

const struct kparam coll_persistent_params[] = {COLL_PERSISTENT_PARAM, COLL_ALGORITHM_PARAM, {0}};
const struct kparam coll_rooted_params[] = {
    COLL_ROOT_PARAM, COLL_PERSISTENT_PARAM, COLL_ALGORITHM_PARAM, {0}};
const struct kparam coll_reducing_params[] = {
    COLL_REDUCING_PARAMS, COLL_PERSISTENT_PARAM, COLL_ALGORITHM_PARAM, {0}};
const struct kparam coll_rooted_reducing_params[] = {
    COLL_ROOT_PARAM, COLL_REDUCING_PARAMS, COLL_PERSISTENT_PARAM, COLL_ALGORITHM_PARAM, {0}};
#define TESTS_PARAM                                                       \
    {.name = "tests", PARAM_COUNT, NULL, "MPI_Test calls spread over the compute "  \
     "of the overlapped phase (default none)", NULL, NULL}
const struct kparam nbc_params[] = {TESTS_PARAM, {0}};
const struct kparam nbc_rooted_params[] = {COLL_ROOT_PARAM, TESTS_PARAM, {0}};
const struct kparam nbc_reducing_params[] = {COLL_REDUCING_PARAMS, TESTS_PARAM, {0}};
const struct kparam nbc_rooted_reducing_params[] = {
    COLL_ROOT_PARAM, COLL_REDUCING_PARAMS, TESTS_PARAM, {0}};

#define KEY_MAX 1023 /* element_key's largest value */
#define RANK_TERM 16 /* inputs add rank mod RANK_TERM */

static MPI_Datatype dtype_mpi(enum coll_dtype d)
{
    switch (d) {
    case COLL_INT:
        return MPI_INT;
    case COLL_LONG:
        return MPI_LONG;
    case COLL_FLOAT:
        return MPI_FLOAT;
    case COLL_DOUBLE:
        return MPI_DOUBLE;
    }
    return MPI_DATATYPE_NULL;
}

/* op=user: a commutative sum registered with MPI_Op_create, one function
 * per dtype, so the library runs user code instead of its builtin loop. Each
 * call is counted: how often the library reduces, and how many elements at a
 * time, tells its algorithm apart (ring: P-1 calls of a P-th; recursive
 * doubling: log2 P of the whole), which coll_user_op_report records. */
static uint64_t user_calls, user_elements;
#define USER_SUM(T, name)                                                \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt) \
    {                                                                    \
        (void)dt;                                                        \
        const T *a = in;                                                 \
        T *b = inout;                                                    \
        for (int i = 0; i < *len; i++)                                   \
            b[i] += a[i];                                                \
        user_calls++;                                                    \
        user_elements += (uint64_t)*len;                                 \
    }
USER_SUM(int, user_sum_int)
USER_SUM(long, user_sum_long)
USER_SUM(float, user_sum_float)
USER_SUM(double, user_sum_double)

static MPI_User_function *const user_sums[] = {
    user_sum_int, user_sum_long, user_sum_float, user_sum_double};

static MPI_Op op_mpi(enum coll_op op)
{
    switch (op) {
    case COLL_SUM:
        return MPI_SUM;
    case COLL_MAX:
        return MPI_MAX;
    case COLL_MIN:
        return MPI_MIN;
    case COLL_USER:
        break;
    }
    return MPI_OP_NULL;
}

/* A bad --param value: every rank finds it, rank 0 reports it and aborts
 * the job; the others wait in a barrier rank 0 never joins, so the run
 * leaves one error record, not one per rank. */
static _Noreturn void bad_param(const struct kcase *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static _Noreturn void bad_param(const struct kcase *c, const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    if (c->rank != 0)
        CHECK_MPI(MPI_Barrier(c->comm));
    die("%s", message);
}

static int parse_root(const struct kcase *c)
{
    if (!kernel_param(c->cfg->kernel, "root"))
        return 0;
    const char *value = kcase_param(c, "root");
    if (strcmp(value, "rotate") == 0)
        return COLL_ROOT_ROTATE;
    char *end;
    long root = strtol(value, &end, 10);
    if (value[0] < '0' || value[0] > '9' || *end || root >= c->ranks)
        bad_param(c, "--param root: '%s' is not a rank from 0 to %d or rotate", value,
                  c->ranks - 1);
    return (int)root;
}

int coll_as(const struct kcase *c)
{
    if (!kernel_param(c->cfg->kernel, "as") || !kcase_param(c, "as"))
        return COLL_ITSELF;
    return kcase_param_choice(c, "as");
}

size_t coll_element_bytes(const struct kcase *c)
{
    return coll_dtype_elements[kcase_param_choice(c, "dtype")].bytes;
}

static struct coll parse(const struct kcase *c)
{
    return (struct coll){
        .root = parse_root(c),
        .as = coll_as(c),
        .persistent = kcase_param_switch(c, "persistent"),
        .op = kernel_param(c->cfg->kernel, "op") ? (enum coll_op)kcase_param_choice(c, "op")
                                                 : COLL_SUM,
        .dtype = kernel_param(c->cfg->kernel, "dtype")
                     ? (enum coll_dtype)kcase_param_choice(c, "dtype")
                     : COLL_INT,
        .type = MPI_BYTE,
        .mpi_op = MPI_OP_NULL};
}

/* Python refuses the case before launch (measure/params.py); a binary run by hand says why. */
static const char *persistent_unsupported(const struct coll *s)
{
    if (s->persistent && !COMMSCOPE_HAVE_PERSISTENT_COLLECTIVES)
        return "this MPI lacks the MPI-4 persistent collectives";
    if (s->persistent && s->as != COLL_ITSELF)
        return "a mock-up (--as) has no persistent form";
    return NULL;
}

const char *coll_persistent_unsupported(const struct kcase *c)
{
    struct coll s = parse(c);
    return persistent_unsupported(&s);
}

const char *coll_bytes_unsupported(const struct kcase *c)
{
    struct coll s = parse(c);
    const char *persistent = persistent_unsupported(&s);
    if (persistent)
        return persistent;
    if (c->bytes > INT_MAX)
        return "blocks over INT_MAX bytes: the collective kernels make no "
               "large-count calls";
    return NULL;
}

/* Sum over ranks 0 .. n-1 of (rank mod RANK_TERM). */
static long long rank_terms(long long n)
{
    long long q = n % RANK_TERM;
    return n / RANK_TERM * (RANK_TERM * (RANK_TERM - 1) / 2) + q * (q - 1) / 2;
}

const char *coll_reduction_unsupported(const struct kcase *c)
{
    static char reason[160];
    struct coll s = parse(c);
    const char *persistent = persistent_unsupported(&s);
    if (persistent)
        return persistent;
    size_t size = coll_dtype_elements[s.dtype].bytes;
    if (c->bytes % size) {
        snprintf(reason, sizeof reason,
                 "%zu bytes is not a whole number of %s (%zu-byte) elements", c->bytes,
                 coll_dtype_names[s.dtype], size);
        return reason;
    }
    if (c->bytes / size > INT_MAX)
        return "over INT_MAX elements: the collective kernels make no "
               "large-count calls";
    /* The largest partial result, a sum over every rank, must be exact. */
    if ((double)c->ranks * KEY_MAX + (double)rank_terms(c->ranks) > dtype_exact[s.dtype]) {
        snprintf(reason, sizeof reason, "the check's sums over %d ranks are not exact in %s",
                 c->ranks, coll_dtype_names[s.dtype]);
        return reason;
    }
    return NULL;
}

const char *coll_split_unsupported(const struct kcase *c, size_t units, const char *unit)
{
    static char reason[160];
    if (units % (size_t)c->ranks == 0)
        return NULL;
    snprintf(reason, sizeof reason,
             "%zu %s do not split into %d equal parts, as this "
             "mock-up needs",
             units, unit, c->ranks);
    return reason;
}

const char *coll_whole_unsupported(size_t units)
{
    return units > INT_MAX ? "this mock-up moves all P blocks in one call: over INT_MAX "
                             "elements"
                           : NULL;
}

int coll_may_be_root(const struct kcase *c)
{
    const struct coll *s = c->state;
    return s->root == COLL_ROOT_ROTATE || s->root == c->rank;
}

int coll_root(const struct kcase *c)
{
    const struct coll *s = c->state;
    if (s->root != COLL_ROOT_ROTATE)
        return s->root;
    return (int)(c->iteration % (uint64_t)c->ranks);
}

/* A fault for the tests (docs/native.md, "Faults for tests"):
 * COMMSCOPE_FAULT_SLOW_CHECK=RANK:US makes rank RANK's check of every result
 * last US microseconds longer, so a test can show that no other rank's
 * timed call waits for it. */
static double slow_check_s(int rank)
{
    const char *fault = getenv("COMMSCOPE_FAULT_SLOW_CHECK");
    int slow;
    double us;
    if (!fault || sscanf(fault, "%d:%lf", &slow, &us) != 2 || slow != rank)
        return 0;
    return us * 1e-6;
}

void coll_setup(struct kcase *c, enum coll_kind kind)
{
    struct coll *s = xcalloc(1, sizeof *s);
    *s = parse(c);
    s->kind = kind;
    s->inputs = kind == COLL_REDUCES ? COLL_INPUTS : 1;
    s->slow_check_s = slow_check_s(c->rank);
    s->count = (int)c->bytes;
    s->block = c->bytes;
    if (kind == COLL_REDUCES) {
        s->type = dtype_mpi(s->dtype);
        s->count = (int)(c->bytes / coll_dtype_elements[s->dtype].bytes);
        s->mpi_op = op_mpi(s->op);
        if (s->op == COLL_USER)
            CHECK_MPI(MPI_Op_create(user_sums[s->dtype], 1, &s->mpi_op));
    }
    user_calls = user_elements = 0;
    c->state = s;
}

void coll_user_op_report(struct kcase *c, struct jsonl *j)
{
    const struct coll *s = c->state;
    if (!j || s->op != COLL_USER || !c->iteration)
        return;
    jsonl_open(j, "user_op", '{');
    jsonl_num(j, "calls_per_iteration", (double)user_calls / (double)c->iteration);
    jsonl_num(j, "elements_per_call", user_calls ? (double)user_elements / (double)user_calls : 0);
    jsonl_close(j, '}');
}

static void *set_of(unsigned char *sets, size_t bytes, size_t set_count, uint64_t iteration)
{
    return sets ? sets + bytes * cache_set(iteration, set_count) : NULL;
}

void coll_buffers(struct kcase *c, size_t send_blocks, size_t recv_blocks)
{
    struct coll *s = c->state;
    s->send_blocks = send_blocks;
    /* whole pages, so every set starts page-aligned as buffer_alloc's do */
    s->send_bytes = buffer_round_pages(s->block * send_blocks);
    s->recv_bytes = buffer_round_pages(s->block * recv_blocks);
    s->set_count = cache_sets(c, s->send_bytes + s->recv_bytes);
    s->send_sets = send_blocks ? buffer_alloc(s->send_bytes * s->set_count * s->inputs) : NULL;
    s->recv_sets = recv_blocks ? buffer_alloc(s->recv_bytes * s->set_count) : NULL;
    c->working_set = (s->send_bytes * s->inputs + s->recv_bytes) * s->set_count;
    coll_iteration(c);
    if (s->kind == COLL_REDUCES)
        coll_fill_input(c);
}

void *coll_scratch(struct kcase *c, size_t blocks)
{
    struct coll *s = c->state;
    s->scratch = buffer_alloc(buffer_round_pages(s->block * blocks));
    return s->scratch;
}

void coll_vectors(struct kcase *c)
{
    struct coll *s = c->state;
    s->counts = xcalloc((size_t)c->ranks, sizeof *s->counts);
    s->displs = xcalloc((size_t)c->ranks, sizeof *s->displs);
    for (int r = 0; r < c->ranks; r++) {
        s->counts[r] = s->count;
        s->displs[r] = r * s->count;
    }
}

void coll_persist(struct kcase *c, coll_call_fn *call)
{
    struct coll *s = c->state;
    if (!s->persistent)
        return;
    /* A persistent collective is bound to its root and its buffers: with
     * root=rotate, one request per rank, and one per input (a reduction's,
     * coll_check). Warm buffers only (the parameter binds_buffers), so every
     * iteration's buffers are these. */
    int roots = s->root == COLL_ROOT_ROTATE ? c->ranks : 1;
    s->request_count = roots * (int)s->inputs;
    s->requests = xcalloc((size_t)s->request_count, sizeof *s->requests);
    uint64_t iteration = c->iteration;
    for (int i = 0; i < s->request_count; i++) {
        c->iteration = (uint64_t)i; /* root i / inputs, input i mod inputs */
        call(c, coll_iteration(c), roots == 1 ? s->root : i / (int)s->inputs, &s->requests[i]);
    }
    c->iteration = iteration;
    coll_iteration(c);
}

void coll_call(struct kcase *c, coll_call_fn *call)
{
    struct coll *s = c->state;
    int root = coll_root(c);
    if (!s->requests) {
        call(c, s, root, NULL);
        return;
    }
    int roots = s->request_count / (int)s->inputs;
    MPI_Request *r =
        &s->requests[(roots == 1 ? 0 : root) * (int)s->inputs + (int)(c->iteration % s->inputs)];
    CHECK_MPI(MPI_Start(r));
    CHECK_MPI(MPI_Wait(r, MPI_STATUS_IGNORE));
}

void coll_teardown(struct kcase *c)
{
    struct coll *s = c->state;
    for (int i = 0; i < s->request_count; i++)
        CHECK_MPI(MPI_Request_free(&s->requests[i]));
    free(s->requests);
    if (s->kind == COLL_REDUCES && s->op == COLL_USER)
        CHECK_MPI(MPI_Op_free(&s->mpi_op));
    buffer_free(s->send_sets);
    buffer_free(s->recv_sets);
    if (s->scratch)
        buffer_free(s->scratch);
    free(s->counts);
    free(s->displs);
    free(s);
}

struct coll *coll_iteration(struct kcase *c)
{
    struct coll *s = c->state;
    /* a set holds the reduction's inputs side by side; the iteration's is one of them */
    s->send = set_of(s->send_sets, s->send_bytes * s->inputs, s->set_count, c->iteration);
    if (s->send)
        s->send = (unsigned char *)s->send + s->send_bytes * (c->iteration % s->inputs);
    s->recv = set_of(s->recv_sets, s->recv_bytes, s->set_count, c->iteration);
    return s;
}

/* Distinct for every (iteration, block): blocks number below c->ranks. */
static uint64_t block_key(const struct kcase *c, int block)
{
    return c->iteration * (uint64_t)c->ranks + (uint64_t)block;
}

void coll_block_fill(const struct kcase *c, void *buf, int source, int block)
{
    if (c->validate)
        pattern_fill(buf, c->bytes, block_key(c, block), source);
}

void coll_block_check(const struct kcase *c, const void *buf, int source, int block, size_t at)
{
    if (!c->validate)
        return;
    struct mismatch m = {.iteration = c->iteration, .source_rank = source};
    if (pattern_find_mismatch(buf, c->bytes, block_key(c, block), source, &m.offset, &m.expected,
                              &m.got)) {
        m.offset += at;
        die_mismatch(&m);
    }
}

/* Blocks r = 0 .. P-1 at buf, each n bytes apart: filled as `source`'s
 * block r, or checked as block `block` of rank r. */
static void fill_blocks(const struct kcase *c, void *buf, int source)
{
    const struct coll *s = c->state;
    for (int r = 0; r < c->ranks; r++)
        coll_block_fill(c, (char *)buf + (size_t)r * s->block, source, r);
}

static void check_blocks(const struct kcase *c, const void *buf, int block)
{
    const struct coll *s = c->state;
    for (int r = 0; r < c->ranks; r++)
        coll_block_check(c, (const char *)buf + (size_t)r * s->block, r, block,
                         (size_t)r * s->block);
}

/* What a shape fills before its call (--validate), on c's current buffers. */
static void fill_shape(const struct kcase *c, const struct coll *s)
{
    int root = coll_root(c);
    switch (s->shape) {
    case COLL_SHAPE_GATHER:
    case COLL_SHAPE_ALLGATHER:
        coll_block_fill(c, s->send, c->rank, 0);
        break;
    case COLL_SHAPE_SCATTER:
        if (c->rank == root)
            fill_blocks(c, s->send, root);
        break;
    case COLL_SHAPE_ALLTOALL:
        fill_blocks(c, s->send, c->rank);
        break;
    case COLL_SHAPE_BCAST:
        if (c->rank == root)
            coll_block_fill(c, s->recv, root, 0);
        break;
    case COLL_SHAPE_REDUCTION:
        break; /* coll_buffers wrote it, once */
    }
}

/* What a shape checks after its call: --validate's blocks, a reduction's
 * result always. */
static void check_shape(const struct kcase *c, const struct coll *s)
{
    int root = coll_root(c);
    switch (s->shape) {
    case COLL_SHAPE_GATHER:
        if (c->rank == root)
            check_blocks(c, s->recv, 0);
        break;
    case COLL_SHAPE_ALLGATHER:
        check_blocks(c, s->recv, 0);
        break;
    case COLL_SHAPE_SCATTER:
        coll_block_check(c, s->recv, root, c->rank, 0);
        break;
    /* Block r came from rank r, which sent us its block number c->rank. */
    case COLL_SHAPE_ALLTOALL:
        check_blocks(c, s->recv, c->rank);
        break;
    case COLL_SHAPE_BCAST:
        if (c->rank != root)
            coll_block_check(c, s->recv, root, 0, 0);
        break;
    case COLL_SHAPE_REDUCTION:
        if (s->contributors)
            coll_check(c, s->recv, s->contributors, s->first, (size_t)s->count);
        break;
    }
}

void coll_once(struct kcase *c, coll_call_fn *call, enum coll_shape shape)
{
    struct coll *s = coll_iteration(c);
    s->shape = shape;
    if (!s->next_filled) /* the first iteration's; coll_verify writes the later ones' */
        fill_shape(c, s);
    coll_call(c, call);
}

void coll_reduction_once(struct kcase *c, coll_call_fn *call, int contributors, size_t first)
{
    struct coll *s = c->state;
    s->contributors = contributors;
    s->first = first;
    coll_once(c, call, COLL_SHAPE_REDUCTION);
}

void coll_verify(struct kcase *c)
{
    struct coll *s = c->state;
    check_shape(c, s);
    if (s->slow_check_s > 0) /* no clock read on the way between calls otherwise */
        for (double end = MPI_Wtime() + s->slow_check_s; MPI_Wtime() < end;)
            ;
    if (!c->validate)
        return;
    c->iteration++; /* the next iteration's blocks, in its buffers */
    fill_shape(c, coll_iteration(c));
    c->iteration--;
    coll_iteration(c);
    s->next_filled = true;
}

/* A hash of the element's index and the input (0 or 1) into 0 .. KEY_MAX
 * (Knuth's multiplicative hashing, top 10 bits): no short period along the
 * vector, so a shifted result fails the check. Each input is written once,
 * in setup, and iterations alternate between them, so a result left from
 * the iteration before fails too. Nothing is written between calls: writing
 * a new input each time left its lines dirty in the writer's cache, and the
 * next call, reading them from another core, took 1.7x as long (reduce,
 * 64 KiB, 2 ranks); the reference suites keep one input throughout. */
static inline long long element_key(uint64_t index, unsigned input)
{
    return (long long)(((uint32_t)(2 * index + input) * 0x9e3779b1u) >> 22);
}

/* Writes a * key(first + k) + b into elements k = 0 .. n-1. */
#define AFFINE_FILL(T)                                                   \
    do {                                                                 \
        T *p = buf;                                                      \
        for (size_t k = 0; k < n; k++)                                   \
            p[k] = (T)(a * element_key(first + k, input) + b);           \
    } while (0)

/* The first k whose element is not a * key(first + k) + b. */
#define AFFINE_FIND(T)                                                   \
    do {                                                                 \
        const T *p = buf;                                                \
        for (size_t k = 0; k < n; k++) {                                 \
            long long want = a * element_key(first + k, input) + b;      \
            if (p[k] != (T)want) {                                       \
                *bad = k;                                                \
                *want_out = want;                                        \
                *got = (double)p[k];                                     \
                return true;                                             \
            }                                                            \
        }                                                                \
        return false;                                                    \
    } while (0)

static void affine_fill(enum coll_dtype d, void *buf, size_t n, size_t first, unsigned input,
                        long long a, long long b)
{
    switch (d) {
    case COLL_INT:
        AFFINE_FILL(int);
        break;
    case COLL_LONG:
        AFFINE_FILL(long);
        break;
    case COLL_FLOAT:
        AFFINE_FILL(float);
        break;
    case COLL_DOUBLE:
        AFFINE_FILL(double);
        break;
    }
}

static bool affine_find(enum coll_dtype d, const void *buf, size_t n, size_t first, unsigned input,
                        long long a, long long b, size_t *bad, long long *want_out, double *got)
{
    switch (d) {
    case COLL_INT:
        AFFINE_FIND(int);
    case COLL_LONG:
        AFFINE_FIND(long);
    case COLL_FLOAT:
        AFFINE_FIND(float);
    case COLL_DOUBLE:
        AFFINE_FIND(double);
    }
    return false;
}

void coll_fill_input(const struct kcase *c)
{
    const struct coll *s = c->state;
    for (size_t set = 0; s->send_sets && set < s->set_count * s->inputs; set++)
        affine_fill(s->dtype, s->send_sets + set * s->send_bytes,
                    (size_t)s->count * s->send_blocks, 0, (unsigned)(set % s->inputs), 1,
                    c->rank % RANK_TERM);
}

void coll_check(const struct kcase *c, const void *buf, int contributors, size_t first,
                size_t count)
{
    const struct coll *s = c->state;
    /* The op over inputs key + (r mod 16), r = 0 .. contributors-1. */
    long long a = 1, b = 0;
    if (s->op == COLL_SUM || s->op == COLL_USER) {
        a = contributors;
        b = rank_terms(contributors);
    } else if (s->op == COLL_MAX) {
        b = contributors - 1 < RANK_TERM - 1 ? contributors - 1 : RANK_TERM - 1;
    }
    size_t bad;
    long long want;
    double got;
    unsigned input = (unsigned)(c->iteration % s->inputs);
    if (affine_find(s->dtype, buf, count, first, input, a, b, &bad, &want, &got))
        die("%s op=%s dtype=%s: rank %d, element %zu, iteration %llu: "
            "expected %lld, got %.17g",
            c->cfg->kernel->name, coll_op_names[s->op], coll_dtype_names[s->dtype], c->rank,
            first + bad, (unsigned long long)c->iteration, want, got);
}
