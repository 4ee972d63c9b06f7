/* halo: one exchange of the four faces of a tile on a periodic 2D process
 * torus (native/halo.h), by --param method=p2p|sendrecv|neighbor|rma, with
 * --param tile=NXxNY interior points per rank, halo=W ghost width on every
 * side, grid=PXxPY|auto. The case's bytes are what this rank sends per
 * exchange, which Python derives from tile and halo (kernels.py); set-up
 * refuses any other. One iteration is halo_begin + halo_end
 * (docs/kernels-halo.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "halo.h"
#include "jsonl.h"
#include "kernel.h"

/* clang-format off */
static const struct kparam halo_params[] = {
    {.name = "tile", PARAM_EXTENT, "256x256", "interior points per rank", NULL, NULL},
    {.name = "halo", PARAM_COUNT, "1",
     "ghost width on every side, up to the tile's smaller side", NULL, NULL},
    {.name = "method", PARAM_CHOICE, "p2p",
     "Irecv/Isend, Sendrecv per face, Neighbor_alltoallw, or Put between "
     "fences", halo_methods, NULL},
    {.name = "grid", PARAM_GRID, "auto",
     "process grid PXxPY with PX*PY = ranks, or auto (MPI_Dims_create)", NULL,
     NULL},
    {0},
};
/* clang-format on */
static const char *const side_names[] = {"west", "east", "south", "north"};

/* --validate: a cell's value is its global index and the iteration,
 * v = i + GX (j + GY (iteration mod cycle)), an integer below 2^53 and so
 * exact in a double. The global index names the owner too (coordinates
 * i / nx, j / ny): a ghost from the wrong rank, the wrong offset or the
 * previous exchange has another value. Ghosts are spoiled with -1, which
 * no cell holds. */
#define EXACT_DOUBLE 9007199254740992.0 /* 2^53 */
#define SPOILED (-1.0)

struct halo_kernel {
    struct torus torus;
    struct tile tile;
    double *field;
    struct halo *exchange;
    double gx, gy, cycle; /* global points per dimension; iterations encoded */
};

/* "AxB" with both positive, or false. */
static bool parse_pair(const char *text, int pair[2])
{
    char end;
    return sscanf(text, "%dx%d%c", &pair[0], &pair[1], &end) == 2 && pair[0] > 0 && pair[1] > 0;
}

/* The parameters, each checked; a bad value ends the run with an error
 * record naming it (Python checks them first, so only a hand-written
 * native command line gets here). */
static void halo_read_params(const struct kcase *c, int tile[2], int *width, int grid[2])
{
    const char *t = kcase_param(c, "tile");
    if (!parse_pair(t, tile))
        die("--param tile=%s: give NXxNY interior points, e.g. 256x256", t);
    const char *w = kcase_param(c, "halo");
    char end;
    if (sscanf(w, "%d%c", width, &end) != 1 || *width < 1 || *width > tile[0] || *width > tile[1])
        die("--param halo=%s: give a ghost width from 1 to the tile's "
            "smaller side",
            w);
    const char *g = kcase_param(c, "grid");
    grid[0] = grid[1] = 0;
    if (strcmp(g, "auto") != 0 && !parse_pair(g, grid))
        die("--param grid=%s: give PXxPY or auto", g);
}

static void halo_setup(struct kcase *c)
{
    struct halo_kernel *s = xcalloc(1, sizeof *s);
    int tile[2], width, grid[2];
    halo_read_params(c, tile, &width, grid);
    torus_create(c->comm, grid, &s->torus);
    s->tile = (struct tile){.nx = tile[0], .ny = tile[1], .ghost = {width, width, width, width}};
    enum halo_method method = (enum halo_method)kcase_param_choice(c, "method");
    s->field = buffer_alloc(halo_field_len(&s->tile) * sizeof(double));
    s->exchange = halo_create(&s->torus, &s->tile, s->field, method, HALO_ALL_FACES);
    /* The size is what the exchange sends, which Python derives from tile
     * and halo before launching; only a hand-written command line differs. */
    if (c->bytes != halo_bytes_sent(s->exchange))
        die("halo: --sizes %zu, but tile=%dx%d, halo=%d sends %llu bytes per "
            "exchange; give that size",
            c->bytes, tile[0], tile[1], width, (unsigned long long)halo_bytes_sent(s->exchange));
    s->gx = (double)s->torus.dims[0] * tile[0];
    s->gy = (double)s->torus.dims[1] * tile[1];
    s->cycle = fmax(2.0, floor(EXACT_DOUBLE / (s->gx * s->gy)));
    c->state = s;
}

