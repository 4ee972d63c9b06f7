#include "buffer.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

size_t buffer_page_size(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 4096 ? (size_t)page : 4096;
}

size_t buffer_round_pages(size_t bytes)
{
    size_t page = buffer_page_size();
    return (bytes + page - 1) / page * page;
}

void *buffer_alloc(size_t bytes)
{
    size_t align = buffer_page_size();
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
