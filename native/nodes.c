#include "nodes.h"

#include <stdlib.h>

#include "check.h"
#include "jsonl.h"

int nodes_ppn(const struct kcase *c)
{
    return atoi(kcase_param(c, "ppn"));
}

int nodes_count(const struct kcase *c)
{
    return c->ranks / nodes_ppn(c);
}

const char *nodes_unsupported(const struct kcase *c)
{
    if (c->ranks % nodes_ppn(c))
        return "the ranks are not whole nodes: give --np a multiple of ppn";
    return nodes_count(c) < 2 ? "a node-level kernel needs at least 2 nodes" : NULL;
}

int nodes_rank(const struct kcase *c, int node)
{
    return node * nodes_ppn(c) + c->rank % nodes_ppn(c);
}

void nodes_report_peers(struct kcase *c, struct jsonl *j, int peer)
{
    int *all = xcalloc((size_t)c->ranks, sizeof *all);
    CHECK_MPI(MPI_Gather(&peer, 1, MPI_INT, all, 1, MPI_INT, 0, c->comm));
    if (j) {
        jsonl_open(j, "peers", '[');
        for (int r = 0; r < c->ranks; r++)
            jsonl_int(j, NULL, all[r]);
        jsonl_close(j, ']');
    }
    free(all);
}