static double *cell(const struct halo_kernel *s, int i, int j)
{
    const struct tile *t = &s->tile;
    return s->field + (size_t)(j + t->ghost[HALO_SOUTH]) * halo_stride(t) +
           (size_t)(i + t->ghost[HALO_WEST]);
}

/* The value of local cell (i, j), ghosts included (i < 0, i >= nx, ...):
 * the periodic global index's. */
static double expected(const struct halo_kernel *s, uint64_t iteration, int i, int j)
{
    double gi = fmod(s->torus.coords[0] * (double)s->tile.nx + i + s->gx, s->gx);
    double gj = fmod(s->torus.coords[1] * (double)s->tile.ny + j + s->gy, s->gy);
    return gi + s->gx * (gj + s->gy * fmod((double)iteration, s->cycle));
}

static void fill(const struct kcase *c, struct halo_kernel *s)
{
    const struct tile *t = &s->tile;
    for (size_t k = 0; k < halo_field_len(t); k++)
        s->field[k] = SPOILED;
    for (int j = 0; j < t->ny; j++)
        for (int i = 0; i < t->nx; i++)
            *cell(s, i, j) = expected(s, c->iteration, i, j);
}

/* Every ghost cell of side `side`, against what its owner holds there. */
static void check_side(const struct kcase *c, const struct halo_kernel *s, enum halo_side side)
{
    const struct tile *t = &s->tile;
    int g = t->ghost[side];
    int i0 = side == HALO_WEST ? -g : side == HALO_EAST ? t->nx : 0;
    int j0 = side == HALO_SOUTH ? -g : side == HALO_NORTH ? t->ny : 0;
    int i1 = side == HALO_WEST || side == HALO_EAST ? i0 + g : t->nx;
    int j1 = side == HALO_SOUTH || side == HALO_NORTH ? j0 + g : t->ny;
    for (int j = j0; j < j1; j++)
        for (int i = i0; i < i1; i++) {
            double want = expected(s, c->iteration, i, j), got = *cell(s, i, j);
            if (got != want)
                die("halo validation failed: iteration %llu, rank %d at "
                    "(%d, %d), %s ghost cell (%d, %d) from rank %d: "
                    "expected %.17g, got %.17g",
                    (unsigned long long)c->iteration, c->rank, s->torus.coords[0],
                    s->torus.coords[1], side_names[side], i, j, s->torus.neighbour[side], want,
                    got);
        }
}

static void halo_run_once(struct kcase *c)
{
    struct halo_kernel *s = c->state;
    if (c->validate)
        fill(c, s);
    halo_begin(s->exchange);
    halo_end(s->exchange);
    for (int side = 0; side < 4 && c->validate; side++)
        check_side(c, s, (enum halo_side)side);
}

/* The grid MPI_Dims_create chose (with grid=auto) and the tile, so a case
 * says which decomposition it measured. */
static void halo_report(struct kcase *c, struct jsonl *j)
{
    struct halo_kernel *s = c->state;
    if (!j)
        return;
    jsonl_open(j, "grid", '[');
    jsonl_int(j, NULL, s->torus.dims[0]);
    jsonl_int(j, NULL, s->torus.dims[1]);
    jsonl_close(j, ']');
    jsonl_open(j, "tile", '[');
    jsonl_int(j, NULL, s->tile.nx);
    jsonl_int(j, NULL, s->tile.ny);
    jsonl_close(j, ']');
    jsonl_int(j, "halo_width", s->tile.ghost[HALO_WEST]);
}

static void halo_teardown(struct kcase *c)
{
    struct halo_kernel *s = c->state;
    halo_free(s->exchange);
    torus_free(&s->torus);
    buffer_free(s->field);
    free(s);
}

const struct kernel kernel_halo = {
    .name = "halo",
    .description = "2D periodic halo exchange of a tile's four faces; "
                   "--param tile=NXxNY, halo=W, "
                   "method=p2p|sendrecv|neighbor|rma, grid=PXxPY|auto; "
                   "size = bytes each rank sends",
    .family = FAMILY_HALO,
    .min_ranks = 1,
    .timed_by = TIMED_BY_MAX,
    .params = halo_params,
    .setup = halo_setup,
    .run_once = halo_run_once,
    .teardown = halo_teardown,
    .report = halo_report,
};
