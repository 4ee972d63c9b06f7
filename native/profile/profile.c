/* The profile's table, clock, request map and files (profile.h). Its own MPI
 * calls go to PMPI_*, so they are not counted. */
#include "profile.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define FLUSH_EVERY_S 1.0 /* what a program that dies loses at most */

#define PROFILE_NAME(id, name) name,
static const char *const call_names[] = {PROFILE_CALLS(PROFILE_NAME)};
#undef PROFILE_NAME

struct row {
    int call, comm_size, bucket, peer; /* bucket: 0 for 0 bytes, k+1 for [2^k, 2^(k+1)) */
    uint64_t count, ticks, bytes;
    uint64_t overlap; /* nonblocking: the program's own ticks while it was in flight */
};

struct pending { /* a nonblocking call's request, while it is in flight */
    MPI_Request request;
    int row, receive, used; /* used: 0 empty, -1 tombstone, 1 in flight, 2 persistent idle */
    int copies; /* in flight under this handle: MPICH gives every send that completed at
                 * once the same handle */
    uint64_t started, mpi_at; /* when its start call returned, and P.mpi then */
    /* a persistent request's message, counted at each MPI_Start */
    int call, peer;
    MPI_Comm comm;
    int64_t bytes;
};

static struct {
    int on, writing, rank, ranks, *node; /* node[r]: world rank r's node (its lowest world rank) */
    struct row *rows;
    size_t nrows, cap; /* rows: an open-addressed table of cap slots */
    struct pending *pend;
    size_t npend, nslots, pcap; /* slots: live requests and completed ones' tombstones */
    struct {
        MPI_Comm comm;
        int *world;
        int size;
    } *comms; /* world ranks of each comm */
    int ncomms;
    uint64_t start_ticks, next_flush;
    uint64_t mpi; /* ticks inside the calls counted so far: not the program's own work */
    unsigned generation; /* moves when rows move or a communicator is freed: last[] stale */
    double start_s, ticks_per_s;
    char host[MPI_MAX_PROCESSOR_NAME], dir[4096], library[MPI_MAX_LIBRARY_VERSION_STRING];
} P;

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

uint64_t profile_ticks(void)
{
#if defined(__x86_64__)
    return __rdtsc(); /* 12 ns here against clock_gettime's 37: the overhead budget */
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
#endif
}

/* Ticks per second over the run so far: the TSC against the monotonic clock. */
static double ticks_per_s(void)
{
    double s = mono_s() - P.start_s;
    return s > 0.1 ? (double)(profile_ticks() - P.start_ticks) / s : P.ticks_per_s;
}

static size_t hash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    return (size_t)(x ^ (x >> 33));
}

static void grow_rows(void);
static struct pending *slot_of(MPI_Request request, int adding);

static struct row *row_of(int call, int comm_size, int bucket, int peer)
{
    uint64_t key = ((uint64_t)call << 48) ^ ((uint64_t)comm_size << 16) ^ ((uint64_t)bucket << 2) ^
                   (uint64_t)peer;
    for (size_t i = hash(key) & (P.cap - 1);; i = (i + 1) & (P.cap - 1)) {
        struct row *r = &P.rows[i];
        if (r->call < 0) {
            if (2 * (P.nrows + 1) > P.cap) {
                grow_rows();
                return row_of(call, comm_size, bucket, peer);
            }
            *r = (struct row){call, comm_size, bucket, peer, 0, 0, 0, 0};
            P.nrows++;
            return r;
        }
        if (r->call == call && r->comm_size == comm_size && r->bucket == bucket && r->peer == peer)
            return r;
    }
}

static void empty_rows(struct row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        rows[i] = (struct row){.call = -1};
}

static void grow_rows(void)
{
    P.generation++;
    struct row *old = P.rows;
    size_t n = P.cap;
    P.cap = n ? 2 * n : 256;
    P.rows = malloc(P.cap * sizeof *P.rows);
    empty_rows(P.rows, P.cap);
    P.nrows = 0;
    for (size_t i = 0; i < n; i++)
        if (old[i].call >= 0)
            *row_of(old[i].call, old[i].comm_size, old[i].bucket, old[i].peer) = old[i];
    free(old);
}

static int bucket_of(int64_t bytes)
{
    int b = 0;
    while (bytes > 0) {
        b++;
        bytes >>= 1;
    }
    return b;
}

