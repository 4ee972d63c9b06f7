/* advection2d: seed 003's application, c_t + u c_x + v c_y = 0 on the
 * periodic square [0, 2pi)^2, n x n grid points x_i = i 2pi/n, split in
 * tiles over a periodic process torus (docs/app-advection2d.md).
 *
 * Scheme: Beam-Warming, the second-order upwind scheme (LeVeque, Finite
 * Volume Methods for Hyperbolic Problems, 2002, ch. 6), one x sweep and
 * then one y sweep per time step. For constant u, v the two sweeps commute,
 * so the splitting adds no error and the method stays second order. A sweep
 * reads two points upwind, so each needs two ghost columns (rows) on the
 * upwind side only, moved by halo.h: halo_begin, the points further than 2
 * from the upwind face, halo_end, the 2 points next to it.
 *
 * One iteration is one whole solve from the initial condition; the report
 * gives the error against the exact solution c0(x - u t, y - v t). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "halo.h"
#include "jsonl.h"
#include "kernel.h"
#include "sampling.h"

enum { PHASE_COMPUTE, PHASE_COMMUNICATE };
enum { DIM_X, DIM_Y };
enum init { INIT_SIN, INIT_GAUSS };
enum comm { COMM_ON, COMM_OFF };
#define WIDTH 2 /* Beam-Warming reads Q_{i-1} and Q_{i-2} (upwind) */
/* gauss: exp((cos(x - pi) + cos(y - pi) - 2) / W^2), smooth and periodic,
 * near its centre a Gaussian of standard deviation W. */
#define GAUSS_WIDTH 0.5
/* Python refuses sigma > 1 computed the same way; the slack only keeps a
 * last-bit difference from failing here what passed there. */
#define CFL_SLACK 1e-12

static const char *const advection2d_phases[] = {"compute", "communicate", NULL};
static const char *const inits[] = {"sin", "gauss", NULL};
static const char *const methods[] = {"rma", "p2p", NULL};
static const enum halo_method method_of[] = {HALO_RMA, HALO_P2P};
static const char *const comms[] = {"on", "off", NULL};
/* clang-format off */
static const struct kparam advection2d_params[] = {
    {.name = "u", PARAM_NUMBER, "0.5", "velocity along x", NULL, NULL},
    {.name = "v", PARAM_NUMBER, "0.5", "velocity along y", NULL, NULL},
    {.name = "dt", PARAM_NUMBER, "0.001", "time step", NULL, NULL},
    {.name = "steps", PARAM_COUNT, "100", "time steps per solve", NULL, NULL},
    {.name = "init", PARAM_CHOICE, "sin",
     "initial condition: sin(x), or a periodic Gaussian bump", inits, NULL},
    {.name = "method", PARAM_CHOICE, "rma",
     "halo exchange: MPI_Put between fences, or Irecv/Isend", methods, NULL},
    {.name = "comm", PARAM_CHOICE, "on",
     "off: each tile's ghosts from the tile itself (wrong on purpose)", comms,
     NULL},
    {.name = "grid", PARAM_GRID, "auto", "process grid PXxPY, or auto", NULL, NULL},
    {.name = "field", PARAM_PATH, NULL,
     "rank 0 writes the final field here: n*n float64, y outer", NULL, NULL},
    {0},
};
/* clang-format on */

struct advection2d {
    int n;
    double vel[2], dt, dx;
    long long steps;
    enum init init;
    enum comm comm;
    struct torus torus;
    struct tile tile;
    double *initial, *field[2]; /* halo_field_len doubles each */
    int current;                /* field[current] holds the solution */
    /* halo[buffer][dim]: the upwind face of dim on that buffer; NULL where
     * the velocity is 0 or with comm=off. */
    struct halo *halo[2][2];
    double weight[2][3]; /* per dim: Q_i, Q_{i-1}, Q_{i-2} (upwind) */
    long offset[2];      /* per dim: doubles from Q_i to its upwind point */
};

static double param_number(const struct kcase *c, const char *key)
{
    const char *text = kcase_param(c, key);
    char *end;
    double x = strtod(text, &end);
    if (end == text || *end || !isfinite(x))
        die("--param %s=%s: give a finite number", key, text);
    return x;
}

/* "PXxPY", or auto: MPI_Dims_create chooses (dims 0). */
static void param_grid(const struct kcase *c, int dims[2])
{
    const char *text = kcase_param(c, "grid");
    char tail;
    dims[0] = dims[1] = 0;
    if (strcmp(text, "auto") != 0 &&
        (sscanf(text, "%dx%d%c", &dims[0], &dims[1], &tail) != 2 || dims[0] < 1 || dims[1] < 1))
        die("--param grid=%s: give PXxPY, e.g. 2x2, or auto", text);
}

