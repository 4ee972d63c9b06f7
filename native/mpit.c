/* The library's own word on its transport settings, read through the MPI
 * tool information interface (MPI_T, MPI-3.1 section 14.3): the control
 * variables that choose transports, as the library holds them after
 * MPI_Init. They say what the library was told to use; commscope's latency
 * figures then show whether it did. */
#include "mpit.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Open MPI's framework selections and the networks its TCP transport may
 * use; MPICH's CH4 shared-memory and netmod CVARs. Also how each library
 * waits when idle (yield or spin), which decides what oversubscribed figures
 * mean. */
static const char *const transport_cvars[] = {
    "pml", "btl", "btl_tcp_if_include", "btl_tcp_if_exclude", "mpi_yield_when_idle", "MPIR_CVAR_NOLOCAL", "MPIR_CVAR_CH4_NETMOD",
    "MPIR_CVAR_CH4_SHM_POSIX_EAGER", "MPIR_CVAR_CH4_PROGRESS_THROTTLE",
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT",
};

/* Our own copy of the name (the list's names outlive MPI_T), or NULL. */
static const char *wanted(const char *name)
{
    for (size_t i = 0; i < sizeof transport_cvars / sizeof *transport_cvars; i++)
        if (strcmp(name, transport_cvars[i]) == 0)
            return transport_cvars[i];
    return NULL;
}

/* Reads cvar `index` into v; false when it cannot be read or has a type
 * other than a string, an int or a bool. */
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
    } else if (type == MPI_INT && count == 1) {
        int value;
        ok = MPI_T_cvar_read(handle, &value) == MPI_SUCCESS;
        *v = (struct cvar){.type = CVAR_INT, .value = value};
    } else if (type == MPI_C_BOOL && count == 1) {
        bool value;
        ok = MPI_T_cvar_read(handle, &value) == MPI_SUCCESS;
        *v = (struct cvar){.type = CVAR_BOOL, .value = value};
    }
    MPI_T_cvar_handle_free(&handle);
    return ok;
}

struct cvar_list mpit_transport(void)
{
    struct cvar_list l = {0};
    int provided, n = 0;
    /* MPI_T failures are not measurement failures: the list is then empty. */
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return l;
    l.available = true;
    int cap = (int)(sizeof transport_cvars / sizeof *transport_cvars);
    l.v = xcalloc((size_t)cap, sizeof *l.v);
    if (MPI_T_cvar_get_num(&n) != MPI_SUCCESS)
        n = 0;
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc;
        int verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype,
                                desc, &desc_len, &bind, &scope) != MPI_SUCCESS ||
            bind != MPI_T_BIND_NO_OBJECT)
            continue;
        const char *known = wanted(name);
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
