/* The library's own word on its transport and protocol settings, read
 * through the MPI tool information interface (MPI_T, MPI-3.1 section 14.3):
 * control variables as the library holds them after MPI_Init. They say what
 * the library was told to do; commscope's latency figures then show whether
 * it did (`probe protocols` sets measured switches beside the limits). */
#include "mpit.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Open MPI's framework selections and the networks its TCP transport may
 * use; MPICH's CH4 shared-memory and netmod CVARs. Also how each library
 * waits when idle (yield or spin), which decides what oversubscribed figures
 * mean. */
static const char *const transport_cvars[] = {
    "pml",
    "btl",
    "btl_tcp_if_include",
    "btl_tcp_if_exclude",
    "mpi_yield_when_idle",
    "MPIR_CVAR_NOLOCAL",
    "MPIR_CVAR_CH4_NETMOD",
    "MPIR_CVAR_CH4_SHM_POSIX_EAGER",
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE",
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT",
    NULL,
};

/* Sizes in bytes. Open MPI's ob1 sends a message eagerly while it and its
 * header fit the BTL's eager limit, else by rendezvous whose first fragment
 * is the rndv eager limit, the rest in fragments of max_send_size. MPICH CH4
 * copies through shared-memory cells of the cell size and switches to a
 * single copy (CMA, XPMEM) at their thresholds; its OFI netmod sends eagerly
 * below its eager threshold (-1: the provider's limit). */
static const char *const protocol_cvars[] = {
    "btl_sm_eager_limit",
    "btl_sm_rndv_eager_limit",
    "btl_sm_max_send_size",
    "btl_tcp_eager_limit",
    "btl_tcp_rndv_eager_limit",
    "btl_tcp_max_send_size",
    "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE",
    "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD",
    "MPIR_CVAR_CH4_IPC_XPMEM_P2P_THRESHOLD",
    "MPIR_CVAR_CH4_OFI_EAGER_THRESHOLD",
    "MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE",
    NULL,
};

static const char *const *const sets[] = {
    [MPIT_TRANSPORT] = transport_cvars,
    [MPIT_PROTOCOLS] = protocol_cvars,
};

/* Our own copy of the name (the list's names outlive MPI_T), or NULL. */
static const char *wanted(const char *const *names, const char *name)
{
    for (; *names; names++)
        if (strcmp(name, *names) == 0)
            return *names;
    return NULL;
}

static int listed(const char *const *names)
{
    int n = 0;
    while (names[n])
        n++;
    return n;
}

/* An integer cvar of any of the types libraries use for sizes and counts. */
static bool read_integer(MPI_T_cvar_handle handle, MPI_Datatype type, long long *out)
{
    union {
        int i;
        unsigned u;
        long l;
        unsigned long ul;
        long long ll;
        unsigned long long ull;
    } v;
    if (MPI_T_cvar_read(handle, &v) != MPI_SUCCESS)
        return false;
    if (type == MPI_INT)
        *out = v.i;
    else if (type == MPI_UNSIGNED)
        *out = v.u;
    else if (type == MPI_LONG)
        *out = v.l;
    else if (type == MPI_UNSIGNED_LONG)
        *out = (long long)v.ul;
    else if (type == MPI_LONG_LONG)
        *out = v.ll;
    else
        *out = (long long)v.ull;
    return true;
}

static bool integer_type(MPI_Datatype type)
{
    return type == MPI_INT || type == MPI_UNSIGNED || type == MPI_LONG ||
           type == MPI_UNSIGNED_LONG || type == MPI_LONG_LONG || type == MPI_UNSIGNED_LONG_LONG;
}

/* Reads cvar `index` into v; false when it cannot be read or has a type
 * other than a string, an integer or a bool. */
static bool read_cvar(int index, MPI_Datatype type, struct cvar *v)
{
    MPI_T_cvar_handle handle;
    int count = 0;
    bool ok = false;
    if (MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS)
        return false;
    if (type == MPI_CHAR && count >= 0) {
        char *text = xcalloc((size_t)count + 1, 1);
        ok = MPI_T_cvar_read(handle, text) == MPI_SUCCESS;
        v->type = CVAR_TEXT;
        v->text = text;
        if (!ok)
            free(text);
    } else if (integer_type(type) && count == 1) {
        long long value = 0;
        ok = read_integer(handle, type, &value);
        *v = (struct cvar){.type = CVAR_INT, .value = value};
    } else if (type == MPI_C_BOOL && count == 1) {
        bool value;
        ok = MPI_T_cvar_read(handle, &value) == MPI_SUCCESS;
        *v = (struct cvar){.type = CVAR_BOOL, .value = value};
    }
    MPI_T_cvar_handle_free(&handle);
    return ok;
}

struct cvar_list mpit_read(enum mpit_set set)
{
    const char *const *names = sets[set];
    struct cvar_list l = {0};
    int provided, n = 0;
    /* MPI_T failures are not measurement failures: the list is then empty. */
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return l;
    l.available = true;
    int cap = listed(names);
    l.v = xcalloc((size_t)cap, sizeof *l.v);
    if (MPI_T_cvar_get_num(&n) != MPI_SUCCESS)
        n = 0;
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc;
        int verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, desc, &desc_len,
                                &bind, &scope) != MPI_SUCCESS ||
            bind != MPI_T_BIND_NO_OBJECT)
            continue;
        const char *known = wanted(names, name);
        if (known && l.n < cap && read_cvar(i, type, &l.v[l.n])) {
            l.v[l.n].name = known;
            l.n++;
        }
    }
    MPI_T_finalize();
    return l;
}

void mpit_free(struct cvar_list *l)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].type == CVAR_TEXT)
            free((char *)l->v[i].text);
    free(l->v);
}
