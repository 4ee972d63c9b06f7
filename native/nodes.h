/* The node-level kernels (pairs, shift: `commscope health`): ranks grouped
 * into nodes of --param ppn consecutive ranks, as the launcher fills hosts
 * slot by slot, and local rank l of one node paired with local rank l of the
 * other. The node count comes from the parameter, not from shared memory,
 * because the hosts of a test cluster share one machine's memory. */
#ifndef COMMSCOPE_NODES_H
#define COMMSCOPE_NODES_H

#include "kernel.h"

#define NODES_PPN_PARAM                                                         \
    {.name = "ppn", PARAM_COUNT, "1", "ranks per node: rank r is on node r/ppn, " \
     "and local rank l of one node talks to local rank l of the other"}

int nodes_ppn(const struct kcase *c);
int nodes_count(const struct kcase *c);
/* Why the case's ranks are not whole nodes of ppn ranks (at least two), or NULL. */
const char *nodes_unsupported(const struct kcase *c);
/* Local rank l of `node`. */
int nodes_rank(const struct kcase *c, int node);
/* "peers": every rank's peer this case (-1: none), gathered to the record. */
void nodes_report_peers(struct kcase *c, struct jsonl *j, int peer);

#endif
