#include "records.h"

#include <string.h>

#include "jsonl.h"

static const char *variant_key, *variant_value;

void record_variant(const char *key, const char *value)
{
    variant_key = key;
    variant_value = value;
}

static void case_fields(struct jsonl *j, const char *kernel, const char *send_mode, size_t bytes)
{
    jsonl_str(j, "kernel", kernel);
    jsonl_str(j, "send_mode", send_mode);
    jsonl_uint(j, "bytes", bytes);
    if (!variant_key)
        return;
    jsonl_open(j, "variant", '{');
    jsonl_str(j, variant_key, variant_value);
    jsonl_close(j, '}');
}

/* A list of per-rank lists: values[rank * n + i]. */
static void rank_lists(struct jsonl *j, const char *key, const double *values, int ranks, int n)
{
    jsonl_open(j, key, '[');
    for (int rank = 0; rank < ranks; rank++)
        jsonl_nums(j, NULL, values + (size_t)rank * (size_t)n, n);
    jsonl_close(j, ']');
}

static void placement(struct jsonl *j, const struct context_record *r)
{
    /* Distinct hosts in rank order of first appearance. */
    jsonl_open(j, "hosts", '[');
    for (int rank = 0; rank < r->ranks; rank++) {
        const char *host = r->hosts + (size_t)rank * r->host_chars;
        bool seen = false;
        for (int q = 0; q < rank && !seen; q++)
            seen = strcmp(r->hosts + (size_t)q * r->host_chars, host) == 0;
        if (!seen)
            jsonl_str(j, NULL, host);
    }
    jsonl_close(j, ']');
    jsonl_open(j, "placement", '[');
    for (int rank = 0; rank < r->ranks; rank++) {
        jsonl_open(j, NULL, '{');
        jsonl_int(j, "rank", rank);
        jsonl_str(j, "host", r->hosts + (size_t)rank * r->host_chars);
        if (r->cpus[rank] >= 0)
            jsonl_int(j, "cpu", r->cpus[rank]);
        else
            jsonl_null(j, "cpu");
        jsonl_str(j, "binding", r->bindings + (size_t)rank * r->host_chars);
        jsonl_int(j, "shm_node", r->nodes[rank]);
        jsonl_close(j, '}');
    }
    jsonl_close(j, ']');
}

static void cvars(struct jsonl *j, const char *key, const struct cvar_list *l)
{
    if (!l->available) {
        jsonl_null(j, key);
        return;
    }
    jsonl_open(j, key, '{');
    for (int i = 0; i < l->n; i++) {
        const struct cvar *v = &l->v[i];
        if (v->type == CVAR_TEXT)
            jsonl_str(j, v->name, v->text);
        else if (v->type == CVAR_INT)
            jsonl_int(j, v->name, v->value);
        else
            jsonl_bool(j, v->name, v->value != 0);
    }
    jsonl_close(j, '}');
}

void record_context(const struct context_record *r)
{
    struct jsonl j;
    jsonl_begin(&j, "context");
    jsonl_int(&j, "schema", RECORDS_SCHEMA);
    jsonl_str(&j, "commscope_version", r->commscope_version);
    jsonl_str(&j, "mpi_library", r->mpi_library);
    jsonl_str(&j, "mpi_library_version", r->mpi_library_version);
    jsonl_str(&j, "mpi_standard", r->mpi_standard);
    jsonl_bool(&j, "large_count", r->large_count);
    jsonl_int(&j, "ranks", r->ranks);
    placement(&j, r);
    cvars(&j, "library_transport", &r->transport);
    cvars(&j, "library_protocols", &r->protocols);
    jsonl_open(&j, "timer", '{');
    jsonl_str(&j, "name", "MPI_Wtime");
    jsonl_num(&j, "wtick_s", r->wtick_s);
    jsonl_num(&j, "resolution_s", r->resolution_s);
    jsonl_num(&j, "overhead_s", r->overhead_s);
    jsonl_num(&j, "barrier_s", r->barrier_s);
    jsonl_num(&j, "barrier_median_s", r->barrier_median_s);
    jsonl_close(&j, '}');
    jsonl_str(&j, "compiler", r->compiler);
    jsonl_open(&j, "argv", '[');
    for (int i = 0; i < r->argc; i++)
        jsonl_str(&j, NULL, r->argv[i]);
    jsonl_close(&j, ']');
    jsonl_str(&j, "utc", r->utc);
    jsonl_str(&j, "kernel", r->kernel);
    jsonl_end(&j);
}

