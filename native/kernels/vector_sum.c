/* vector_sum: seed 000's study of distributing work and combining results.
 * Rank 0 owns the vector 1..N of 64-bit unsigned integers (N = size / 8);
 * each iteration distributes it in blocks (p2p, bcast or scatter), every
 * rank sums its block, and the partial sums are combined at rank 0 (p2p,
 * gather, reduce or reduce with a user-defined MPI_Op). Rank 0 checks the
 * total against N(N+1)/2 on every iteration (docs/kernels-many-rank.md
 * "vector_sum"). The three phases are timed separately by the loop. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernel.h"
#include "sampling.h"

enum distribute { DISTRIBUTE_P2P, DISTRIBUTE_BCAST, DISTRIBUTE_SCATTER };
enum combine { COMBINE_P2P, COMBINE_GATHER, COMBINE_REDUCE, COMBINE_REDUCE_USER };
enum { PHASE_DISTRIBUTE, PHASE_COMPUTE, PHASE_COMBINE };
enum { TAG_BLOCK = 1, TAG_PARTIAL };

static const char *const distributes[] = {"p2p", "bcast", "scatter", NULL};
static const char *const combines[] = {"p2p", "gather", "reduce", "reduce_user", NULL};
/* clang-format off */
static const struct kparam vector_sum_params[] = {
    {.name = "distribute", PARAM_CHOICE, "p2p", "how rank 0's vector is spread",
     distributes, NULL},
    {.name = "combine", PARAM_CHOICE, "p2p", "how the partial sums come back",
     combines, NULL},
    {0},
};
/* clang-format on */
static const char *const vector_sum_phases[] = {"distribute", "compute", "combine", NULL};

struct vector_sum {
    enum distribute distribute;
    enum combine combine;
    uint64_t n;
    int *counts, *displs; /* [ranks]: rank r's block, in elements */
    uint64_t *vector;     /* rank 0, and every rank with bcast: all N */
    uint64_t *received;   /* other ranks with p2p or scatter: their block */
    uint64_t *block;      /* this rank's block, in vector or received */
    uint64_t *partials;   /* rank 0 with gather: [ranks] */
    MPI_Op sum;           /* reduce_user */
};

static const char *vector_sum_unsupported(const struct kcase *c)
{
    if (c->bytes % sizeof(uint64_t) != 0)
        return "the size is the vector's bytes: a multiple of 8 "
               "(64-bit elements)";
    if (c->bytes / sizeof(uint64_t) > INT_MAX)
        return "vectors over INT_MAX elements are out of scope (MPI int "
               "counts and displacements)";
    return NULL;
}

/* The user-defined operation: the same wrapping 64-bit sum as MPI_SUM on
 * MPI_UINT64_T, so the two differ only in who implements it. */
static void sum_uint64(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const uint64_t *a = in;
    uint64_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}

/* Blocks as even as they come: the first N mod P ranks get one more. */
static void split(struct vector_sum *s, int ranks)
{
    uint64_t base = s->n / (uint64_t)ranks, extra = s->n % (uint64_t)ranks;
    s->counts = xcalloc((size_t)ranks, sizeof *s->counts);
    s->displs = xcalloc((size_t)ranks, sizeof *s->displs);
    for (int r = 0, at = 0; r < ranks; r++) {
        s->counts[r] = (int)(base + ((uint64_t)r < extra));
        s->displs[r] = at;
        at += s->counts[r];
    }
}

static void vector_sum_setup(struct kcase *c)
{
    struct vector_sum *s = xcalloc(1, sizeof *s);
    s->distribute = (enum distribute)kcase_param_choice(c, "distribute");
    s->combine = (enum combine)kcase_param_choice(c, "combine");
    s->n = c->bytes / sizeof(uint64_t);
    s->sum = MPI_OP_NULL;
    split(s, c->ranks);
    int mine = s->counts[c->rank];
    if (c->rank == 0 || s->distribute == DISTRIBUTE_BCAST) {
        s->vector = buffer_alloc(c->bytes);
        s->block = s->vector + s->displs[c->rank];
    } else {
        s->received = buffer_alloc((size_t)mine * sizeof(uint64_t));
        s->block = s->received;
    }
    if (c->rank == 0)
        for (uint64_t i = 0; i < s->n; i++)
            s->vector[i] = i + 1;
    if (c->rank == 0 && s->combine == COMBINE_GATHER)
        s->partials = xcalloc((size_t)c->ranks, sizeof *s->partials);
    if (s->combine == COMBINE_REDUCE_USER)
        CHECK_MPI(MPI_Op_create(sum_uint64, 1, &s->sum));
    c->state = s;
}

