#include "records.h"

#include "jsonl.h"

static void case_fields(struct jsonl *j, const char *kernel,
                        const char *send_mode, size_t bytes)
{
    jsonl_str(j, "kernel", kernel);
    jsonl_str(j, "send_mode", send_mode);
    jsonl_uint(j, "bytes", bytes);
}

void record_case_start(const char *kernel, const char *send_mode, size_t bytes)
{
    struct jsonl j;
    jsonl_begin(&j, "case_start");
    case_fields(&j, kernel, send_mode, bytes);
    jsonl_end(&j);
}

void record_skip(const char *kernel, const char *send_mode, size_t bytes,
                 const char *reason)
{
    struct jsonl j;
    jsonl_begin(&j, "skip");
    case_fields(&j, kernel, send_mode, bytes);
    jsonl_str(&j, "reason", reason);
    jsonl_end(&j);
}

static void samples(struct jsonl *j, const char *key, const double *s, int n)
{
    jsonl_open(j, key, '[');
    for (int i = 0; i < n; i++)
        jsonl_num(j, NULL, s[i]);
    jsonl_close(j, ']');
}

void record_rank_lists(struct jsonl *j, const char *key, const double *values,
                       int ranks, int n)
{
    jsonl_open(j, key, '[');
    for (int rank = 0; rank < ranks; rank++)
        samples(j, NULL, values + (size_t)rank * (size_t)n, n);
    jsonl_close(j, ']');
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
    jsonl_str(j, "timed_by", r->timed_by == TIMED_BY_MAX ? "max" : "origin");
    samples(j, "samples_s", r->samples_s, r->samples);
    record_rank_lists(j, "rank_samples_s", r->rank_samples_s, r->ranks,
                      r->samples);
}

void record_case_close(struct jsonl *j)
{
    jsonl_end(j);
}

void record_end(long long cases)
{
    struct jsonl j;
    jsonl_begin(&j, "end");
    jsonl_int(&j, "cases", cases);
    jsonl_end(&j);
}
