#include "kernel.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithm.h"
#include "cache.h"
#include "check.h"
#include "jsonl.h"
#include "options.h"
#include "pattern.h"

#define KERNEL(name) extern const struct kernel kernel_##name;
#include "kernels/list.h"
#undef KERNEL

static const struct kernel *const kernels[] = {
#define KERNEL(name) &kernel_##name,
#include "kernels/list.h"
#undef KERNEL
};

const struct kernel *kernel_find(const char *name)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (strcmp(kernels[i]->name, name) == 0)
            return kernels[i];
    return NULL;
}

const struct kernel *kernel_at(size_t index)
{
    return index < sizeof kernels / sizeof kernels[0] ? kernels[index] : NULL;
}

const char *const timed_by_names[] = {[TIMED_BY_ORIGIN] = "origin", [TIMED_BY_MAX] = "max"};

const char *const kernel_family_names[] = {
    [FAMILY_POINT_TO_POINT] = "point-to-point",
    [FAMILY_ONE_SIDED] = "one-sided",
    [FAMILY_MANY_RANK] = "many-rank",
    [FAMILY_COLLECTIVE] = "collective",
    [FAMILY_HALO] = "halo",
    [FAMILY_APPLICATION] = "application",
    [FAMILY_HEALTH] = "health",
};

const char *const sample_kind_names[] = {[SAMPLE_BATCH] = "batch", [SAMPLE_CALL] = "call"};

enum sample_kind kernel_sample_kind(const struct kernel *k)
{
    return k->family == FAMILY_COLLECTIVE ? SAMPLE_CALL : SAMPLE_BATCH;
}

const char *const param_kind_names[] = {
    [PARAM_CHOICE] = "choice", [PARAM_RANK] = "rank",     [PARAM_COUNT] = "count",
    [PARAM_NUMBER] = "number", [PARAM_EXTENT] = "extent", [PARAM_GRID] = "grid",
    [PARAM_PATH] = "path",     [PARAM_SWITCH] = "switch", [PARAM_LAYOUT] = "layout",
    [PARAM_PARTS] = "parts",   [PARAM_EPOCH] = "epoch",   [PARAM_ALGORITHM] = "algorithm",
};

const char *const switch_choices[] = {"yes", "no", NULL};

