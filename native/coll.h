/* What the collective kernels share (docs/kernels-collectives.md): their
 * --param values (root, op, dtype), buffers, the rooted collectives' root,
 * the --validate block patterns and the reductions' always-on check. Each
 * kernels/NAME.c is then the MPI call and which blocks it checks. */
#ifndef COMMSCOPE_COLL_H
#define COMMSCOPE_COLL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jsonl.h"
#include "kernel.h"

/* The parameters' entries, for a kernel that lists its own (one with
 * mock-ups); the arrays below are made of them. */
extern const char *const coll_op_names[], *const coll_dtype_names[];
extern const struct element coll_dtype_elements[];
#define COLL_ROOT_PARAM                                                   \
    {.name = "root", PARAM_RANK, "0", "the root: a rank, or rotate (iteration "  \
     "mod ranks)", NULL, NULL}
#define COLL_REDUCING_PARAMS                                              \
    {.name = "op", PARAM_CHOICE, "sum", "a builtin op, or user: a commutative "   \
     "sum via MPI_Op_create", coll_op_names, NULL},                       \
    {.name = "dtype", PARAM_CHOICE, "int", "the element type; sizes are whole "   \
     "elements", coll_dtype_names, coll_dtype_elements}
#define COLL_PERSISTENT_PARAM                                             \
    {.name = "persistent", PARAM_SWITCH, NULL, "the MPI-4 persistent form: the "   \
     "request made once in set-up, then MPI_Start and MPI_Wait each "     \
     "iteration", switch_choices, NULL, FEATURE_PERSISTENT_COLLECTIVES, 0, true}
/* --algorithm NAME: one of the library's own algorithms for the collective,
 * forced for the case (algorithm.h); not given, the library chooses. */
#define COLL_ALGORITHM_PARAM                                              \
    {.name = "algorithm", PARAM_ALGORITHM, NULL, "the MPI library's own algorithm for "  \
     "this collective, forced (commscope tune); default the library's choice", NULL, NULL}
/* --as NAME: a mock-up, the collective's job done by other MPI calls
 * (Traff, Gropp and Thakur, "Self-consistent MPI performance guidelines",
 * IEEE TPDS 21(5), 2010), with the same result and the same checks. The
 * kernel owns its mock-ups: `mockups` lists their names, the calls joined
 * by '+', in the order of its own enum; not given, the collective itself. */
#define COLL_AS_PARAM(mockups)                                            \
    {.name = "as", PARAM_CHOICE, NULL, "a mock-up: the same result from other "   \
     "MPI calls (docs/guidelines.md); default the collective itself", mockups, NULL}
#define COLL_ITSELF (-1) /* struct coll's `as` without --as */

/* The collectives' parameters, for struct kernel's params. */
/* Each of these takes `persistent` (a switch: the MPI-4 persistent form). */
extern const struct kparam coll_persistent_params[]; /* persistent alone */
extern const struct kparam coll_rooted_params[];   /* root */
extern const struct kparam coll_reducing_params[]; /* op, dtype */
extern const struct kparam coll_rooted_reducing_params[];
/* The same with the nonblocking collectives' `tests` (nbc.h). */
extern const struct kparam nbc_params[];
extern const struct kparam nbc_rooted_params[];
extern const struct kparam nbc_reducing_params[];
extern const struct kparam nbc_rooted_reducing_params[];

/* --param op=user: rank 0's calls of the user op per iteration and elements
 * per call, as a case record's user_op (a kernel's report). */
void coll_user_op_report(struct kcase *c, struct jsonl *j);

enum coll_dtype { COLL_INT, COLL_LONG, COLL_FLOAT, COLL_DOUBLE };
enum coll_op { COLL_SUM, COLL_MAX, COLL_MIN, COLL_USER };
#define COLL_ROOT_ROTATE (-1)

/* What a collective does with its blocks: moves bytes, or reduces
 * elements of --param dtype with --param op. */