/* Beam-Warming for Courant number nu = |vel| dt / dx in [0, 2]:
 *   Q_i - nu/2 (3 Q_i - 4 Q_{i-1} + Q_{i-2})
 *       + nu^2/2 (Q_i - 2 Q_{i-1} + Q_{i-2}),
 * with i-1, i-2 the upwind neighbours, regrouped by point. */
static void beam_warming(double nu, double w[3])
{
    w[0] = (1 - nu) * (2 - nu) / 2;
    w[1] = nu * (2 - nu);
    w[2] = nu * (nu - 1) / 2;
}

static double initial_value(enum init init, double x, double y)
{
    if (init == INIT_SIN)
        return sin(x);
    return exp((cos(x - M_PI) + cos(y - M_PI) - 2) / (GAUSS_WIDTH * GAUSS_WIDTH));
}

static size_t at(const struct advection2d *s, int i, int j)
{
    const struct tile *t = &s->tile;
    return (size_t)(j + t->ghost[HALO_SOUTH]) * halo_stride(t) + (size_t)(i + t->ghost[HALO_WEST]);
}

static enum halo_side upwind_side(const struct advection2d *s, int dim)
{
    if (dim == DIM_X)
        return s->vel[DIM_X] > 0 ? HALO_WEST : HALO_EAST;
    return s->vel[DIM_Y] > 0 ? HALO_SOUTH : HALO_NORTH;
}

/* sigma = |u| dt/dx + |v| dt/dy (dy = dx), the condition Python checks. */
static double cfl_number(const struct advection2d *s)
{
    return (fabs(s->vel[DIM_X]) / s->dx + fabs(s->vel[DIM_Y]) / s->dx) * s->dt;
}

static void check_problem(const struct kcase *c, const struct advection2d *s)
{
    const int *dims = s->torus.dims;
    if (s->n % dims[0] || s->n % dims[1])
        die("advection2d: n=%d is not divisible by the process grid %dx%d: "
            "tiles must be equal",
            s->n, dims[0], dims[1]);
    if (s->n / dims[0] < WIDTH || s->n / dims[1] < WIDTH)
        die("advection2d: n=%d on a %dx%d process grid leaves fewer than %d "
            "points per rank along a dimension",
            s->n, dims[0], dims[1], WIDTH);
    double sigma = cfl_number(s);
    if (sigma > 1 + CFL_SLACK)
        die("advection2d: CFL number %.6g > 1: unstable (dt=%s)", sigma, kcase_param(c, "dt"));
}

static void advection2d_setup(struct kcase *c)
{
    struct advection2d *s = xcalloc(1, sizeof *s);
    s->n = (int)lround(sqrt((double)(c->bytes / sizeof(double))));
    if ((size_t)s->n * (size_t)s->n * sizeof(double) != c->bytes || s->n < 1)
        die("advection2d: size %zu B is not an n x n field of doubles", c->bytes);
    s->dx = 2 * M_PI / s->n;
    s->vel[DIM_X] = param_number(c, "u");
    s->vel[DIM_Y] = param_number(c, "v");
    s->dt = param_number(c, "dt");
    double steps = param_number(c, "steps");
    if (!(s->dt > 0) || steps < 1 || steps != floor(steps) || steps > 1e15)
        die("advection2d: give dt > 0 and a whole number of steps >= 1");
    s->steps = (long long)steps;
    s->init = (enum init)kcase_param_choice(c, "init");
    s->comm = (enum comm)kcase_param_choice(c, "comm");
    enum halo_method method = method_of[kcase_param_choice(c, "method")];
    int dims[2];
    param_grid(c, dims);
    torus_create(c->comm, dims, &s->torus);
    check_problem(c, s);

    s->tile.nx = s->n / s->torus.dims[0];
    s->tile.ny = s->n / s->torus.dims[1];
    for (int dim = DIM_X; dim <= DIM_Y; dim++)
        if (s->vel[dim] != 0)
            s->tile.ghost[upwind_side(s, dim)] = WIDTH;
    for (int dim = DIM_X; dim <= DIM_Y; dim++) {
        beam_warming(fabs(s->vel[dim]) * s->dt / s->dx, s->weight[dim]);
        long step = dim == DIM_X ? 1 : (long)halo_stride(&s->tile);
        s->offset[dim] = s->vel[dim] > 0 ? -step : step;
    }
    size_t len = halo_field_len(&s->tile);
    s->initial = buffer_alloc(len * sizeof(double));
    for (int b = 0; b < 2; b++)
        s->field[b] = buffer_alloc(len * sizeof(double));
    for (int j = 0; j < s->tile.ny; j++)
        for (int i = 0; i < s->tile.nx; i++) {
            double x = (s->torus.coords[0] * s->tile.nx + i) * s->dx;
            double y = (s->torus.coords[1] * s->tile.ny + j) * s->dx;
            s->initial[at(s, i, j)] = initial_value(s->init, x, y);
        }
    for (int b = 0; b < 2 && s->comm == COMM_ON; b++)
        for (int dim = DIM_X; dim <= DIM_Y; dim++)
            if (s->vel[dim] != 0)
                s->halo[b][dim] = halo_create(&s->torus, &s->tile, s->field[b], method,
                                              1u << upwind_side(s, dim));
    c->state = s;
}

