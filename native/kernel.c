#include "kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const char *const timed_by_names[] = {[TIMED_BY_ORIGIN] = "origin",
                                      [TIMED_BY_MAX] = "max"};

const char *const kernel_family_names[] = {
    [FAMILY_POINT_TO_POINT] = "point-to-point", [FAMILY_ONE_SIDED] = "one-sided",
    [FAMILY_MANY_RANK] = "many-rank",           [FAMILY_COLLECTIVE] = "collective",
    [FAMILY_HALO] = "halo",                     [FAMILY_APPLICATION] = "application",
};

const char *const param_kind_names[] = {
    [PARAM_CHOICE] = "choice", [PARAM_RANK] = "rank",     [PARAM_COUNT] = "count",
    [PARAM_NUMBER] = "number", [PARAM_EXTENT] = "extent", [PARAM_GRID] = "grid",
    [PARAM_PATH] = "path",
};

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

void p2p_init(struct p2p *b, const struct kcase *c, bool sends, int slots)
{
    b->type = msg_type_create(c->bytes);
    b->c = c;
    b->sends = sends;
    b->stride = c->bytes ? buffer_round_pages(c->bytes) : buffer_page_size();
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

static const char *const recv_buffer_kinds[] = {"one", "window", NULL};
const struct kparam recv_buffers_params[] = {
    {"recv_buffers", PARAM_CHOICE, "one",
     "receive into one buffer, as the reference suites do, or one per message of the "
     "window (--validate: one per message)", recv_buffer_kinds, NULL},
    {0},
};

int recv_slots(const struct kcase *c)
{
    return c->validate || kcase_param_choice(c, "recv_buffers") == 1 ? c->window : 1;
}

void recv_slots_report(struct jsonl *j, int slots)
{
    jsonl_str(j, "recv_buffers", slots == 1 ? "one" : "window");
    jsonl_int(j, "recv_buffer_count", slots);
}

const char *kcase_param(const struct kcase *c, const char *key)
{
    const struct kparam *p = kernel_param(c->cfg->kernel, key);
    if (!p)
        die("kernel %s reads --param %s, which it does not declare",
            c->cfg->kernel->name, key);
    const char *value = p->def;
    for (size_t i = 0; i < c->cfg->params.n; i++)
        if (strcmp(c->cfg->params.v[i].key, key) == 0)
            value = c->cfg->params.v[i].value; /* the last one given wins */
    return value;
}

int kcase_param_choice(const struct kcase *c, const char *key)
{
    const char *value = kcase_param(c, key);
    int index = value ? kparam_choice_index(kernel_param(c->cfg->kernel, key), value) : -1;
    if (index < 0)
        die("--param %s=%s: kernel %s has no such choice", key,
            value ? value : "", c->cfg->kernel->name);
    return index;
}

void payload_fill(const struct kcase *c, void *buf)
{
    if (c->validate)
        pattern_fill(buf, c->bytes, c->iteration, c->rank);
}

void payload_check(const struct kcase *c, const void *buf, int source_rank)
{
    if (!c->validate)
        return;
    struct mismatch m = {.iteration = c->iteration, .source_rank = source_rank};
    if (pattern_find_mismatch(buf, c->bytes, c->iteration, source_rank,
                              &m.offset, &m.expected, &m.got))
        die_mismatch(&m);
}