enum coll_kind { COLL_MOVES_DATA, COLL_REDUCES };

/* Which blocks an iteration fills before its call and checks after it
 * (coll_once), block r of a receive buffer from rank r: gather, every rank's
 * block to the root (allgather: to every rank); scatter, block r of the
 * root's to rank r; alltoall, block r of every rank's to rank r; bcast, the
 * root's buffer to every rank; a reduction, its result (coll_check). */
enum coll_shape {
    COLL_SHAPE_GATHER,
    COLL_SHAPE_ALLGATHER,
    COLL_SHAPE_SCATTER,
    COLL_SHAPE_ALLTOALL,
    COLL_SHAPE_BCAST,
    COLL_SHAPE_REDUCTION,
};

struct coll {
    enum coll_kind kind;
    int root; /* a rank, or COLL_ROOT_ROTATE: iteration mod ranks */
    enum coll_op op;
    enum coll_dtype dtype;
    MPI_Datatype type; /* MPI_BYTE for the collectives that only move data */
    MPI_Op mpi_op;     /* MPI_OP_NULL for those */
    int count;         /* elements of type per block */
    size_t block;      /* bytes per block: count x size of type */
    size_t send_blocks;
    void *send, *recv; /* this iteration's; NULL where this rank never sends / receives */
    /* --cold-cache: set_count copies of the send and receive buffers, one per
     * iteration in turn (cache.h); warm: one. */
    unsigned char *send_sets, *recv_sets;
    /* Send buffers per set: a reduction's COLL_INPUTS inputs, one per
     * iteration in turn (coll_check); 1 for the others. */
    size_t inputs;
    size_t set_count, send_bytes, recv_bytes;
    /* Nonblocking collectives (nbc.h): the compute phase's length, calibrated
     * to the pure communication time, and the MPI_Test calls spread over it. */
    double compute_s;
    long long tests;
    /* --as: the mock-up's index in the kernel's list, or COLL_ITSELF; the
     * buffer its calls go through (coll_scratch), one and warm. */
    int as;
    void *scratch;
    /* The v-collectives' counts and displacements, `count` and r x count
     * for every rank r (coll_vectors): the same blocks as the plain call. */
    int *counts, *displs;
    /* --param persistent: the requests coll_persist made, one per root. */
    bool persistent;
    MPI_Request *requests;
    int request_count;
    /* What the iteration's call left for coll_verify: its shape, and a
     * reduction's contributors (0: no result here) and first element. */
    enum coll_shape shape;
    int contributors;
    size_t first;
    double slow_check_s; /* a fault for the tests: extra seconds per check */
    bool next_filled; /* coll_verify has written the next iteration's blocks */
};

/* A blocking collective's call on s's buffers from root: with init NULL the
 * blocking call, else its MPI-4 persistent form made into *init. Written
 * with COLL_CALL, so a build without persistent collectives compiles. */
typedef void coll_call_fn(struct kcase *c, struct coll *s, int root, MPI_Request *init);
#if COMMSCOPE_HAVE_PERSISTENT_COLLECTIVES
#define COLL_CALL(init, blocking, persistent) CHECK_MPI((init) ? (persistent) : (blocking))
#else
#define COLL_CALL(init, blocking, persistent)                              \
    do {                                                                   \
        (void)(init);                                                      \
        CHECK_MPI(blocking);                                               \
    } while (0)
#endif
/* In setup, after coll_buffers: with --param persistent, makes the requests. */
void coll_persist(struct kcase *c, coll_call_fn *call);
/* In run_once: this iteration's collective, blocking or persistent
 * (MPI_Start, then MPI_Wait). */
void coll_call(struct kcase *c, coll_call_fn *call);

/* Skip reasons, or NULL. Both parse the --param values, so a bad value
 * ends the run (an error record naming the parameter and the values it
 * takes) before the case is set up. */
