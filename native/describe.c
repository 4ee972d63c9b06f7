#include "describe.h"

#include <stdio.h>

#include "algorithm.h"
#include "jsonl.h"
#include "kernel.h"
#include "mpi_features.h"
#include "records.h"
#include "sync.h"

static void strings(struct jsonl *j, const char *key, const char *const *v)
{
    jsonl_open(j, key, '[');
    for (int i = 0; v && v[i]; i++)
        jsonl_str(j, NULL, v[i]);
    jsonl_close(j, ']');
}

static void needs(struct jsonl *j, enum feature f)
{
    if (f)
        jsonl_str(j, "needs", features[f].name);
    else
        jsonl_null(j, "needs");
}

static void modes(struct jsonl *j, unsigned bits)
{
    jsonl_open(j, "modes", '[');
    for (int m = 0; m < SEND_MODE_COUNT; m++)
        if (bits & SEND_MODE_BIT(m))
            jsonl_str(j, NULL, send_mode_names[m]);
    jsonl_close(j, ']');
}

static void param(struct jsonl *j, const struct kernel *k, const struct kparam *p)
{
    jsonl_open(j, NULL, '{');
    jsonl_str(j, "name", p->name);
    jsonl_str(j, "kind", param_kind_names[p->kind]);
    jsonl_str(j, "default", p->def);
    jsonl_str(j, "help", p->help);
    if (kparam_choices(k, p))
        strings(j, "choices", kparam_choices(k, p));
    else
        jsonl_null(j, "choices");
    if (p->elements) {
        jsonl_open(j, "elements", '{');
        for (int i = 0; p->choices[i]; i++) {
            if (!p->elements[i].bytes)
                continue;
            jsonl_open(j, p->choices[i], '{');
            jsonl_str(j, "type", p->elements[i].type);
            jsonl_uint(j, "bytes", p->elements[i].bytes);
            jsonl_close(j, '}');
        }
        jsonl_close(j, '}');
    } else {
        jsonl_null(j, "elements");
    }
    if (p->kind == PARAM_ALGORITHM) { /* the library's variable, and each choice's value */
        const struct algorithms *a = algorithms_of(k->name);
        jsonl_open(j, "algorithm", '{');
        jsonl_str(j, "setting", a->setting);
        jsonl_bool(j, "fixed", a->fixed);
        jsonl_open(j, "values", '[');
        for (int i = 0; i < a->n; i++)
            jsonl_int(j, NULL, a->values[i]);
        jsonl_close(j, ']');
        jsonl_open(j, "companions", '{');
        for (int i = 0; i < a->companions; i++)
            jsonl_int(j, a->companion_names[i], a->companion_values[i]);
        jsonl_close(j, '}');
        jsonl_close(j, '}');
    } else {
        jsonl_null(j, "algorithm");
    }
    needs(j, p->needs);
    modes(j, p->modes);
    jsonl_bool(j, "binds_buffers", p->binds_buffers);
    jsonl_close(j, '}');
}

static void kernel(struct jsonl *j, const struct kernel *k)
{
    jsonl_open(j, NULL, '{');
    jsonl_str(j, "name", k->name);
    jsonl_str(j, "description", k->description);
    jsonl_str(j, "family", kernel_family_names[k->family]);
    jsonl_int(j, "min_ranks", k->min_ranks);
    jsonl_int(j, "ranks_multiple", k->ranks_multiple ? k->ranks_multiple : 1);
    if (k->max_ranks)
        jsonl_int(j, "max_ranks", k->max_ranks);
    else
        jsonl_null(j, "max_ranks");
    modes(j, k->modes);
    needs(j, k->needs);
    jsonl_str(j, "timed_by", timed_by_names[k->timed_by]);
    jsonl_bool(j, "cold_cache", k->cold_cache);
    if (k->default_window)
        jsonl_int(j, "default_window", k->default_window);
    else
        jsonl_null(j, "default_window");
    strings(j, "phases", k->phases);
    jsonl_str(j, "sample", sample_kind_names[kernel_sample_kind(k)]);
    if (k->sample_phase)
        jsonl_str(j, "sample_phase", k->sample_phase);
    else
        jsonl_null(j, "sample_phase");
    jsonl_open(j, "params", '[');
    for (const struct kparam *p = k->params; p && p->name; p++)
        param(j, k, p);
    jsonl_close(j, ']');
    jsonl_close(j, '}');
}

void describe_write(void)
{
    struct jsonl j;
    jsonl_begin(&j, "describe");
    jsonl_int(&j, "records_schema", RECORDS_SCHEMA);
    jsonl_open(&j, "send_modes", '[');
    for (int m = 0; m < SEND_MODE_COUNT; m++)
        jsonl_str(&j, NULL, send_mode_names[m]);
    jsonl_close(&j, ']');
    jsonl_open(&j, "sync_methods", '[');
    for (int i = 0; sync_methods[i]; i++)
        jsonl_str(&j, NULL, sync_methods[i]->name);
    jsonl_close(&j, ']');
    jsonl_uint(&j, "window_bytes_max", WINDOW_BYTES_MAX);
    jsonl_open(&j, "param_kinds", '[');
    for (int kind = 0; kind < PARAM_KIND_COUNT; kind++)
        jsonl_str(&j, NULL, param_kind_names[kind]);
    jsonl_close(&j, ']');
    char version[32];
    snprintf(version, sizeof version, "%d.%d", MPI_VERSION, MPI_SUBVERSION);
    jsonl_str(&j, "mpi_version", version); /* of the mpi.h built against */
    jsonl_open(&j, "features", '{');
    for (int f = FEATURE_NONE + 1; f < FEATURE_COUNT; f++) {
        jsonl_open(&j, features[f].name, '{');
        jsonl_bool(&j, "present", features[f].present);
        jsonl_str(&j, "calls", features[f].calls);
        jsonl_close(&j, '}');
    }
    jsonl_close(&j, '}');
    jsonl_open(&j, "kernels", '[');
    for (size_t i = 0; kernel_at(i); i++)
        kernel(&j, kernel_at(i));
    jsonl_close(&j, ']');
    jsonl_end(&j);
}
