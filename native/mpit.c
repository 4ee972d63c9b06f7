/* The library's own word on its transport settings, read through the MPI
 * tool information interface (MPI_T, MPI-3.1 section 14.3): the control
 * variables that choose transports, as the library holds them after
 * MPI_Init. They say what the library was told to use; commscope's latency
 * figures then show whether it did. */
#include "mpit.h"

#include <stdlib.h>
#include <string.h>

#include "jsonl.h"

/* Open MPI's framework selections and the networks its TCP transport may
 * use; MPICH's CH4 shared-memory and netmod CVARs. Also how each library
 * waits when idle (yield or spin), which decides what oversubscribed figures
 * mean. */
static const char *const transport_cvars[] = {
    "pml", "btl", "btl_tcp_if_include", "btl_tcp_if_exclude", "mpi_yield_when_idle", "MPIR_CVAR_NOLOCAL", "MPIR_CVAR_CH4_NETMOD",
    "MPIR_CVAR_CH4_SHM_POSIX_EAGER", "MPIR_CVAR_CH4_PROGRESS_THROTTLE",
    "MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT",
};

static bool wanted(const char *name)
{
    for (size_t i = 0; i < sizeof transport_cvars / sizeof *transport_cvars; i++)
        if (strcmp(name, transport_cvars[i]) == 0)
            return true;
    return false;
}

static void write_cvar(struct jsonl *j, int index, const char *name,
                       MPI_Datatype type)
{
    MPI_T_cvar_handle handle;
    int count = 0;
    if (MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS)
        return;
    if (type == MPI_CHAR && count >= 0) {
        char *text = calloc((size_t)count + 1, 1);
        if (text && MPI_T_cvar_read(handle, text) == MPI_SUCCESS)
            jsonl_str(j, name, text);
        free(text);
    } else if (type == MPI_INT && count == 1) {
        int value;
        if (MPI_T_cvar_read(handle, &value) == MPI_SUCCESS)
            jsonl_int(j, name, value);
    } else if (type == MPI_C_BOOL && count == 1) {
        bool value;
        if (MPI_T_cvar_read(handle, &value) == MPI_SUCCESS)
            jsonl_bool(j, name, value);
    }
    MPI_T_cvar_handle_free(&handle);
}

void mpit_write_transport(struct jsonl *j)
{
    int provided, n = 0;
    /* MPI_T failures are not measurement failures: the field is then empty. */
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        jsonl_null(j, "library_transport");
        return;
    }
    jsonl_open(j, "library_transport", '{');
    if (MPI_T_cvar_get_num(&n) != MPI_SUCCESS)
        n = 0;
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc;
        int verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype,
                                desc, &desc_len, &bind, &scope) == MPI_SUCCESS &&
            bind == MPI_T_BIND_NO_OBJECT && wanted(name))
            write_cvar(j, i, name, type);
    }
    jsonl_close(j, '}');
    MPI_T_finalize();
}
