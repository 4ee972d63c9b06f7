/* The halo exchange of native/halo.h: the process torus, the face
 * datatypes and the four methods (docs/kernels-halo.md). */
#include "halo.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

const char *const halo_methods[] = {"p2p", "sendrecv", "neighbor", "rma", NULL};
static const char *const side_names[] = {"west", "east", "south", "north"};

/* Every rank has the same faces mask and layout, so "fill ghost side s"
 * is one message per side: each rank sends to neighbour[opposite(s)] and
 * receives from neighbour[s]. The message's tag is s, which tells the two
 * messages of a dimension apart when both neighbours are the same rank
 * (2 wide) or this rank (1 wide). */

static enum halo_side opposite(enum halo_side s)
{
    return (enum halo_side)(s ^ 1); /* WEST<->EAST, SOUTH<->NORTH */
}

struct halo {
    MPI_Comm comm;
    int neighbour[4];
    double *field;
    enum halo_method method;
    bool moves[4];           /* side in faces, with a non-zero width */
    MPI_Datatype strip[4];   /* ghost side s, and the strip that fills it */
    MPI_Aint ghost_at[4];    /* offsets in doubles: ghost side s */
    MPI_Aint source_at[4];   /* the strip a neighbour's ghost s copies */
    uint64_t bytes_sent;
    MPI_Request requests[8]; /* p2p: receive 2s, send 2s+1 for side s */
    MPI_Win win;             /* rma */
};

/* A bad grid or tile that every rank finds alike: one error record, from
 * rank 0; the others wait in a barrier it never joins until MPI_Abort ends
 * the job. */
