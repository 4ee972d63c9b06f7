/* commscope-native: runs one kernel over its send modes and message sizes
 * and writes JSON Lines records to stdout (docs/native.md). */
#include <mpi.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "algorithm.h"
#include "check.h"
#include "context.h"
#include "describe.h"
#include "jsonl.h"
#include "kernel.h"
#include "options.h"
#include "records.h"
#include "timing.h"

/* SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): a seeded stream of 64-bit values. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* The cases' order as indices mode * sizes + size: in order for seed 0,
 * else a Fisher-Yates shuffle drawn from the seed, so that drift over a
 * launch lands on different cases in different launches. The same seed on
 * every rank gives every rank the same order. */
static void case_order(long long seed, size_t *order, size_t n)
{
    uint64_t state = (uint64_t)seed;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; seed && i > 1; i--) {
        size_t j = (size_t)(splitmix64(&state) % i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

/* A rank dies with the process that started it (mpirun, hydra's proxy, a remote
 * daemon, slurmstepd), however that ends: a killed launcher must not leave ranks
 * spinning at full CPU with nobody reading their records. */
static void die_with_parent(void)
{
#ifdef __linux__
    pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* it ended before the request: no signal would come */
        _exit(1);
#endif
}

/* The case's communicator: where a launch forces the library's algorithm
 * (--param algorithm, or --each over it), a fresh one per case, made with
 * the case's algorithm forced or the library's choice given back
 * (algorithm.h), so that every variant pays alike; else the world's. */
static MPI_Comm case_comm(const struct config *cfg, const char *variant)
{
    const struct kernel *k = cfg->kernel;
    const struct kparam *p = kernel_param(k, "algorithm");
    bool varied = cfg->each.key && strcmp(cfg->each.key, "algorithm") == 0;
    struct kcase c = {.cfg = cfg, .variant = variant};
    if (!p || p->kind != PARAM_ALGORITHM || (!varied && !kcase_param(&c, "algorithm")))
        return MPI_COMM_WORLD;
    return algorithm_comm(k->name, kcase_param(&c, "algorithm"), MPI_COMM_WORLD);
}

/* Why the kernel cannot run on this many ranks, written into error; false: it can. */
static bool ranks_refused(const struct kernel *k, int ranks, char *error, size_t size)
{
    if (ranks < k->min_ranks)
        snprintf(error, size,
                 "commscope-native: kernel %s needs at least %d ranks, this run has %d", k->name,
                 k->min_ranks, ranks);
    else if (k->ranks_multiple && ranks % k->ranks_multiple)
        snprintf(error, size,
                 "commscope-native: kernel %s needs a multiple of %d ranks, this run has %d",
                 k->name, k->ranks_multiple, ranks);
    else
        return false;
    return true;
}

int main(int argc, char **argv)
{
    /* Python reads the kernels from here when it builds the binary: no
     * launcher, and no MPI_Init (a second with Open MPI's libfabric). */
    if (argc == 2 && strcmp(argv[1], "--describe") == 0) {
        describe_write();
        return 0;
    }
    die_with_parent();
    CHECK_MPI(MPI_Init(&argc, &argv));
    /* Errors come back to CHECK_MPI instead of ending the job inside the
     * library, so each one is reported as an error record first. */
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rank, ranks;
    CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &ranks));

    struct config parsed;
    char error[512];
    enum options_result result = options_parse(argc, argv, &parsed, error, sizeof error);
    if (result == OPTIONS_OK && !parsed.info &&
        ranks_refused(parsed.kernel, ranks, error, sizeof error)) {
        options_free(&parsed);
        result = OPTIONS_BAD;
    }
    if (result != OPTIONS_OK) {
        if (rank == 0 && result == OPTIONS_HELP)
            options_print_help(stdout);
        else if (rank == 0)
            fprintf(stderr, "%s\n", error);
        CHECK_MPI(MPI_Finalize());
        return result == OPTIONS_HELP ? 0 : 2;
    }
    const struct config cfg = parsed;
    /* Launchers relay stdout slowly for long lines (Open MPI's takes seconds
     * for a few MB in one line): rank 0 writes its records to a file. */
    if (rank == 0 && cfg.output) {
        FILE *out = fopen(cfg.output, "a");
        if (!out)
            die("commscope-native: cannot open --output %s", cfg.output);
        jsonl_output(out);
    }

    struct timer_info timer = timer_calibrate(MPI_COMM_WORLD);
    context_write(&cfg, &timer, argc, argv, MPI_COMM_WORLD);
    if (cfg.kernel && cfg.kernel->prepare)
        cfg.kernel->prepare(MPI_COMM_WORLD);
    /* With --each, a case's variants run back to back, first to last or last
     * to first in turn from case to case and, through the seed, from launch
     * to launch, so that drift within a launch reaches every variant alike. */
    size_t variants = cfg.each.key ? cfg.each.n : 1, total = cfg.modes.n * cfg.sizes.n;
    size_t *order = xcalloc(total, sizeof *order);
    case_order(cfg.shuffle, order, total);
    long long cases = 0;
    for (size_t i = 0; i < total; i++)
        for (size_t v = 0; v < variants; v++) {
            size_t which = (i + (size_t)cfg.shuffle) % 2 ? variants - 1 - v : v;
            const char *variant = cfg.each.key ? cfg.each.values[which] : NULL;
            MPI_Comm comm = case_comm(&cfg, variant);
            cases += timing_run_case(&cfg, &timer, variant, cfg.modes.v[order[i] / cfg.sizes.n],
                                     cfg.sizes.v[order[i] % cfg.sizes.n], comm);
            if (comm != MPI_COMM_WORLD)
                CHECK_MPI(MPI_Comm_free(&comm));
        }
    free(order);
    if (rank == 0)
        record_end(cases);
    options_free(&cfg);
    CHECK_MPI(MPI_Finalize());
    return 0;
}
