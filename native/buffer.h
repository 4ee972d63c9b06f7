/* Message buffers: page-aligned and pre-faulted, so that neither page faults
 * nor first-touch placement land in a timed iteration. */
#ifndef COMMSCOPE_BUFFER_H
#define COMMSCOPE_BUFFER_H

#include <stddef.h>

/* At least one page, so size 0 still yields a valid buffer; every page
 * written. Dies on failure. */
void *buffer_alloc(size_t bytes);
void buffer_free(void *buffer);
/* The system's page size, at least 4 KiB. */
size_t buffer_page_size(void);
/* bytes rounded up to whole pages (0 stays 0): the stride that keeps each of
 * several buffers in one allocation page-aligned. */
size_t buffer_round_pages(size_t bytes);

#endif