const struct kparam *kernel_param(const struct kernel *k, const char *name)
{
    for (const struct kparam *p = k->params; p && p->name; p++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

int kparam_choice_index(const struct kparam *p, const char *value)
{
    for (int i = 0; p->choices && p->choices[i]; i++)
        if (strcmp(p->choices[i], value) == 0)
            return i;
    return -1;
}

bool kcase_forced(const struct kcase *c)
{
    const struct kparam *p = kernel_param(c->cfg->kernel, "algorithm");
    return p && p->kind == PARAM_ALGORITHM && kcase_param(c, "algorithm");
}

const char *const *kparam_choices(const struct kernel *k, const struct kparam *p)
{
    static const char *const none[] = {NULL};
    if (p->kind != PARAM_ALGORITHM)
        return p->choices;
    const struct algorithms *a = algorithms_of(k->name);
    return a->n ? (const char *const *)a->names : none;
}

const char *const p2p_dtype_names[] = {"char", "int", "long", "float", "double", NULL};
const struct element p2p_dtype_elements[] = {
    {"char", sizeof(char)},
    {"int", sizeof(int)},
    {"long", sizeof(long)},
    {"float", sizeof(float)},
    {"double", sizeof(double)}};
static MPI_Datatype p2p_dtype(int index)
{
    const MPI_Datatype types[] = {MPI_CHAR, MPI_INT, MPI_LONG, MPI_FLOAT, MPI_DOUBLE};
    return types[index];
}

/* The element (MPI_BYTE without --param dtype) and --param layout's
 * vector:STRIDE:BLOCK (block 0: contiguous). Python has checked both. */
static struct p2p_shape {
    MPI_Datatype element;
    size_t element_bytes;
    int block, stride;
} p2p_shape(const struct kcase *c)
{
    struct p2p_shape s = {MPI_BYTE, 1, 0, 0};
    const struct kernel *k = c->cfg->kernel;
    if (kernel_param(k, "dtype") && kcase_param(c, "dtype")) {
        int d = kcase_param_choice(c, "dtype");
        s.element = p2p_dtype(d);
        s.element_bytes = p2p_dtype_elements[d].bytes;
    }
    const char *layout = kernel_param(k, "layout") ? kcase_param(c, "layout") : NULL;
    if (layout && strcmp(layout, "contiguous") != 0 &&
        (sscanf(layout, "vector:%d:%d", &s.stride, &s.block) != 2 || s.block < 1 ||
         s.stride < s.block))
        die("--param layout=%s: give contiguous or vector:STRIDE:BLOCK with "
            "STRIDE >= BLOCK >= 1",
            layout);
    return s;
}

const char *p2p_unsupported(const struct kcase *c)
{
    static char reason[160];
    struct p2p_shape s = p2p_shape(c);
    if (s.element == MPI_BYTE && !s.block)
        return NULL;
    size_t unit = s.element_bytes * (size_t)(s.block ? s.block : 1);
    if (c->bytes % unit) {
        snprintf(reason, sizeof reason, "%zu bytes is not a whole number of %zu-byte %s", c->bytes,
                 unit, s.block ? "blocks" : "elements");
        return reason;
    }
    if (c->bytes > INT_MAX)
        return "a typed or vector message over INT_MAX bytes: only bytes go in large counts";
    return NULL;
}

void p2p_init(struct p2p *b, const struct kcase *c, bool sends, int slots)
{
    struct p2p_shape s = p2p_shape(c);
    size_t extent = c->bytes;
    if (s.element == MPI_BYTE && !s.block) {
        b->type = msg_type_create(c->bytes);
    } else {
        b->type = msg_type_layout(c->bytes, s.element, s.element_bytes, s.block, s.stride);
        if (s.block && c->bytes) { /* the last block ends the extent */
            size_t blocks = c->bytes / (s.element_bytes * (size_t)s.block);
            extent = ((blocks - 1) * (size_t)s.stride + (size_t)s.block) * s.element_bytes;
        }
    }
    ((struct kcase *)c)->layout = (struct layout){
        s.block * s.element_bytes, (size_t)s.stride * s.element_bytes};
    b->c = c;
    b->sends = sends;
    b->stride = extent ? buffer_round_pages(extent) : buffer_page_size();
    /* a set: the send buffer, then the receive slots */
    b->set_bytes = b->stride * ((size_t)sends + (size_t)slots);
    b->set_count = cache_sets(c, b->set_bytes);
    b->sets = b->set_bytes ? buffer_alloc(b->set_bytes * b->set_count) : NULL;
    ((struct kcase *)c)->working_set = b->set_bytes * b->set_count;
}

static unsigned char *p2p_set(const struct p2p *b, uint64_t iteration)
{
    return b->sets + b->set_bytes * cache_set(iteration, b->set_count);
}

void *p2p_send_buf(const struct p2p *b)
{
    return b->sends ? p2p_set(b, b->c->iteration) : NULL;
}

void *p2p_recv_buf_at(const struct p2p *b, int slot, uint64_t iteration)
{
    return p2p_set(b, iteration) + b->stride * ((size_t)b->sends + (size_t)slot);
}

void *p2p_recv_buf(const struct p2p *b, int slot)
{
    return p2p_recv_buf_at(b, slot, b->c->iteration);
}

void p2p_free(struct p2p *b)
{
    msg_type_free(&b->type);
    buffer_free(b->sets);
}

int window_limited(const struct kcase *c)
{
    long long window = c->cfg->window;
    if (c->bytes && (size_t)window > WINDOW_BYTES_MAX / c->bytes)
        window = (long long)(WINDOW_BYTES_MAX / c->bytes);
    return window < 1 ? 1 : (int)window;
}

const char *const recv_buffer_kinds[] = {"one", "window", NULL};

int recv_slots(const struct kcase *c)
{
    return c->validate || kcase_param_choice(c, "recv_buffers") == 1 ? c->window : 1;
}

void recv_slots_report(struct jsonl *j, int slots)
{
    jsonl_str(j, "recv_buffers", slots == 1 ? "one" : "window");
    jsonl_int(j, "recv_buffer_count", slots);
}

/* A PARAM_PARTS value that does not split c->bytes into equal parts (or is
 * no MPI int count of them), as a reason; NULL: it does, or is not given. */
static const char *parts_unsupported(const struct kcase *c, const struct kparam *p)
{
    static char reason[128];
    const char *value = kcase_param(c, p->name);
    long long parts = 0;
    char end;
    if (!value || (sscanf(value, "%lld%c", &parts, &end) == 1 && parts >= 1 && parts <= INT_MAX &&
                   c->bytes % (size_t)parts == 0))
        return NULL;
    snprintf(reason, sizeof reason, "%zu bytes do not split into %lld equal %s", c->bytes, parts,
             p->name);
    return reason;
}

const char *kcase_unsupported(const struct kcase *c)
{
    const struct kernel *k = c->cfg->kernel;
    const char *reason = k->unsupported ? k->unsupported(c) : NULL;
    for (const struct kparam *p = k->params; !reason && p && p->name; p++)
        if (p->kind == PARAM_PARTS)
            reason = parts_unsupported(c, p);
    return reason;
}

const char *kcase_param(const struct kcase *c, const char *key)
{
    const struct kparam *p = kernel_param(c->cfg->kernel, key);
    if (!p)
        die("kernel %s reads --param %s, which it does not declare", c->cfg->kernel->name, key);
    const char *value = p->def;
    for (size_t i = 0; i < c->cfg->params.n; i++)
        if (strcmp(c->cfg->params.v[i].key, key) == 0)
            value = c->cfg->params.v[i].value; /* the last one given wins */
    if (c->cfg->each.key && strcmp(c->cfg->each.key, key) == 0 && c->variant)
        value = c->variant;
    return value;
}

int kcase_param_choice(const struct kcase *c, const char *key)
{
    const char *value = kcase_param(c, key);
    int index = value ? kparam_choice_index(kernel_param(c->cfg->kernel, key), value) : -1;
    if (index < 0)
        die("--param %s=%s: kernel %s has no such choice", key, value ? value : "",
            c->cfg->kernel->name);
    return index;
}

bool kcase_param_switch(const struct kcase *c, const char *key)
{
    if (!kernel_param(c->cfg->kernel, key))
        return false;
    const char *value = kcase_param(c, key);
    return value && strcmp(value, "yes") == 0;
}

/* Contiguous: one block of every byte. A vector layout: block k of the
 * payload at k x stride, with a pattern of its own (key iteration x blocks
 * + k), so a block received into the wrong place fails the check. */
static size_t payload_blocks(const struct kcase *c, size_t *block)
{
    bool vector = c->layout.block && c->bytes;
    *block = vector ? c->layout.block : c->bytes;
    return vector ? c->bytes / c->layout.block : 1;
}

void payload_fill(const struct kcase *c, void *buf)
{
    if (!c->validate)
        return;
    size_t block, blocks = payload_blocks(c, &block);
    for (size_t k = 0; k < blocks; k++)
        pattern_fill((char *)buf + k * c->layout.stride, block, c->iteration * blocks + k,
                     c->rank);
}

void payload_check(const struct kcase *c, const void *buf, int source_rank)
{
    if (!c->validate)
        return;
    struct mismatch m = {.iteration = c->iteration, .source_rank = source_rank};
    size_t block, blocks = payload_blocks(c, &block);
    for (size_t k = 0; k < blocks; k++)
        if (pattern_find_mismatch((const char *)buf + k * c->layout.stride, block,
                                  c->iteration * blocks + k, source_rank, &m.offset, &m.expected,
                                  &m.got)) {
            m.offset += k * c->layout.stride;
            die_mismatch(&m);
        }
}
