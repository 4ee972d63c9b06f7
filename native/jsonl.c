#include "jsonl.h"

#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A record cannot be built (out of memory, or nested deeper than
 * JSONL_MAX_DEPTH): an error record could not be built either, so say it on
 * stderr and end the job. */
static _Noreturn void writer_failed(const char *why)
{
    fprintf(stderr, "commscope-native: cannot write a record: %s\n", why);
    MPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

static void put(struct jsonl *j, const char *s, size_t n)
{
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (j->len + n + 1 > cap)
            cap *= 2;
        char *buf = realloc(j->buf, cap);
        if (!buf)
            writer_failed("out of memory");
        j->buf = buf;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
}

static void puts_(struct jsonl *j, const char *s)
{
    put(j, s, strlen(s));
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629, no overlongs or
 * surrogates), 0 if ill-formed: such bytes become U+FFFD so that every
 * record stays valid JSON whatever argv or the MPI library hands us. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

static void put_string(struct jsonl *j, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    put(j, "\"", 1);
    while (*p) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            put(j, esc, 2);
            p++;
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            puts_(j, esc);
            p++;
        } else {
            size_t n = utf8_len(p);
            if (n == 0) {
                puts_(j, "\\ufffd");
                p++;
            } else {
                put(j, (const char *)p, n);
                p += n;
            }
        }
    }
    put(j, "\"", 1);
}

/* Comma and member name before a value. */
static void member(struct jsonl *j, const char *key)
{
    if (!j->first[j->depth])
        put(j, ",", 1);
    j->first[j->depth] = false;
    if (key) {
        put_string(j, key);
        put(j, ":", 1);
    }
}

void jsonl_begin(struct jsonl *j, const char *type)
{
    *j = (struct jsonl){0};
    put(j, "{", 1);
    j->first[0] = true;
    jsonl_str(j, "type", type);
}

/* Where whole records go: stdout unless jsonl_output chose a file. */
static FILE *sink;

void jsonl_output(FILE *f)
{
    sink = f;
}

void jsonl_end(struct jsonl *j)
{
    FILE *out = sink ? sink : stdout;
    put(j, "}\n", 2);
    fwrite(j->buf, 1, j->len, out);
    fflush(out);
    free(j->buf);
    *j = (struct jsonl){0};
}

void jsonl_str(struct jsonl *j, const char *key, const char *s)
{
    member(j, key);
    if (s)
        put_string(j, s);
    else
        puts_(j, "null");
}

void jsonl_num(struct jsonl *j, const char *key, double x)
{
    char text[32];
    member(j, key);
    /* JSON has no Inf or NaN. */
    if (!isfinite(x)) {
        puts_(j, "null");
        return;
    }
    snprintf(text, sizeof text, "%.17g", x);
    puts_(j, text);
}

void jsonl_int(struct jsonl *j, const char *key, long long x)
{
    char text[32];
    member(j, key);
    snprintf(text, sizeof text, "%lld", x);
    puts_(j, text);
}

void jsonl_uint(struct jsonl *j, const char *key, uint64_t x)
{
    char text[32];
    member(j, key);
    snprintf(text, sizeof text, "%" PRIu64, x);
    puts_(j, text);
}

void jsonl_bool(struct jsonl *j, const char *key, bool b)
{
    member(j, key);
    puts_(j, b ? "true" : "false");
}

void jsonl_null(struct jsonl *j, const char *key)
{
    member(j, key);
    puts_(j, "null");
}

void jsonl_open(struct jsonl *j, const char *key, char bracket)
{
    member(j, key);
    put(j, &bracket, 1);
    if (j->depth + 1 >= JSONL_MAX_DEPTH)
        writer_failed("nested too deep");
    j->first[++j->depth] = true;
}

void jsonl_close(struct jsonl *j, char bracket)
{
    put(j, &bracket, 1);
    j->depth--;
}

void jsonl_nums(struct jsonl *j, const char *key, const double *x, int n)
{
    jsonl_open(j, key, '[');
    for (int i = 0; i < n; i++)
        jsonl_num(j, NULL, x[i]);
    jsonl_close(j, ']');
}
