/* Collective algorithms through MPI_T control variables (MPI-3.1 section
 * 14.3). Open MPI names coll/tuned's choices as an MPI_T enumeration of
 * coll_tuned_<coll>_algorithm, 0 being "ignore" (its own rules); MPICH's
 * MPIR_CVAR_<COLL>_INTRA_ALGORITHM is an integer whose description lists the
 * choices one per line, "name - what it does", in the order of their values,
 * "auto" (0) first (MPICH's maint/extractcvars generates both from one list). */
#include "algorithm.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernel.h"

/* Open MPI applies a forced algorithm only with its dynamic rules on. */
#define OMPI_DYNAMIC_RULES "coll_tuned_use_dynamic_rules"

static void mpit_open(void)
{
    static bool open;
    int provided;
    if (!open && MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS)
        open = true; /* kept open: MPI_T needs no finalize before exit */
}

static int cvar_index(const char *name)
{
    int index;
    mpit_open();
    return MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS ? index : -1;
}

static void add(struct algorithms *a, const char *name, size_t len, int value)
{
    a->names = realloc(a->names, (size_t)(a->n + 2) * sizeof *a->names);
    a->values = realloc(a->values, (size_t)(a->n + 1) * sizeof *a->values);
    if (!a->names || !a->values)
        die("out of memory listing algorithms");
    char *copy = xcalloc(len + 1, 1);
    memcpy(copy, name, len);
    a->names[a->n] = copy;
    a->values[a->n++] = value;
    a->names[a->n] = NULL;
}

static void from_enum(struct algorithms *a, MPI_T_enum e)
{
    int items;
    char name[128];
    int name_len = sizeof name;
    if (MPI_T_enum_get_info(e, &items, name, &name_len) != MPI_SUCCESS)
        return;
    for (int i = 0; i < items; i++) {
        int value;
        name_len = sizeof name;
        if (MPI_T_enum_get_item(e, i, &value, name, &name_len) == MPI_SUCCESS && value != 0)
            add(a, name, strlen(name), value);
    }
}

/* The choices an MPICH description lists after its first line, one per line as
 * "name - what it does", each given its value (0 first) in turn. */
static void each_described(const char *text, void (*take)(void *, const char *, size_t, int),
                           void *arg)
{
    int value = 0;
    for (const char *line = strchr(text, '\n'); line; line = strchr(line, '\n')) {
        line++;
        const char *end = line;
        while (*end && (isalnum((unsigned char)*end) || *end == '_'))
            end++;
        const char *dash = end;
        while (*dash == ' ' || *dash == '\t')
            dash++;
        if (end > line && *dash == '-')
            take(arg, line, (size_t)(end - line), value++);
    }
}

static void take_algorithm(void *a, const char *name, size_t len, int value)
{
    if (value > 0) /* 0 is auto: the library's own choice */
        add(a, name, len, value);
}

struct wanted {
    const char *name;
    int value;
};

static void take_wanted(void *arg, const char *name, size_t len, int value)
{
    struct wanted *w = arg;
    if (strlen(w->name) == len && strncmp(w->name, name, len) == 0)
        w->value = value;
}

static void read_companions(struct algorithms *a)
{
    int n = 0;
    size_t prefix = strlen(a->setting);
    if (MPI_T_cvar_get_num(&n) != MPI_SUCCESS)
        return;
    for (int i = 0; i < n; i++) {
        char name[256];
        int name_len = sizeof name, desc_len = 0, verbosity, bind, scope, count, value;
        MPI_Datatype type;
        MPI_T_enum e;
        MPI_T_cvar_handle handle;
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &e, NULL, &desc_len, &bind,
                                &scope) != MPI_SUCCESS ||
            type != MPI_INT || strncmp(name, a->setting, prefix) != 0 || name[prefix] != '_' ||
            MPI_T_cvar_handle_alloc(i, NULL, &handle, &count) != MPI_SUCCESS)
            continue;
        if (count == 1 && MPI_T_cvar_read(handle, &value) == MPI_SUCCESS) {
            a->companion_names = realloc(a->companion_names,
                                         (size_t)(a->companions + 1) * sizeof(char *));
            a->companion_values = realloc(a->companion_values,
                                          (size_t)(a->companions + 1) * sizeof(long long));
            if (!a->companion_names || !a->companion_values)
                die("out of memory listing algorithms");
            char *what = xcalloc(strlen(name + prefix + 1) + 1, 1);
            strcpy(what, name + prefix + 1);
            a->companion_names[a->companions] = what;
            a->companion_values[a->companions++] = value;
        }
        MPI_T_cvar_handle_free(&handle);
    }
}