const char *coll_bytes_unsupported(const struct kcase *c);
const char *coll_persistent_unsupported(const struct kcase *c); /* barrier's */
const char *coll_reduction_unsupported(const struct kcase *c);

/* Parses the parameters and sizes blocks from c->bytes (a whole number of
 * elements for reductions); c->state is the struct coll. */
void coll_setup(struct kcase *c, enum coll_kind kind);
/* Allocates send_blocks and recv_blocks blocks (0: none). A reduction's
 * send buffer then holds iteration 0's input. */
void coll_buffers(struct kcase *c, size_t send_blocks, size_t recv_blocks);
/* The state at the start of a run_once: send and recv pointed at this
 * iteration's buffers. */
struct coll *coll_iteration(struct kcase *c);
void coll_teardown(struct kcase *c);

/* For mock-ups: `blocks` blocks of scratch, freed by coll_teardown. */
void *coll_scratch(struct kcase *c, size_t blocks);
/* For the v-collectives and their mock-ups: counts and displs. */
void coll_vectors(struct kcase *c);
/* A mock-up that splits each block into P parts: the reason a size cannot
 * (not a whole number of P parts), or NULL. Read in the kernel's own
 * `unsupported` after the collective's. */
const char *coll_split_unsupported(const struct kcase *c, size_t units, const char *unit);
/* A mock-up that moves all P blocks in one call: the reason `units` (bytes
 * or elements) are too many for an int count, or NULL. */
const char *coll_whole_unsupported(size_t units);
/* The run's mock-up (`as` given), or COLL_ITSELF, without setting up. */
int coll_as(const struct kcase *c);
/* A reduction's element size, from --param dtype, without setting up. */
size_t coll_element_bytes(const struct kcase *c);

/* Whether this rank may be the root of some iteration: it alone needs the
 * root-side buffers. */
int coll_may_be_root(const struct kcase *c);
/* The root of the current iteration. */
int coll_root(const struct kcase *c);

/* --validate: block `block` of the payload rank `source` sends this
 * iteration is the pattern of (iteration, source, block); fill writes it,
 * check compares every byte of it with what arrived at buf. at is the
 * block's offset in the receive buffer, named in an error. No-ops without
 * --validate. */
void coll_block_fill(const struct kcase *c, void *buf, int source, int block);
void coll_block_check(const struct kcase *c, const void *buf, int source, int block, size_t at);

/* One iteration of a collective (its kernel's run_once): the call alone, on
 * this iteration's buffers. The first iteration's blocks are filled first
 * (--validate); the checks and the next iteration's blocks are coll_verify's,
 * outside the timed region. A reduction checks `count` elements from element
 * `first` of the vector, over ranks 0 .. contributors-1 (0: none here). */
void coll_once(struct kcase *c, coll_call_fn *call, enum coll_shape shape);
void coll_reduction_once(struct kcase *c, coll_call_fn *call, int contributors, size_t first);
/* The collectives' verify (kernel.h): checks what the iteration's call
 * delivered (a reduction's result always, --validate's blocks), then writes
 * --validate's blocks of the next iteration. */
void coll_verify(struct kcase *c);

/* Reductions. Input v of rank r at element i is key(i, v) + (r mod 16), key
 * a hash of (i, v) in 0..1023: small integers, so every partial result is
 * exact in every dtype (docs). Iteration k uses input k mod COLL_INPUTS, so
 * a result left from the iteration before fails the check. fill_input
 * writes them, once (coll_buffers does). check compares `count` elements at
 * buf, elements first .. first+count-1 of the vector, with the op over the
 * inputs of ranks 0 .. contributors-1, and ends the run with an error record
 * at the first difference; it only reads. */
#define COLL_INPUTS 2
void coll_fill_input(const struct kcase *c);
void coll_check(const struct kcase *c, const void *buf, int contributors, size_t first,
                size_t count);

#endif