static int world_rank(MPI_Comm comm, int rank)
{
    if (comm == MPI_COMM_WORLD)
        return rank;
    for (int i = 0; i < P.ncomms; i++)
        if (P.comms[i].comm == comm)
            return rank < P.comms[i].size ? P.comms[i].world[rank] : -1;
    int inter, size;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter)
        return -1; /* the peer is in the remote group: not traced */
    MPI_Group group, world;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_group(comm, &group);
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    int *mine = malloc((size_t)size * sizeof *mine),
        *theirs = malloc((size_t)size * sizeof *theirs);
    for (int i = 0; i < size; i++)
        mine[i] = i;
    PMPI_Group_translate_ranks(group, size, mine, world, theirs);
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
    free(mine);
    P.comms = realloc(P.comms, (size_t)(P.ncomms + 1) * sizeof *P.comms);
    P.comms[P.ncomms].comm = comm;
    P.comms[P.ncomms].world = theirs;
    P.comms[P.ncomms++].size = size;
    return rank < size ? theirs[rank] : -1;
}

void profile_forget(MPI_Comm comm)
{
    P.generation++;
    for (int i = 0; i < P.ncomms; i++)
        if (P.comms[i].comm == comm) {
            free(P.comms[i].world);
            P.comms[i] = P.comms[--P.ncomms];
            return;
        }
}

static int peer_of(MPI_Comm comm, int peer)
{
    if (peer < 0)
        return PEER_NONE; /* MPI_ANY_SOURCE, MPI_PROC_NULL, or a collective */
    int w = world_rank(comm, peer);
    if (w < 0 || w >= P.ranks)
        return PEER_NONE;
    return P.node[w] == P.node[P.rank] ? PEER_LOCAL : PEER_REMOTE;
}

int64_t profile_bytes(int count, MPI_Datatype type)
{
    int size = 0;
    if (type != MPI_DATATYPE_NULL)
        PMPI_Type_size(type, &size);
    return (int64_t)count * size;
}

static void write_table(int finished);

static void maybe_flush(uint64_t now)
{
    if (now >= P.next_flush) {
        write_table(0);
        P.next_flush = now + (uint64_t)(FLUSH_EVERY_S * P.ticks_per_s);
    }
}

static int record(enum profile_call call, int size, int64_t bytes, int peer, uint64_t start)
{
    uint64_t now = profile_ticks();
    struct row *r = row_of(call, size, bucket_of(bytes), peer);
    r->count++;
    r->ticks += now - start;
    P.mpi += now - start;
    r->bytes += (uint64_t)(bytes > 0 ? bytes : 0);
    maybe_flush(now);
    return (int)(r - P.rows);
}

/* Each call's last (communicator, size, peer) and its row: a loop calling the same thing
 * skips the communicator's size, the peer's host and the hash (the overhead budget). */
static struct last {
    MPI_Comm comm;
    int64_t bytes;
    int peer, row;
    unsigned generation;
} last[CALL_COUNT];

int profile_call(enum profile_call call, MPI_Comm comm, int64_t bytes, int peer, uint64_t start)
{
    if (!P.on)
        return -1;
    struct last *l = &last[call];
    if (l->generation == P.generation && l->comm == comm && l->bytes == bytes && l->peer == peer) {
        uint64_t now = profile_ticks();
        struct row *r = &P.rows[l->row];
        r->count++;
        r->ticks += now - start;
        P.mpi += now - start;
        r->bytes += (uint64_t)(bytes > 0 ? bytes : 0);
        maybe_flush(now);
        return l->row;
    }
    int size;
    PMPI_Comm_size(comm, &size);
    int row = record(call, size, bytes, peer_of(comm, peer), start);
    *l = (struct last){comm, bytes, peer, row, P.generation};
    return row;
}

int profile_win_call(enum profile_call call, MPI_Win win, int64_t bytes, uint64_t start)
{
    if (!P.on)
        return -1;
    MPI_Group group;
    int size;
    PMPI_Win_get_group(win, &group);
    PMPI_Group_size(group, &size);
    PMPI_Group_free(&group);
    return record(call, size, bytes, PEER_NONE, start);
}

void profile_drop(MPI_Request request)
{
    struct pending *p = slot_of(request, 0);
    if (p) {
        p->used = -1;
        P.npend--;
    }
}

static struct pending *slot_of(MPI_Request request, int adding)
{
    if (!P.pcap)
        return NULL;
    uint64_t key = 0;
    memcpy(&key, &request, sizeof request < sizeof key ? sizeof request : sizeof key);
    for (size_t i = hash(key) & (P.pcap - 1), probes = 0; probes < P.pcap;
         i = (i + 1) & (P.pcap - 1), probes++) {
        struct pending *p = &P.pend[i];
        if (!p->used)
            return adding ? p : NULL;
        if (p->request == request && p->used > 0)
            return p;
    }
    return NULL;
}