/* New values at the points whose coordinate along dim lies in [from, to),
 * over the whole tile in the other dimension. */
static void sweep(const struct advection2d *s, int dim, int from, int to)
{
    const double *w = s->weight[dim];
    long o = s->offset[dim];
    int j0 = dim == DIM_Y ? from : 0, j1 = dim == DIM_Y ? to : s->tile.ny;
    int i0 = dim == DIM_X ? from : 0, i1 = dim == DIM_X ? to : s->tile.nx;
    for (int j = j0; j < j1; j++) {
        /* The two buffers never overlap: restrict lets the loop vectorise. */
        const double *restrict old = s->field[s->current] + at(s, 0, j);
        double *restrict new = s->field[!s->current] + at(s, 0, j);
        for (int i = i0; i < i1; i++)
            new[i] = w[0] * old[i] + w[1] * old[i + o] + w[2] * old[i + 2 * o];
    }
}

/* comm=off: the upwind ghosts from the tile's own far side, as if the tile
 * alone were the periodic domain (wrong on purpose: no communication). */
static void wrap_own_tile(struct advection2d *s, int dim)
{
    const struct tile *t = &s->tile;
    double *origin = s->field[s->current] + at(s, 0, 0); /* point (0, 0) */
    long stride = (long)halo_stride(t);
    enum halo_side side = upwind_side(s, dim);
    for (int g = 1; g <= WIDTH; g++) {
        if (dim == DIM_X) {
            int ghost = side == HALO_WEST ? -g : t->nx - 1 + g;
            int source = side == HALO_WEST ? t->nx - g : g - 1;
            for (long j = 0; j < t->ny; j++)
                origin[j * stride + ghost] = origin[j * stride + source];
        } else {
            long ghost = side == HALO_SOUTH ? -g : t->ny - 1 + g;
            long source = side == HALO_SOUTH ? t->ny - g : g - 1;
            for (int i = 0; i < t->nx; i++)
                origin[ghost * stride + i] = origin[source * stride + i];
        }
    }
}

/* One dimension's sweep: the exchange overlaps the points that need no
 * ghost data, those further than WIDTH from the upwind face. */
static void sweep_dim(struct kcase *c, struct advection2d *s, int dim)
{
    if (s->vel[dim] == 0)
        return; /* Beam-Warming with nu = 0 is the identity */
    struct halo *h = s->halo[s->current][dim];
    int len = dim == DIM_X ? s->tile.nx : s->tile.ny;
    bool positive = s->vel[dim] > 0;
    if (h)
        halo_begin(h);
    else
        wrap_own_tile(s, dim);
    sampling_phase_end(c, PHASE_COMMUNICATE);
    sweep(s, dim, positive ? WIDTH : 0, positive ? len : len - WIDTH);
    sampling_phase_end(c, PHASE_COMPUTE);
    if (h)
        halo_end(h);
    sampling_phase_end(c, PHASE_COMMUNICATE);
    sweep(s, dim, positive ? 0 : len - WIDTH, positive ? WIDTH : len);
    sampling_phase_end(c, PHASE_COMPUTE);
    s->current = !s->current;
}

static void advection2d_run_once(struct kcase *c)
{
    struct advection2d *s = c->state;
    s->current = 0;
    memcpy(s->field[0], s->initial, halo_field_len(&s->tile) * sizeof(double));
    sampling_phase_end(c, PHASE_COMPUTE);
    for (long long step = 0; step < s->steps; step++) {
        sweep_dim(c, s, DIM_X);
        sweep_dim(c, s, DIM_Y);
    }
}

static double exact_value(const struct advection2d *s, int i, int j)
{
    double t = (double)s->steps * s->dt;
    double x = (s->torus.coords[0] * s->tile.nx + i) * s->dx;
    double y = (s->torus.coords[1] * s->tile.ny + j) * s->dx;
    /* Both initial conditions are 2pi-periodic functions: no wrapping. */
    return initial_value(s->init, x - s->vel[DIM_X] * t, y - s->vel[DIM_Y] * t);
}

/* Little-endian float64 whatever the host's byte order. */
static void put_le(FILE *f, double x)
{
    uint64_t bits;
    unsigned char b[8];
    memcpy(&bits, &x, sizeof bits);
    for (int k = 0; k < 8; k++)
        b[k] = (unsigned char)(bits >> (8 * k));
    fwrite(b, 1, sizeof b, f);
}

