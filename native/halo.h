/* Halo exchange on a 2D periodic process torus: what the `halo` kernel times
 * and what the advection2d app computes with. One module so that the kernel
 * measures exactly the exchange the application performs.
 *
 * Layout (the same on every rank): a tile of nx x ny doubles, row-major with
 * x fastest, surrounded by ghost cells of width ghost[side] on each side. A
 * row is contiguous; a column is an MPI_Type_vector. Element (i, j) of the
 * interior, 0 <= i < nx, 0 <= j < ny, is at
 *     field[(j + ghost[HALO_SOUTH]) * halo_stride(t) + i + ghost[HALO_WEST]].
 * Only the four faces are exchanged, not corners: 5-point-type stencils
 * (dimension by dimension, as the upwind scheme) need no corner data.
 *
 * After halo_end, the ghost cells of width ghost[HALO_WEST] on the west side
 * hold the easternmost ghost[HALO_WEST] interior columns of the west
 * neighbour, and likewise for every side. A width of 0 moves nothing across
 * that face. */
#ifndef COMMSCOPE_HALO_H
#define COMMSCOPE_HALO_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

enum halo_side { HALO_WEST, HALO_EAST, HALO_SOUTH, HALO_NORTH };
enum halo_method { HALO_P2P, HALO_SENDRECV, HALO_NEIGHBOR, HALO_RMA };
/* "p2p", "sendrecv", "neighbor", "rma", NULL: indexed by enum halo_method. */
extern const char *const halo_methods[];

/* The process torus. dims[0] runs along x (west-east), dims[1] along y. */
struct torus {
    MPI_Comm comm; /* periodic Cartesian communicator, reorder = 0 */
    int dims[2];
    int coords[2];
    int neighbour[4]; /* rank in comm, by enum halo_side */
};

/* dims entries of 0 are chosen by MPI_Dims_create. Collective over parent.
 * Dies with a clear message when dims[0] * dims[1] != size of parent. */
void torus_create(MPI_Comm parent, const int dims[2], struct torus *t);
void torus_free(struct torus *t);

struct tile {
    int nx, ny;   /* interior points of this rank */
    int ghost[4]; /* width by enum halo_side; each <= the interior it copies */
};

static inline size_t halo_stride(const struct tile *t)
{
    return (size_t)t->nx + (size_t)t->ghost[HALO_WEST] + (size_t)t->ghost[HALO_EAST];
}
/* Doubles in the whole array, ghosts included. */
size_t halo_field_len(const struct tile *t);

struct halo; /* datatypes, requests and, for rma, the window: opaque */

#define HALO_ALL_FACES 0xfu /* faces: a bit (1u << side) per side */

/* Collective over t->comm. `field` (halo_field_len doubles, the caller's)
 * and t->comm must stay valid until halo_free; with HALO_RMA the field is
 * exposed in a window.
 * Only the ghost cells of the sides in `faces` are filled (the others keep
 * their place in the layout): a dimension-split solver exchanges x faces
 * before its x sweep and y faces before its y sweep. */
struct halo *halo_create(const struct torus *t, const struct tile *tile, double *field,
                         enum halo_method method, unsigned faces);
/* Start the exchange. Between halo_begin and halo_end the caller may read
 * the field and write only cells that no neighbour reads (interior cells
 * further than the ghost widths from every face) and no ghost cells. For
 * sendrecv and neighbor the whole exchange happens in halo_begin. */
void halo_begin(struct halo *h);
void halo_end(struct halo *h);
void halo_free(struct halo *h);
/* Payload bytes this rank sends per exchange (ghost cells it fills on its
 * neighbours, times 8). */
uint64_t halo_bytes_sent(const struct halo *h);

#endif