void record_case_start(const char *kernel, const char *send_mode, size_t bytes)
{
    struct jsonl j;
    jsonl_begin(&j, "case_start");
    case_fields(&j, kernel, send_mode, bytes);
    jsonl_end(&j);
}

void record_skip(const char *kernel, const char *send_mode, size_t bytes, const char *reason)
{
    struct jsonl j;
    jsonl_begin(&j, "skip");
    case_fields(&j, kernel, send_mode, bytes);
    jsonl_str(&j, "reason", reason);
    jsonl_end(&j);
}

/* How the samples were taken: the sync method, what one sample is (one
 * call or a batch of iterations), the stopping rule of
 * --precision, and what the method says of itself (--sync window: the
 * window and the clocks). */
static void how_sampled(struct jsonl *j, const struct case_record *r)
{
    jsonl_str(j, "sync", r->sync);
    jsonl_str(j, "sample", r->sample);
    if (r->slowest_rank >= 0)
        jsonl_int(j, "slowest_rank", r->slowest_rank);
    jsonl_num(j, "case_s", r->case_s);
    if (r->adaptive) {
        jsonl_num(j, "precision_target", r->precision_target);
        jsonl_num(j, "max_time_s", r->max_time_s);
        jsonl_num(j, "sampling_s", r->sampling_s);
        jsonl_bool(j, "capped", r->capped);
    }
    if (r->sync_report)
        r->sync_report(r->sampled, j);
}

void record_case_open(struct jsonl *j, const struct case_record *r)
{
    jsonl_begin(j, "case");
    case_fields(j, r->kernel, r->send_mode, r->bytes);
    jsonl_int(j, "ranks", r->ranks);
    if (r->window)
        jsonl_int(j, "window", r->window);
    else
        jsonl_null(j, "window");
    jsonl_int(j, "batch", r->batch);
    jsonl_uint(j, "warmup_iterations", r->warmup_iterations);
    jsonl_bool(j, "validated", r->validated);
    jsonl_str(j, "timed_by", timed_by_names[r->timed_by]);
    jsonl_nums(j, "samples_s", r->samples_s, r->samples);
    rank_lists(j, "rank_samples_s", r->rank_samples_s, r->ranks, r->samples);
    how_sampled(j, r);
    if (r->copy_s > 0)
        jsonl_num(j, "copy_s", r->copy_s);
    else
        jsonl_null(j, "copy_s");
    jsonl_int(j, "copy_ranks", r->copy_ranks);
    jsonl_str(j, "cache", r->cold_cache ? "cold" : "warm");
    jsonl_uint(j, "llc_bytes", r->llc_bytes);
    jsonl_uint(j, "working_set_bytes", r->working_set_bytes);
    if (r->phase_count == 0)
        return;
    jsonl_open(j, "phase_samples_s", '{');
    for (int p = 0; p < r->phase_count; p++)
        rank_lists(j, r->phase_names[p], r->phase_samples_s[p], r->ranks, r->samples);
    jsonl_close(j, '}');
}

void record_case_close(struct jsonl *j)
{
    jsonl_end(j);
}

void record_error(const struct error_record *r)
{
    struct jsonl j;
    jsonl_begin(&j, "error");
    jsonl_str(&j, "kernel", r->in_case ? r->kernel : NULL);
    jsonl_str(&j, "send_mode", r->in_case ? r->send_mode : NULL);
    if (r->in_case)
        jsonl_uint(&j, "bytes", r->bytes);
    else
        jsonl_null(&j, "bytes");
    jsonl_int(&j, "rank", r->rank);
    jsonl_str(&j, "message", r->message);
    if (r->mismatch) {
        jsonl_uint(&j, "iteration", r->iteration);
        jsonl_int(&j, "source_rank", r->source_rank);
        jsonl_uint(&j, "offset", r->offset);
        jsonl_uint(&j, "expected", r->expected);
        jsonl_uint(&j, "got", r->got);
    }
    jsonl_end(&j);
}

void record_end(long long cases)
{
    struct jsonl j;
    jsonl_begin(&j, "end");
    jsonl_int(&j, "cases", cases);
    jsonl_end(&j);
}