/* field=PATH: the tiles gathered to rank 0, which writes the n x n global
 * field row-major with y outer. Ranks of the torus are those of c->comm
 * (reorder = 0); MPI_Cart_coords places each tile. */
static void write_field(const struct kcase *c, const struct advection2d *s, const char *path)
{
    const struct tile *t = &s->tile;
    size_t points = (size_t)t->nx * (size_t)t->ny;
    double *mine = xcalloc(points, sizeof *mine);
    for (int j = 0; j < t->ny; j++)
        memcpy(mine + (size_t)j * (size_t)t->nx, s->field[s->current] + at(s, 0, j),
               (size_t)t->nx * sizeof *mine);
    double *all = c->rank == 0 ? xcalloc(points * (size_t)c->ranks, sizeof *all) : NULL;
    CHECK_MPI(MPI_Gather(mine, (int)points, MPI_DOUBLE, all, (int)points, MPI_DOUBLE, 0,
                         s->torus.comm));
    free(mine);
    if (c->rank != 0)
        return;
    int px = s->torus.dims[0], py = s->torus.dims[1];
    int *owner = xcalloc((size_t)px * (size_t)py, sizeof *owner);
    for (int cy = 0; cy < py; cy++)
        for (int cx = 0; cx < px; cx++)
            CHECK_MPI(MPI_Cart_rank(s->torus.comm, (int[2]){cx, cy}, &owner[cy * px + cx]));
    FILE *f = fopen(path, "wb");
    if (!f)
        die("--param field=%s: cannot open for writing", path);
    for (int gj = 0; gj < s->n; gj++)
        for (int gi = 0; gi < s->n; gi++) {
            const double *tile = all + (size_t)owner[gj / t->ny * px + gi / t->nx] * points;
            put_le(f, tile[(size_t)(gj % t->ny) * (size_t)t->nx + (size_t)(gi % t->nx)]);
        }
    if (fclose(f) != 0)
        die("--param field=%s: write failed", path);
    free(owner);
    free(all);
}

/* The last solve against the exact solution: RMS and maximum error over all
 * n^2 points, reduced over the ranks. */
static void advection2d_report(struct kcase *c, struct jsonl *j)
{
    struct advection2d *s = c->state;
    double local[2] = {0, 0}, sum_sq, max_abs;
    for (int jj = 0; jj < s->tile.ny; jj++)
        for (int i = 0; i < s->tile.nx; i++) {
            double e = s->field[s->current][at(s, i, jj)] - exact_value(s, i, jj);
            local[0] += e * e;
            local[1] = fmax(local[1], fabs(e));
        }
    CHECK_MPI(MPI_Reduce(&local[0], &sum_sq, 1, MPI_DOUBLE, MPI_SUM, 0, c->comm));
    CHECK_MPI(MPI_Reduce(&local[1], &max_abs, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm));
    const char *path = kcase_param(c, "field");
    if (path)
        write_field(c, s, path);
    if (!j)
        return;
    jsonl_num(j, "l2_error", sqrt(sum_sq / ((double)s->n * s->n)));
    jsonl_num(j, "max_error", max_abs);
    jsonl_open(j, "process_grid", '[');
    jsonl_int(j, NULL, s->torus.dims[0]);
    jsonl_int(j, NULL, s->torus.dims[1]);
    jsonl_close(j, ']');
    jsonl_int(j, "points_per_rank", (long long)s->tile.nx * s->tile.ny);
    jsonl_num(j, "cfl", cfl_number(s));
    jsonl_num(j, "final_time", (double)s->steps * s->dt);
}

static void advection2d_teardown(struct kcase *c)
{
    struct advection2d *s = c->state;
    for (int b = 0; b < 2; b++)
        for (int dim = DIM_X; dim <= DIM_Y; dim++)
            halo_free(s->halo[b][dim]);
    buffer_free(s->initial);
    buffer_free(s->field[0]);
    buffer_free(s->field[1]);
    torus_free(&s->torus);
    free(s);
}

const struct kernel kernel_advection2d = {
    .name = "advection2d",
    .description = "seed 003's 2D advection app: Beam-Warming on an n x n "
                   "periodic grid (n^2 = size/8), one whole solve per "
                   "iteration; run it with `commscope app advection2d`",
    .family = FAMILY_APPLICATION,
    .min_ranks = 1,
    .timed_by = TIMED_BY_MAX,
    .params = advection2d_params,
    .setup = advection2d_setup,
    .run_once = advection2d_run_once,
    .teardown = advection2d_teardown,
    .phases = advection2d_phases,
    .report = advection2d_report,
};
