#include "context.h"

#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "jsonl.h"
#include "kernel.h"
#include "msg.h"
#include "mpit.h"
#include "options.h"
#include "timing.h"

#ifndef COMMSCOPE_VERSION
#error "build with -DCOMMSCOPE_VERSION='\"x.y.z\"'"
#endif

#define HOST_CHARS 256

/* "Open MPI", "MPICH", or the first word of the library's version string. */
static void library_name(const char *version, char *out, size_t len)
{
    static const char *const known[] = {"Open MPI", "MPICH"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strncmp(version, known[i], strlen(known[i])) == 0) {
            snprintf(out, len, "%s", known[i]);
            return;
        }
    }
    snprintf(out, len, "%.*s", (int)strcspn(version, " \t\n"), version);
}

/* This process's CPU affinity as a cpulist ("0-3,8"): where it is bound. */
static void affinity_list(char *out, size_t len)
{
    cpu_set_t set;
    out[0] = '\0';
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    size_t used = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && used + 16 < len; cpu++) {
        if (!CPU_ISSET(cpu, &set))
            continue;
        int last = cpu;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
            last++;
        used += (size_t)snprintf(out + used, len - used, "%s%d", used ? "," : "", cpu);
        if (last > cpu)
            used += (size_t)snprintf(out + used, len - used, "-%d", last);
        cpu = last;
    }
}

/* The lowest rank of this rank's MPI_COMM_TYPE_SHARED communicator: ranks with
 * the same value are those the library itself counts as sharing memory (one
 * node), whatever their host names say. */
static int shm_node(MPI_Comm comm, int rank)
{
    MPI_Comm node;
    int lowest = rank;
    CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, node));
    CHECK_MPI(MPI_Comm_free(&node));
    return lowest;
}

static void write_placement(struct jsonl *j, const char *hosts, const int *cpus,
                            const char *bindings, const int *nodes, int ranks)
{
    /* Distinct hosts in rank order of first appearance. */
    jsonl_open(j, "hosts", '[');
    for (int r = 0; r < ranks; r++) {
        bool seen = false;
        for (int q = 0; q < r && !seen; q++)
            seen = strcmp(hosts + q * HOST_CHARS, hosts + r * HOST_CHARS) == 0;
        if (!seen)
            jsonl_str(j, NULL, hosts + r * HOST_CHARS);
    }
    jsonl_close(j, ']');
    jsonl_open(j, "placement", '[');
    for (int r = 0; r < ranks; r++) {
        jsonl_open(j, NULL, '{');
        jsonl_int(j, "rank", r);
        jsonl_str(j, "host", hosts + r * HOST_CHARS);
        if (cpus[r] >= 0)
            jsonl_int(j, "cpu", cpus[r]);
        else
            jsonl_null(j, "cpu");
        jsonl_str(j, "binding", bindings + r * HOST_CHARS);
        jsonl_int(j, "shm_node", nodes[r]);
        jsonl_close(j, '}');
    }
    jsonl_close(j, ']');
}

static void write_library(struct jsonl *j)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING], name[64], standard[32];
    int len = 0, major = 0, minor = 0;
    CHECK_MPI(MPI_Get_library_version(version, &len));
    while (len > 0 && strchr(" \t\r\n", version[len - 1]))
        len--;
    version[len] = '\0';
    CHECK_MPI(MPI_Get_version(&major, &minor));
    snprintf(standard, sizeof standard, "%d.%d", major, minor);
    library_name(version, name, sizeof name);
    jsonl_str(j, "mpi_library", name);
    jsonl_str(j, "mpi_library_version", version);
    jsonl_str(j, "mpi_standard", standard);
    jsonl_bool(j, "large_count", MSG_LARGE_COUNT);
}

static void write_timer(struct jsonl *j, const struct timer_info *timer)
{
    jsonl_open(j, "timer", '{');
    jsonl_str(j, "name", "MPI_Wtime");
    jsonl_num(j, "wtick_s", timer->wtick_s);
    jsonl_num(j, "resolution_s", timer->resolution_s);
    jsonl_num(j, "overhead_s", timer->overhead_s);
    jsonl_num(j, "barrier_s", timer->barrier_s);
    jsonl_close(j, '}');
}

void context_write(const struct config *cfg, const struct timer_info *timer,
                   int argc, char **argv, MPI_Comm comm)
{
    int rank, ranks;
    CHECK_MPI(MPI_Comm_rank(comm, &rank));
    CHECK_MPI(MPI_Comm_size(comm, &ranks));
    char host[HOST_CHARS] = "";
    if (gethostname(host, HOST_CHARS - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    int cpu = sched_getcpu();
    char binding[HOST_CHARS];
    affinity_list(binding, sizeof binding);
    char *hosts = rank == 0 ? xcalloc((size_t)ranks, HOST_CHARS) : NULL;
    char *bindings = rank == 0 ? xcalloc((size_t)ranks, HOST_CHARS) : NULL;
    int *cpus = rank == 0 ? xcalloc((size_t)ranks, sizeof *cpus) : NULL;
    int *nodes = rank == 0 ? xcalloc((size_t)ranks, sizeof *nodes) : NULL;
    int node = shm_node(comm, rank);
    CHECK_MPI(MPI_Gather(host, HOST_CHARS, MPI_CHAR, hosts, HOST_CHARS,
                         MPI_CHAR, 0, comm));
    CHECK_MPI(MPI_Gather(binding, HOST_CHARS, MPI_CHAR, bindings, HOST_CHARS,
                         MPI_CHAR, 0, comm));
    CHECK_MPI(MPI_Gather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, 0, comm));
    CHECK_MPI(MPI_Gather(&node, 1, MPI_INT, nodes, 1, MPI_INT, 0, comm));
    if (rank != 0)
        return;

    char utc[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));

    struct jsonl j;
    jsonl_begin(&j, "context");
    jsonl_int(&j, "schema", 1);
    jsonl_str(&j, "commscope_version", COMMSCOPE_VERSION);
    write_library(&j);
    jsonl_int(&j, "ranks", ranks);
    write_placement(&j, hosts, cpus, bindings, nodes, ranks);
    mpit_write_transport(&j);
    write_timer(&j, timer);
    jsonl_str(&j, "compiler", __VERSION__);
    jsonl_open(&j, "argv", '[');
    for (int i = 0; i < argc; i++)
        jsonl_str(&j, NULL, argv[i]);
    jsonl_close(&j, ']');
    jsonl_str(&j, "utc", utc);
    jsonl_str(&j, "kernel", cfg->kernel ? cfg->kernel->name : NULL);
    jsonl_end(&j);
    free(hosts);
    free(bindings);
    free(cpus);
    free(nodes);
}
