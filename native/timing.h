/* The one timing loop (docs/native.md, "One timing loop"). */
#ifndef COMMSCOPE_TIMING_H
#define COMMSCOPE_TIMING_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "msg.h"
#include "timer.h"

struct config;

/* Collective: runs one case of cfg->kernel and, on rank 0, writes its
 * case_start and then its case or skip record. True if measured. variant:
 * the case's value of --each's parameter (NULL: not given). */
bool timing_run_case(const struct config *cfg, const struct timer_info *timer, const char *variant,
                     enum send_mode mode, size_t bytes, MPI_Comm comm);

#endif
