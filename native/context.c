#include "context.h"

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "kernel.h"
#include "mpit.h"
#include "msg.h"
#include "options.h"
#include "records.h"
#include "timer.h"

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
int shm_node(MPI_Comm comm, int rank)
{
    MPI_Comm node;
    int lowest = rank;
    CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, node));
    CHECK_MPI(MPI_Comm_free(&node));
    return lowest;
}

/* "3.1": the MPI standard version the library implements. */
static void standard_version(char *out, size_t len)
{
    int major = 0, minor = 0;
    CHECK_MPI(MPI_Get_version(&major, &minor));
    snprintf(out, len, "%d.%d", major, minor);
}

void context_write(const struct config *cfg, const struct timer_info *timer, int argc, char **argv,
                   MPI_Comm comm)
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
    CHECK_MPI(MPI_Gather(host, HOST_CHARS, MPI_CHAR, hosts, HOST_CHARS, MPI_CHAR, 0, comm));
    CHECK_MPI(MPI_Gather(binding, HOST_CHARS, MPI_CHAR, bindings, HOST_CHARS, MPI_CHAR, 0, comm));
    CHECK_MPI(MPI_Gather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, 0, comm));
    CHECK_MPI(MPI_Gather(&node, 1, MPI_INT, nodes, 1, MPI_INT, 0, comm));
    if (rank != 0)
        return;

    char utc[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    char version[MPI_MAX_LIBRARY_VERSION_STRING], name[64], standard[32];
    int len = 0;
    CHECK_MPI(MPI_Get_library_version(version, &len));
    while (len > 0 && strchr(" \t\r\n", version[len - 1]))
        len--;
    version[len] = '\0';
    library_name(version, name, sizeof name);
    standard_version(standard, sizeof standard);
    struct cvar_list transport = mpit_read(MPIT_TRANSPORT), protocols = mpit_read(MPIT_PROTOCOLS);

    record_context(&(struct context_record){
        .commscope_version = COMMSCOPE_VERSION,
        .mpi_library = name,
        .mpi_library_version = version,
        .mpi_standard = standard,
        .large_count = MSG_LARGE_COUNT,
        .ranks = ranks,
        .hosts = hosts,
        .bindings = bindings,
        .host_chars = HOST_CHARS,
        .cpus = cpus,
        .nodes = nodes,
        .transport = transport,
        .protocols = protocols,
        .wtick_s = timer->wtick_s,
        .resolution_s = timer->resolution_s,
        .overhead_s = timer->overhead_s,
        .barrier_s = timer->barrier_s,
        .barrier_median_s = timer->barrier_median_s,
        .compiler = __VERSION__,
        .argc = argc,
        .argv = argv,
        .utc = utc,
        .kernel = cfg->kernel ? cfg->kernel->name : NULL});
    mpit_free(&transport);
    mpit_free(&protocols);
    free(hosts);
    free(bindings);
    free(cpus);
    free(nodes);
}
