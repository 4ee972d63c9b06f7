/* What a kernel is. A kernel defines one iteration of a measurement and
 * nothing else: the timing loop (timing.c) owns warm-up, batching,
 * synchronisation and the timer, as google/benchmark keeps timing out of
 * user code. Kernels are data listed in kernels/list.h, as ReproMPI keeps
 * its operations in a table. */
#ifndef COMMSCOPE_KERNEL_H
#define COMMSCOPE_KERNEL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "mpi_features.h"
#include "msg.h"

struct config;
struct jsonl;
struct phases;

/* Whose clock defines a sample (docs/native.md, "Records"): rank 0's, or
 * the per-sample maximum over the ranks taking part. */
enum timed_by { TIMED_BY_ORIGIN, TIMED_BY_MAX };
extern const char *const timed_by_names[];

/* Which page of the docs a kernel belongs to, and how views draw it: the
 * collectives against the process count, applications on their own. */
enum kernel_family {
    FAMILY_POINT_TO_POINT,
    FAMILY_ONE_SIDED,
    FAMILY_MANY_RANK,
    FAMILY_COLLECTIVE,
    FAMILY_HALO,
    FAMILY_APPLICATION,
    FAMILY_HEALTH, /* node-level patterns: `commscope health` */
};
extern const char *const kernel_family_names[];

/* How a --param value is checked, and what it means to the rest of a
 * plan: here when a case reads it, and by Python before launching, from
 * what --describe says (docs/native.md). A rule that follows from a kind
 * is written once on each side, never per parameter name. */
enum param_kind {
    PARAM_CHOICE, /* one of choices */
    PARAM_RANK,   /* a rank of the case, or rotate */
    PARAM_COUNT,  /* a whole number >= 1 */
    PARAM_NUMBER, /* a finite real number */
    PARAM_EXTENT, /* NXxNY, both >= 1 */
    PARAM_GRID,   /* PXxPY with PX*PY the ranks, or auto */
    PARAM_PATH,   /* a file this kernel writes */
    PARAM_SWITCH, /* yes or no; `commscope run --NAME` alone is yes */
    /* contiguous, or vector:STRIDE:BLOCK with STRIDE >= BLOCK >= 1, in the
     * elements a choice's `elements` names: every size is whole blocks */
    PARAM_LAYOUT,
    /* a whole number P >= 1 of equal parts each message is split into:
     * every size is a whole multiple of P (kcase_unsupported) */
    PARAM_PARTS,
    /* one of choices, an RMA access epoch: `commscope run --sync` takes
     * the choices too, and --sync window is refused (the target would wait
     * outside MPI) */
    PARAM_EPOCH,
    /* one of the MPI library's own algorithms for the collective the kernel
     * is named for (algorithm.h), read from the library: not given, the
     * library chooses */
    PARAM_ALGORITHM,
    PARAM_KIND_COUNT
};
extern const char *const param_kind_names[];

/* A kernel parameter, --param NAME=VALUE, declared once: the kernel reads
 * it with kcase_param, --help and --describe show it, options.c checks the
 * choices before any case runs. Written {.name = "x", kind, default, help,
 * choices, elements}: after the designator, needs, modes and binds_buffers
 * default to none. */
struct kparam {
    const char *name;
    enum param_kind kind;
    const char *def; /* the value when not given; NULL: none (optional) */
    const char *help;
    const char *const *choices; /* PARAM_CHOICE: NULL-terminated */
    /* PARAM_CHOICE only, optional: per choice, the element every size must
     * be a whole number of ({NULL, 0}: any size), e.g. a reduction's type. */
    const struct element *elements;
    /* What the parameter needs of the MPI when given (a switch: when yes),
     * refused before launch where the build lacks it (mpi_features.h). */
    enum feature needs;
    /* The send modes it may be given with (SEND_MODE_BITs); 0: any. */
    unsigned modes;
    /* Given (a switch: yes), it binds the case's buffers to requests made
     * in set-up, so they cannot rotate: --cold-cache is refused. */
    bool binds_buffers;
};

struct element {
    const char *type; /* the element's C type, as a message names it */
    size_t bytes;
};

/* One case (kernel, send mode, size) as a kernel sees it. The timing loop
 * fills it in; setup sets window and state; run_once reads iteration. */
