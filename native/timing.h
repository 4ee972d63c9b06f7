/* The one timing loop (docs/native.md, "One timing loop"). */
#ifndef COMMSCOPE_TIMING_H
#define COMMSCOPE_TIMING_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "msg.h"
#include "timer.h"

struct config;
struct kcase;

/* Called by a kernel's run_once at the end of phase `phase` (an index into
 * its phases list): the loop reads the clock and adds the time since the
 * previous mark (or the sample's start) to that phase. */
void timing_phase_end(struct kcase *c, int phase);

/* Collective: runs one case of cfg->kernel and, on rank 0, writes its
 * case_start and then its case or skip record. True if measured. */
bool timing_run_case(const struct config *cfg, const struct timer_info *timer,
                     enum send_mode mode, size_t bytes, MPI_Comm comm);

#endif