/* The request's slot, new or its own, in a table with room (rebuilt without the
 * tombstones when half full). */
static struct pending *slot_for(MPI_Request request)
{
    if (2 * (P.nslots + 1) > P.pcap) {
        struct pending *old = P.pend;
        size_t n = P.pcap;
        P.pcap = 1024;
        while (P.pcap < 4 * (P.npend + 1))
            P.pcap *= 2;
        P.pend = calloc(P.pcap, sizeof *P.pend);
        P.npend = P.nslots = 0;
        for (size_t i = 0; i < n; i++)
            if (old[i].used > 0) {
                *slot_of(old[i].request, 1) = old[i];
                P.npend++;
                P.nslots++;
            }
        free(old);
    }
    struct pending *p = slot_of(request, 1);
    if (p && !p->used)
        P.nslots++;
    if (p && p->used <= 0) {
        P.npend++;
        *p = (struct pending){.request = request};
    }
    return p;
}

/* In flight from now: what the program does until its completion is its overlap. */
static void launch(struct pending *p, int row)
{
    p->row = row;
    p->used = 1;
    p->started = profile_ticks();
    p->mpi_at = P.mpi;
}

void profile_request(MPI_Request request, int row, int receive)
{
    struct pending *p;
    if (row >= 0 && request != MPI_REQUEST_NULL && (p = slot_for(request))) {
        if (p->used == 1 && p->call < 0 && p->row == row) {
            p->copies++;
            return;
        }
        p->copies = 1;
        p->receive = receive;
        p->call = -1;
        launch(p, row);
    }
}

void profile_persistent(MPI_Request request, enum profile_call call, MPI_Comm comm, int64_t bytes,
                        int peer, int receive)
{
    struct pending *p;
    if (P.on && request != MPI_REQUEST_NULL && (p = slot_for(request))) {
        *p = (struct pending){request, -1, receive, 2, 1, 0, 0, call, peer, comm, bytes};
    }
}

void profile_start(int n, const MPI_Request *requests, uint64_t start)
{
    if (!P.on || n <= 0)
        return;
    uint64_t share = (profile_ticks() - start) / (uint64_t)n;
    for (int i = 0; i < n; i++) {
        struct pending *p = slot_of(requests[i], 0);
        if (p && p->call >= 0)
            launch(p, profile_call(p->call, p->comm, p->bytes, p->peer, profile_ticks() - share));
    }
}

void profile_completion(enum profile_call call, int n, const MPI_Request *before, const int *done,
                        uint64_t start)
{
    uint64_t now = profile_ticks(), ticks = now - start;
    if (!P.on)
        return;
    struct pending *few[64], **found = n <= 64 ? few : malloc((size_t)n * sizeof *found);
    int nrecv = 0, nother = 0, room = n <= 64 ? 64 : n;
    /* receives first in found[0..nrecv), the others after them from the end */
    for (int i = 0; i < n; i++) {
        struct pending *p = done[i] ? slot_of(before[i], 0) : NULL;
        if (!p || p->used != 1)
            continue;
        if (p->call >= 0) {
            p->used = 2; /* persistent: idle until its next MPI_Start */
        } else if (p->copies > 1) {
            p->copies--; /* another request of this handle is still in flight */
        } else {
            p->used = -1; /* completed: a tombstone, the handle may come back */
            P.npend--;
        }
        /* the program's own work while it was in flight: the time since its start
         * less the time spent in counted calls since (a Test loop is not work) */
        uint64_t inside = P.mpi - p->mpi_at;
        if (start > p->started + inside)
            P.rows[p->row].overlap += start - p->started - inside;
        if (p->receive)
            found[nrecv++] = p;
        else
            found[room - 1 - nother++] = p;
    }
    P.mpi += ticks;
    int k = nrecv ? nrecv : nother;
    struct pending **charged = nrecv ? found : found + room - nother;
    if (!k) {
        struct row *r = row_of(call, 0, 0, PEER_NONE);
        r->count++;
        r->ticks += ticks;
    }
    for (int i = 0; i < k; i++)
        P.rows[charged[i]->row].ticks += ticks / (uint64_t)k;
    if (found != few)
        free(found);
    maybe_flush(now);
}

/* The table as JSON, written whole to a temporary name and renamed: a reader never
 * sees half a file, and a program killed mid-write keeps the last. */