struct kcase {
    const struct config *cfg;
    MPI_Comm comm;
    int rank;            /* in comm */
    int ranks;           /* ranks taking part: 0 .. ranks-1 */
    enum send_mode mode; /* SEND_STANDARD for kernels without modes */
    size_t bytes;        /* payload per message */
    bool validate;       /* --validate */
    int window;          /* messages in flight per iteration; 0: none */
    uint64_t iteration;  /* numbers every run_once of the case, warm-up too */
    void *state;         /* the kernel's own, from setup to teardown */
    size_t working_set;  /* bytes this rank's buffers rotate through (cache.h) */
    /* p2p_init's --layout vector, in bytes: the payload is blocks of `block`
     * bytes whose starts are `stride` apart. block 0: contiguous. */
    struct layout {
        size_t block, stride;
    } layout;
    struct phases *phases; /* for sampling_phase_end (sampling.h); NULL: none */
    /* With --each: this case's value of that parameter; NULL: not given. */
    const char *variant;
};

struct kernel {
    const char *name;
    const char *description;
    enum kernel_family family;
    int min_ranks;
    /* The job's ranks must be a multiple of this (2: the kernel pairs them);
     * 0: any count. */
    int ranks_multiple;
    /* Ranks taking part: 0 .. max_ranks-1; the others idle in the loop's
     * barriers. 0: every rank of the job takes part. */
    int max_ranks;
    unsigned modes; /* SEND_MODE_BITs accepted; 0: takes no send modes */
    enum feature needs; /* of the MPI (mpi_features.h); FEATURE_NONE: nothing */
    enum timed_by timed_by;
    /* --cold-cache applies: the kernel's buffers come from p2p_init or
     * coll_buffers, which rotate them (cache.h). */
    bool cold_cache;
    /* --window when not given: messages (operations) in flight per
     * iteration. 0: the kernel takes no window. */
    int default_window;
    const struct kparam *params; /* {NULL}-terminated; NULL: none */
    /* Called once on every rank of the job, idle ones too, before the
     * first case (and before any case is refused). NULL: nothing. */
    void (*prepare)(MPI_Comm comm);
    /* Why this case cannot run on this MPI library, or NULL. Called on every
     * rank and must depend only on the case, so all ranks agree without
     * communicating. A NULL function: every case runs. */
    const char *(*unsupported)(const struct kcase *c);
    void (*setup)(struct kcase *c);
    /* One iteration: what is timed. */
    void (*run_once)(struct kcase *c);
    /* After each run_once, outside the timed region (the loop reads the
     * clock first, and the next sample's sync comes after): checks the
     * iteration's result and writes the next iteration's input, so neither
     * is timed nor delays another rank's timed call. NULL: nothing. */
    void (*verify)(struct kcase *c);
    void (*teardown)(struct kcase *c);
    /* Names of the phases of one iteration that run_once ends with
     * sampling_phase_end, NULL-terminated; NULL: not split into phases. */
    const char *const *phases;
    /* The phase that is the sample (the nonblocking collectives' `pure`: the
     * operation alone); NULL: the whole iteration. */
    const char *sample_phase;
    /* Extra fields for the case record. Collective, called on every rank
     * after the samples and before teardown; j is the open case record on
     * rank 0 and NULL elsewhere. NULL: nothing to add. */
    void (*report)(struct kcase *c, struct jsonl *j);
};

/* Why this case cannot run, or NULL: the kernel's own unsupported, then
 * what its parameters' kinds declare (a PARAM_PARTS that does not divide
 * the size). Called on every rank; depends only on the case. */
const char *kcase_unsupported(const struct kcase *c);
/* The value of --param KEY, or its declared default (NULL: none). KEY
 * must be one of the kernel's declared parameters. */
const char *kcase_param(const struct kcase *c, const char *key);
/* A PARAM_CHOICE parameter as the index of its value among the declared
 * choices (options.c has refused any other value). */
int kcase_param_choice(const struct kcase *c, const char *key);
/* A PARAM_SWITCH parameter: given as yes (false where the kernel has no
 * such parameter). */
bool kcase_param_switch(const struct kcase *c, const char *key);
extern const char *const switch_choices[]; /* yes, no */

/* What one sample of k is (docs/native.md, "One timing loop"): a collective's
 * is one call from a synchronized start, as OSU and ReproMPI time them (a
 * batch of back-to-back calls lets the ranks run ahead of each other and
 * measures a pipelined rate); the other kernels' iterations synchronise
 * their ranks themselves, so a sample may batch them. */
enum sample_kind { SAMPLE_BATCH, SAMPLE_CALL };
extern const char *const sample_kind_names[];
enum sample_kind kernel_sample_kind(const struct kernel *k);