/* MPICH's spelling of a collective in its variables: ALLREDUCE. */
static const char *upper_case(const char *collective, char *out, size_t len)
{
    size_t i = 0;
    for (; collective[i] && i + 1 < len; i++)
        out[i] = (char)toupper((unsigned char)collective[i]);
    out[i] = '\0';
    return out;
}

static void lookup(struct algorithms *a, const char *collective)
{
    char upper[64];
    upper_case(collective, upper, sizeof upper);
    const char *formats[] = {"coll_tuned_%s_algorithm", "MPIR_CVAR_%s_INTRA_ALGORITHM"};
    for (int f = 0; f < 2; f++) {
        snprintf(a->setting, sizeof a->setting, formats[f], f ? upper : collective);
        int index = cvar_index(a->setting);
        if (index < 0)
            continue;
        char name[128], desc[4096];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum e;
        if (MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type, &e, desc, &desc_len,
                                &bind, &scope) != MPI_SUCCESS ||
            type != MPI_INT)
            return;
        a->fixed = scope == MPI_T_SCOPE_CONSTANT || scope == MPI_T_SCOPE_READONLY;
        if (a->fixed)
            return;
        if (e != MPI_T_ENUM_NULL)
            from_enum(a, e);
        else
            each_described(desc, take_algorithm, a);
        read_companions(a);
        return;
    }
    /* Neither: name the one this library family would have (Open MPI has the switch). */
    bool ompi = cvar_index(OMPI_DYNAMIC_RULES) >= 0;
    snprintf(a->setting, sizeof a->setting, formats[!ompi], ompi ? collective : upper);
}

const struct algorithms *algorithms_of(const char *collective)
{
    static struct {
        const char *collective;
        struct algorithms a;
    } known[64];
    static int n;
    for (int i = 0; i < n; i++)
        if (strcmp(known[i].collective, collective) == 0)
            return &known[i].a;
    if (n == (int)(sizeof known / sizeof *known))
        die("more than %d collectives asked for their algorithms", n);
    known[n].collective = collective;
    lookup(&known[n].a, collective);
    return &known[n++].a;
}

/* An int or bool variable's handle and type (Open MPI's switches are MPI_C_BOOL). */
static MPI_T_cvar_handle handle_of(const char *name, MPI_Datatype *type)
{
    int index = cvar_index(name), count, name_len = 0, desc_len = 0, verbosity, bind, scope;
    MPI_T_enum e;
    MPI_T_cvar_handle handle;
    if (index < 0 ||
        MPI_T_cvar_get_info(index, NULL, &name_len, &verbosity, type, &e, NULL, &desc_len, &bind,
                            &scope) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS)
        die("cannot reach the MPI library's %s through MPI_T", name);
    return handle;
}

/* Every rank writes the same value (the variables' scope is all processes). */
static void cvar_write_int(const char *name, int value)
{
    MPI_Datatype type;
    MPI_T_cvar_handle handle = handle_of(name, &type);
    bool flag = value != 0;
    if (MPI_T_cvar_write(handle, type == MPI_C_BOOL ? (void *)&flag : (void *)&value) !=
        MPI_SUCCESS)
        die("the MPI library refused to set %s to %d through MPI_T", name, value);
    MPI_T_cvar_handle_free(&handle);
}