static void distribute(struct kcase *c, struct vector_sum *s)
{
    int mine = s->counts[c->rank];
    /* --validate: a block that never arrives must not pass on the previous
     * iteration's copy, so ranks other than 0 spoil theirs first. */
    if (c->validate && c->rank != 0)
        memset(s->block, 0xff, (size_t)mine * sizeof(uint64_t));
    switch (s->distribute) {
    case DISTRIBUTE_P2P:
        if (c->rank != 0) {
            CHECK_MPI(MPI_Recv(s->block, mine, MPI_UINT64_T, 0, TAG_BLOCK, c->comm,
                               MPI_STATUS_IGNORE));
            break;
        }
        for (int r = 1; r < c->ranks; r++)
            CHECK_MPI(MPI_Send(s->vector + s->displs[r], s->counts[r], MPI_UINT64_T, r, TAG_BLOCK,
                               c->comm));
        break;
    case DISTRIBUTE_BCAST:
        CHECK_MPI(MPI_Bcast(s->vector, (int)s->n, MPI_UINT64_T, 0, c->comm));
        break;
    case DISTRIBUTE_SCATTER:
        /* Rank 0's block stays where it is, as with p2p. */
        CHECK_MPI(MPI_Scatterv(s->vector, s->counts, s->displs, MPI_UINT64_T,
                               c->rank == 0 ? MPI_IN_PLACE : (void *)s->block, mine, MPI_UINT64_T,
                               0, c->comm));
        break;
    }
}

static uint64_t block_sum(const struct kcase *c, const struct vector_sum *s)
{
    uint64_t partial = 0;
    for (int i = 0; i < s->counts[c->rank]; i++)
        partial += s->block[i];
    return partial;
}

/* The total at rank 0; meaningless elsewhere. */
static uint64_t combine(struct kcase *c, struct vector_sum *s, uint64_t partial)
{
    uint64_t total = partial;
    switch (s->combine) {
    case COMBINE_P2P:
        if (c->rank != 0) {
            CHECK_MPI(MPI_Send(&partial, 1, MPI_UINT64_T, 0, TAG_PARTIAL, c->comm));
            break;
        }
        for (int r = 1; r < c->ranks; r++) {
            uint64_t theirs;
            CHECK_MPI(MPI_Recv(&theirs, 1, MPI_UINT64_T, r, TAG_PARTIAL, c->comm,
                               MPI_STATUS_IGNORE));
            total += theirs;
        }
        break;
    case COMBINE_GATHER:
        CHECK_MPI(MPI_Gather(&partial, 1, MPI_UINT64_T, s->partials, 1, MPI_UINT64_T, 0, c->comm));
        if (c->rank == 0)
            for (int r = 1; r < c->ranks; r++)
                total += s->partials[r];
        break;
    case COMBINE_REDUCE:
    case COMBINE_REDUCE_USER:
        CHECK_MPI(MPI_Reduce(&partial, &total, 1, MPI_UINT64_T,
                             s->combine == COMBINE_REDUCE ? MPI_SUM : s->sum, 0, c->comm));
        break;
    }
    return total;
}

/* N(N+1)/2 halving the even factor first; exact in 64 bits for every N
 * this kernel accepts (N <= INT_MAX: the sum is below 2^61). */
static uint64_t expected_total(uint64_t n)
{
    return n % 2 == 0 ? n / 2 * (n + 1) : (n + 1) / 2 * n;
}

static void vector_sum_run_once(struct kcase *c)
{
    struct vector_sum *s = c->state;
    distribute(c, s);
    sampling_phase_end(c, PHASE_DISTRIBUTE);
    uint64_t partial = block_sum(c, s);
    sampling_phase_end(c, PHASE_COMPUTE);
    uint64_t total = combine(c, s, partial);
    if (c->rank == 0 && total != expected_total(s->n))
        die("vector_sum distribute=%s combine=%s: iteration %llu: sum of "
            "1..%llu is %llu, expected %llu",
            distributes[s->distribute], combines[s->combine], (unsigned long long)c->iteration,
            (unsigned long long)s->n, (unsigned long long)total,
            (unsigned long long)expected_total(s->n));
    sampling_phase_end(c, PHASE_COMBINE);
}

static void vector_sum_teardown(struct kcase *c)
{
    struct vector_sum *s = c->state;
    if (s->sum != MPI_OP_NULL)
        CHECK_MPI(MPI_Op_free(&s->sum));
    free(s->counts);
    free(s->displs);
    buffer_free(s->vector);
    buffer_free(s->received);
    free(s->partials);
    free(s);
}

const struct kernel kernel_vector_sum = {
    .name = "vector_sum",
    .description = "sum of 1..N (N = size/8) distributed from rank 0, "
                   "--param distribute=p2p|bcast|scatter, "
                   "combine=p2p|gather|reduce|reduce_user",
    .family = FAMILY_MANY_RANK,
    .min_ranks = 1,
    .timed_by = TIMED_BY_MAX,
    .params = vector_sum_params,
    .unsupported = vector_sum_unsupported,
    .setup = vector_sum_setup,
    .run_once = vector_sum_run_once,
    .teardown = vector_sum_teardown,
    .phases = vector_sum_phases,
};
