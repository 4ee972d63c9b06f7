#include "kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
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

static size_t page_size(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 4096 ? (size_t)page : 4096;
}

void *buffer_alloc(size_t bytes)
{
    size_t align = page_size();
    size_t size = bytes < align ? align : bytes;
    void *buffer = NULL;
    if (posix_memalign(&buffer, align, size) != 0)
        die("cannot allocate %zu bytes", size);
    memset(buffer, 0, size);
    return buffer;
}

void buffer_free(void *buffer)
{
    free(buffer);
}

void p2p_init(struct p2p *b, const struct kcase *c, bool sends, int slots)
{
    size_t page = page_size();
    b->type = msg_type_create(c->bytes);
    b->send_buf = sends ? buffer_alloc(c->bytes) : NULL;
    b->stride = c->bytes ? (c->bytes + page - 1) / page * page : page;
    b->recv_bufs = slots ? buffer_alloc(b->stride * (size_t)slots) : NULL;
}

void *p2p_recv_buf(const struct p2p *b, int slot)
{
    return b->recv_bufs + b->stride * (size_t)slot;
}

void p2p_free(struct p2p *b)
{
    msg_type_free(&b->type);
    buffer_free(b->send_buf);
    buffer_free(b->recv_bufs);
}

#define WINDOW_BYTES ((size_t)1 << 30)

int window_limited(const struct kcase *c)
{
    long long window = c->cfg->window;
    if (c->bytes && (size_t)window > WINDOW_BYTES / c->bytes)
        window = (long long)(WINDOW_BYTES / c->bytes);
    return window < 1 ? 1 : (int)window;
}

const char *kcase_param(const struct kcase *c, const char *key,
                        const char *fallback)
{
    const char *value = fallback;
    for (size_t i = 0; i < c->cfg->params.n; i++)
        if (strcmp(c->cfg->params.v[i].key, key) == 0)
            value = c->cfg->params.v[i].value; /* the last one given wins */
    return value;
}

int kcase_param_choice(const struct kcase *c, const char *key,
                       const char *const *values)
{
    const char *value = kcase_param(c, key, values[0]);
    for (int i = 0; values[i]; i++)
        if (strcmp(values[i], value) == 0)
            return i;
    char accepted[256] = "";
    size_t used = 0;
    for (int i = 0; values[i] && used < sizeof accepted; i++) {
        int n = snprintf(accepted + used, sizeof accepted - used, "%s%s",
                         i ? ", " : "", values[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    die("--param %s=%s: kernel %s accepts %s", key, value,
        c->cfg->kernel->name, accepted);
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