const struct kernel *kernel_find(const char *name);
const struct kernel *kernel_at(size_t index); /* NULL past the last */
/* The declared parameter NAME of k, or NULL. */
const struct kparam *kernel_param(const struct kernel *k, const char *name);
/* The index of value among p's choices, or -1. */
int kparam_choice_index(const struct kparam *p, const char *value);
/* The case forces one of the library's algorithms (PARAM_ALGORITHM given). */
bool kcase_forced(const struct kcase *c);
/* p's choices: its own, or for PARAM_ALGORITHM the library's for kernel k. */
const char *const *kparam_choices(const struct kernel *k, const struct kparam *p);

/* A point-to-point case's messages: the datatype for c->bytes, a send
 * buffer (if the rank sends payload) and `slots` distinct receive buffers,
 * each page-aligned; send and receive never share memory. With --cold-cache
 * there are several sets of them (cache.h) and each iteration uses its own:
 * read them through p2p_send_buf and p2p_recv_buf during run_once. */
struct p2p {
    struct msg_type type;
    const struct kcase *c;
    unsigned char *sets; /* sets x set_bytes */
    size_t set_count, set_bytes;
    size_t stride; /* one buffer, in whole pages */
    bool sends;
};
void p2p_init(struct p2p *b, const struct kcase *c, bool sends, int slots);
/* The point-to-point kernels' element type and layout (docs/native.md,
 * "Persistent requests, element types and layouts"): messages of c->bytes of --param dtype
 * elements (default MPI_BYTE), laid out as --param layout says (default contiguous). p2p_init
 * reads both where the kernel declares them. */
#define P2P_DTYPE_PARAM                                                       \
    {.name = "dtype", PARAM_CHOICE, NULL, "the element type (default: bytes, " \
     "MPI_BYTE); sizes are whole elements", p2p_dtype_names, p2p_dtype_elements}
#define P2P_LAYOUT_PARAM                                                      \
    {.name = "layout", PARAM_LAYOUT, NULL, "contiguous, or vector:STRIDE:BLOCK " \
     "(MPI_Type_vector, in elements); n counts the payload bytes", NULL, NULL}
/* persistent: MPI_Send_init in the kernel's modes that have a persistent form. */
#define P2P_PERSISTENT_PARAM(mode_bits)                                       \
    {.name = "persistent", PARAM_SWITCH, NULL, "persistent requests: made "   \
     "once in set-up, then MPI_Start and MPI_Wait each iteration",            \
     switch_choices, NULL, FEATURE_NONE, (mode_bits), true}
#define PERSISTENT_MODES                                                      \
    (SEND_MODE_BIT(SEND_STANDARD) | SEND_MODE_BIT(SEND_SYNCHRONOUS) |         \
     SEND_MODE_BIT(SEND_BUFFERED) | SEND_MODE_BIT(SEND_READY))
extern const char *const p2p_dtype_names[];
extern const struct element p2p_dtype_elements[];
/* Why a case of a kernel with dtype or layout cannot run, or NULL. */
const char *p2p_unsupported(const struct kcase *c);
void *p2p_send_buf(const struct p2p *b);
void *p2p_recv_buf(const struct p2p *b, int slot);
/* The receive slot of another iteration: a receive posted now for a later one. */
void *p2p_recv_buf_at(const struct p2p *b, int slot, uint64_t iteration);
void p2p_free(struct p2p *b);

/* --window, limited so that W receive buffers of c->bytes stay within
 * WINDOW_BYTES_MAX (at least one message): the window bw, bibw and rma use. */
#define WINDOW_BYTES_MAX ((size_t)1 << 30)
int window_limited(const struct kcase *c);

/* bw and bibw: --param recv_buffers=one (the default: all W receives into one
 * buffer, as osu_bw, osu_bibw and IMB Uniband/Biband do, although MPI calls
 * overlapping pending receives erroneous) or window (W distinct buffers).
 * recv_slots is how many buffers a case receives into: --validate checks
 * every message, which needs a buffer of its own each, so it uses W. */
#define RECV_BUFFERS_PARAM                                                     \
    {.name = "recv_buffers", PARAM_CHOICE, "one", "receive into one buffer, as " \
     "the reference suites do, or one per message of the window (--validate: " \
     "one per message)", recv_buffer_kinds, NULL}
extern const char *const recv_buffer_kinds[];
int recv_slots(const struct kcase *c);
/* The case record's "recv_buffers" ("one" or "window") and "recv_buffer_count". */
void recv_slots_report(struct jsonl *j, int slots);

/* --validate (docs/native.md): the sender fills its payload for this
 * iteration before each send; the receiver checks every byte. Both do
 * nothing without --validate. */
void payload_fill(const struct kcase *c, void *buf);
void payload_check(const struct kcase *c, const void *buf, int source_rank);

#endif