static void write_table(int finished)
{
    if (!P.dir[0])
        return;
    double tps = ticks_per_s();
    P.ticks_per_s = tps;
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/rank-%d.json", P.dir, P.rank);
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    P.writing = 1;
    fprintf(f,
            "{\"rank\": %d, \"ranks\": %d, \"node\": %d, \"host\": \"%s\", \"wall_s\": %.9g, "
            "\"finished\": %s, \"mpi\": \"%s\", \"rows\": [",
            P.rank, P.ranks, P.node[P.rank], P.host, mono_s() - P.start_s,
            finished ? "true" : "false", P.library);
    const char *sep = "";
    for (size_t i = 0; i < P.cap; i++) {
        struct row *r = &P.rows[i];
        if (r->call < 0)
            continue;
        long long low = r->bucket ? 1LL << (r->bucket - 1) : 0;
        static const char *const peers[] = {"null", "\"local\"", "\"remote\""};
        fprintf(f, "%s\n[\"%s\", %d, %lld, %s, %llu, %.9g, %llu, %.9g]", sep, call_names[r->call],
                r->comm_size, low, peers[r->peer], (unsigned long long)r->count,
                (double)r->ticks / tps, (unsigned long long)r->bytes, (double)r->overlap / tps);
        sep = ",";
    }
    fprintf(f, "]}\n");
    if (fclose(f) == 0)
        rename(tmp, path);
    else
        remove(tmp);
    P.writing = 0;
}

static void at_exit(void)
{
    if (P.on)
        write_table(0); /* exit without MPI_Finalize: what was recorded so far */
}

void profile_abort(void)
{
    if (P.on && !P.writing)
        write_table(0); /* the launcher kills the ranks: none reaches its exit */
}

/* A signal that ends the program (the launcher's SIGTERM once a rank failed, a fault):
 * the table is written once, then the signal goes on to the handler before ours (the
 * MPI library's) or to its default action. */
static const int fatal[] = {SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGILL};
#define NFATAL (sizeof fatal / sizeof *fatal)
static struct sigaction before_ours[NFATAL];

static void on_fatal(int sig, siginfo_t *info, void *context)
{
    (void)context;
    static volatile sig_atomic_t written;
    if (!written) {
        written = 1;
        profile_abort(); /* a write under way is left alone: the last whole file stays */
    }
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal[i] == sig)
            sigaction(sig, &before_ours[i], NULL);
    /* a fault returns to the instruction, which faults again under the handler before
     * ours; a signal sent is sent again, delivered once this handler returns */
    if (info->si_code <= 0 || sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGABRT)
        raise(sig);
}

static void catch_fatal(void)
{
    struct sigaction ours = {.sa_sigaction = on_fatal, .sa_flags = SA_SIGINFO};
    sigemptyset(&ours.sa_mask);
    for (size_t i = 0; i < NFATAL; i++) {
        struct sigaction old;
        if (sigaction(fatal[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) {
            before_ours[i] = old;
            sigaction(fatal[i], &ours, NULL);
        }
    }
}

void profile_begin(void)
{
    const char *dir = getenv("COMMSCOPE_PROFILE_DIR");
    snprintf(P.dir, sizeof P.dir, "%s", dir ? dir : "");
    PMPI_Comm_rank(MPI_COMM_WORLD, &P.rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &P.ranks);
    MPI_Comm local;
    int leader, len;
    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    PMPI_Allreduce(&P.rank, &leader, 1, MPI_INT, MPI_MIN, local);
    PMPI_Comm_free(&local);
    P.node = malloc((size_t)P.ranks * sizeof *P.node);
    PMPI_Allgather(&leader, 1, MPI_INT, P.node, 1, MPI_INT, MPI_COMM_WORLD);
    PMPI_Get_processor_name(P.host, &len);
    PMPI_Get_library_version(P.library, &len);
    P.library[strcspn(P.library, "\n")] = '\0'; /* its first line names it */
    for (char *text[] = {P.host, P.library}, **t = text; t < text + 2; t++)
        for (char *c = *t; *c; c++) /* kept a JSON string */
            if (*c == '"' || *c == '\\' || (unsigned char)*c < ' ')
                *c = ' ';
    grow_rows();
    /* a first rate over 0.2 ms, for a program shorter than a flush; each flush measures
     * it again over the whole run */
    double from = mono_s();
    uint64_t ticks = profile_ticks();
    while (mono_s() - from < 0.0002)
        ;
    P.ticks_per_s = (double)(profile_ticks() - ticks) / (mono_s() - from);
    P.start_s = mono_s();
    P.start_ticks = profile_ticks();
    P.next_flush = profile_ticks() + (uint64_t)(FLUSH_EVERY_S * P.ticks_per_s);
    P.on = 1;
    atexit(at_exit);
    catch_fatal();
}

void profile_end(void)
{
    if (!P.on)
        return;
    write_table(1);
    P.on = 0;
}