static _Noreturn void die_once(MPI_Comm comm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static _Noreturn void die_once(MPI_Comm comm, const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    int rank;
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    if (rank != 0)
        CHECK_MPI(MPI_Barrier(comm));
    die("%s", message);
}

void torus_create(MPI_Comm parent, const int dims[2], struct torus *t)
{
    int size, rank;
    CHECK_MPI(MPI_Comm_size(parent, &size));
    int fixed = (dims[0] ? dims[0] : 1) * (dims[1] ? dims[1] : 1);
    bool fits = dims[0] >= 0 && dims[1] >= 0 &&
                (dims[0] && dims[1] ? fixed == size : size % fixed == 0);
    if (!fits)
        die_once(parent,
                 "process grid %dx%d does not fit %d ranks (0 lets "
                 "MPI choose a dimension)",
                 dims[0], dims[1], size);
    t->dims[0] = dims[0];
    t->dims[1] = dims[1];
    CHECK_MPI(MPI_Dims_create(size, 2, t->dims));
    static const int periodic[2] = {1, 1};
    CHECK_MPI(MPI_Cart_create(parent, 2, t->dims, periodic, 0, &t->comm));
    CHECK_MPI(MPI_Comm_rank(t->comm, &rank));
    CHECK_MPI(MPI_Cart_coords(t->comm, rank, 2, t->coords));
    CHECK_MPI(MPI_Cart_shift(t->comm, 0, 1, &t->neighbour[HALO_WEST], &t->neighbour[HALO_EAST]));
    CHECK_MPI(MPI_Cart_shift(t->comm, 1, 1, &t->neighbour[HALO_SOUTH], &t->neighbour[HALO_NORTH]));
}

void torus_free(struct torus *t)
{
    CHECK_MPI(MPI_Comm_free(&t->comm));
}

size_t halo_field_len(const struct tile *t)
{
    return halo_stride(t) *
           ((size_t)t->ny + (size_t)t->ghost[HALO_SOUTH] + (size_t)t->ghost[HALO_NORTH]);
}

/* Where ghost side s starts, and the interior strip of the same width
 * that a neighbour's ghost s copies: the strip along the opposite side
 * (a west ghost holds its west neighbour's easternmost columns). */
static void place(struct halo *h, const struct tile *t)
{
    MPI_Aint stride = (MPI_Aint)halo_stride(t);
    MPI_Aint w = t->ghost[HALO_WEST], s = t->ghost[HALO_SOUTH];
    MPI_Aint first_row = s * stride, nx = t->nx, ny = t->ny;
    h->ghost_at[HALO_WEST] = first_row;
    h->ghost_at[HALO_EAST] = first_row + w + nx;
    h->ghost_at[HALO_SOUTH] = w;
    h->ghost_at[HALO_NORTH] = (s + ny) * stride + w;
    h->source_at[HALO_WEST] = first_row + w + nx - t->ghost[HALO_WEST];
    h->source_at[HALO_EAST] = first_row + w;
    h->source_at[HALO_SOUTH] = (s + ny - t->ghost[HALO_SOUTH]) * stride + w;
    h->source_at[HALO_NORTH] = first_row + w;
}

/* A strip of width g: g whole columns (ny blocks of g, a vector over the
 * rows), or g rows of nx contiguous doubles each. */
static MPI_Datatype strip_type(const struct tile *t, enum halo_side side)
{
    int g = t->ghost[side];
    int stride = (int)halo_stride(t);
    MPI_Datatype type;
    if (side == HALO_WEST || side == HALO_EAST)
        CHECK_MPI(MPI_Type_vector(t->ny, g, stride, MPI_DOUBLE, &type));
    else
        CHECK_MPI(MPI_Type_vector(g, t->nx, stride, MPI_DOUBLE, &type));
    CHECK_MPI(MPI_Type_commit(&type));
    return type;
}

struct halo *halo_create(const struct torus *t, const struct tile *tile, double *field,
                         enum halo_method method, unsigned faces)
{
    if (tile->nx < 1 || tile->ny < 1)
        die_once(t->comm,
                 "halo tile %dx%d: give at least one interior "
                 "point per dimension",
                 tile->nx, tile->ny);
    if (halo_field_len(tile) > (size_t)INT_MAX)
        die_once(t->comm,
                 "halo tile %dx%d with its ghosts exceeds INT_MAX "
                 "doubles (MPI int strides and counts)",
                 tile->nx, tile->ny);
    for (int s = 0; s < 4; s++) {
        int across = s == HALO_WEST || s == HALO_EAST ? tile->nx : tile->ny;
        if (tile->ghost[s] < 0 || tile->ghost[s] > across)
            die_once(t->comm,
                     "halo width %d on the %s side: give 0 to %d "
                     "(the interior points it copies)",
                     tile->ghost[s], side_names[s], across);
    }
    struct halo *h = xcalloc(1, sizeof *h);
    h->comm = t->comm;
    h->field = field;
    h->method = method;
    h->win = MPI_WIN_NULL;
    place(h, tile);
    for (int s = 0; s < 4; s++) {
        h->neighbour[s] = t->neighbour[s];
        h->moves[s] = ((faces >> s) & 1u) && tile->ghost[s] > 0;
        h->strip[s] = h->moves[s] ? strip_type(tile, (enum halo_side)s) : MPI_DATATYPE_NULL;
        size_t along = s == HALO_WEST || s == HALO_EAST ? (size_t)tile->ny : (size_t)tile->nx;
        if (h->moves[s])
            h->bytes_sent += (uint64_t)tile->ghost[s] * along * sizeof(double);
        h->requests[2 * s] = h->requests[2 * s + 1] = MPI_REQUEST_NULL;
    }
    if (method == HALO_RMA)
        CHECK_MPI(MPI_Win_create(field, (MPI_Aint)(halo_field_len(tile) * sizeof(double)),
                                 sizeof(double), MPI_INFO_NULL, h->comm, &h->win));
    return h;
}

/* MPI_Neighbor_alltoallw, with the Cartesian neighbour order (MPI 3.1,
 * 7.6: per dimension the negative, then the positive direction), which is
 * enum halo_side's. Block d goes to / comes from neighbour d: the strip
 * sent west fills that neighbour's east ghost; the block received from the
 * west fills the west ghost. Sides not moving have zero counts. */
static void neighbor_exchange(struct halo *h)
{
    int send_counts[4], recv_counts[4];
    MPI_Aint send_at[4], recv_at[4];
    MPI_Datatype send_types[4], recv_types[4];
    for (int d = 0; d < 4; d++) {
        int filled = opposite((enum halo_side)d);
        send_counts[d] = h->moves[filled];
        send_at[d] = h->source_at[filled] * (MPI_Aint)sizeof(double);
        send_types[d] = h->moves[filled] ? h->strip[filled] : MPI_DOUBLE;
        recv_counts[d] = h->moves[d];
        recv_at[d] = h->ghost_at[d] * (MPI_Aint)sizeof(double);
        recv_types[d] = h->moves[d] ? h->strip[d] : MPI_DOUBLE;
    }
    CHECK_MPI(MPI_Neighbor_alltoallw(h->field, send_counts, send_at, send_types, h->field,
                                     recv_counts, recv_at, recv_types, h->comm));
}

void halo_begin(struct halo *h)
{
    double *f = h->field;
    if (h->method == HALO_NEIGHBOR) {
        neighbor_exchange(h);
        return;
    }
    /* rma: the fence opens the epoch in which neighbours may write our
     * ghosts; no assertions, so the caller may have stored to the field
     * since the last exchange and no epoch is assumed already closed. */
    if (h->method == HALO_RMA)
        CHECK_MPI(MPI_Win_fence(0, h->win));
    /* p2p: every receive is posted before any send. */
    if (h->method == HALO_P2P)
        for (int s = 0; s < 4; s++)
            if (h->moves[s])
                CHECK_MPI(MPI_Irecv(f + h->ghost_at[s], 1, h->strip[s], h->neighbour[s], s,
                                    h->comm, &h->requests[2 * s]));
    for (int s = 0; s < 4; s++) {
        if (!h->moves[s])
            continue;
        int to = h->neighbour[opposite((enum halo_side)s)];
        const double *strip = f + h->source_at[s];
        switch (h->method) {
        case HALO_P2P:
            CHECK_MPI(MPI_Isend(strip, 1, h->strip[s], to, s, h->comm, &h->requests[2 * s + 1]));
            break;
        case HALO_SENDRECV:
            CHECK_MPI(MPI_Sendrecv(strip, 1, h->strip[s], to, s, f + h->ghost_at[s], 1,
                                   h->strip[s], h->neighbour[s], s, h->comm, MPI_STATUS_IGNORE));
            break;
        case HALO_RMA:
            /* Same layout everywhere: the target's ghost s is at our
             * ghost_at[s] (disp_unit: one double). */
            CHECK_MPI(MPI_Put(strip, 1, h->strip[s], to, h->ghost_at[s], 1, h->strip[s], h->win));
            break;
        case HALO_NEIGHBOR:
            break;
        }
    }
}

void halo_end(struct halo *h)
{
    if (h->method == HALO_P2P)
        CHECK_MPI(MPI_Waitall(8, h->requests, MPI_STATUSES_IGNORE));
    else if (h->method == HALO_RMA)
        CHECK_MPI(MPI_Win_fence(0, h->win));
}

void halo_free(struct halo *h)
{
    if (!h)
        return;
    if (h->win != MPI_WIN_NULL)
        CHECK_MPI(MPI_Win_free(&h->win));
    for (int s = 0; s < 4; s++)
        if (h->strip[s] != MPI_DATATYPE_NULL)
            CHECK_MPI(MPI_Type_free(&h->strip[s]));
    free(h);
}

uint64_t halo_bytes_sent(const struct halo *h)
{
    return h->bytes_sent;
}