static int cvar_read_int(const char *name)
{
    MPI_Datatype type;
    MPI_T_cvar_handle handle = handle_of(name, &type);
    int value = 0;
    bool flag = false;
    if (MPI_T_cvar_read(handle, type == MPI_C_BOOL ? (void *)&flag : (void *)&value) !=
        MPI_SUCCESS)
        die("cannot read the MPI library's %s through MPI_T", name);
    MPI_T_cvar_handle_free(&handle);
    return type == MPI_C_BOOL ? flag : value;
}

/* A variable's value as the launch set it, read the first time it is asked
 * for, which must be before the first write: what a case that leaves the
 * choice to the library writes back. */
static int launched(const char *name)
{
    static struct {
        char name[96];
        int value;
    } seen[64];
    static int n;
    for (int i = 0; i < n; i++)
        if (strcmp(seen[i].name, name) == 0)
            return seen[i].value;
    if (n == (int)(sizeof seen / sizeof *seen))
        die("more than %d MPI_T variables set per case", n);
    snprintf(seen[n].name, sizeof seen[n].name, "%s", name);
    seen[n].value = cvar_read_int(name);
    return seen[n++].value;
}

/* MPICH's CH4 device serves allreduce, bcast and reduce among the ranks of one
 * node by its own shared-memory algorithm (release_gather), which never reaches
 * MPIR_CVAR_<COLL>_INTRA_ALGORITHM; MPIR_CVAR_<COLL>_POSIX_INTRA_ALGORITHM=mpir
 * hands them to it (MPICH 5.0, src/mpid/ch4/shm/posix/posix_coll.h). The value
 * of mpir: the index of its line in the variable's description. */
static int posix_mpir(const char *collective, char *name, size_t len)
{
    char upper[64];
    snprintf(name, len, "MPIR_CVAR_%s_POSIX_INTRA_ALGORITHM",
             upper_case(collective, upper, sizeof upper));
    int index = cvar_index(name), name_len = 0, desc_len, verbosity, bind, scope;
    char desc[4096];
    MPI_Datatype type;
    MPI_T_enum e;
    struct wanted mpir = {"mpir", -1};
    desc_len = sizeof desc;
    if (index >= 0 && MPI_T_cvar_get_info(index, NULL, &name_len, &verbosity, &type, &e, desc,
                                          &desc_len, &bind, &scope) == MPI_SUCCESS)
        each_described(desc, take_wanted, &mpir);
    return mpir.value;
}

MPI_Comm algorithm_comm(const char *collective, const char *name, MPI_Comm comm)
{
    const struct algorithms *a = algorithms_of(collective);
    static bool forced; /* in this launch so far: until then, nothing to give back */
    MPI_Comm dup;
    if (!name && !forced) {
        CHECK_MPI(MPI_Comm_dup(comm, &dup));
        return dup;
    }
    forced = true;
    int value = -1;
    for (int i = 0; name && i < a->n; i++)
        if (strcmp(a->names[i], name) == 0)
            value = a->values[i];
    if (name && value < 0)
        die("--param algorithm=%s: the library has no such %s algorithm", name, collective);
    /* Each variable's own value is read before any case writes it. */
    bool rules = cvar_index(OMPI_DYNAMIC_RULES) >= 0;
    char posix[96];
    int mpir = posix_mpir(collective, posix, sizeof posix);
    int own_rules = rules ? launched(OMPI_DYNAMIC_RULES) : 0;
    int own = a->n ? launched(a->setting) : 0, own_posix = mpir >= 0 ? launched(posix) : 0;
    if (rules)
        cvar_write_int(OMPI_DYNAMIC_RULES, name ? 1 : own_rules);
    if (a->n)
        cvar_write_int(a->setting, name ? value : own);
    if (mpir >= 0)
        cvar_write_int(posix, name ? mpir : own_posix);
    CHECK_MPI(MPI_Comm_dup(comm, &dup));
    return dup;
}
