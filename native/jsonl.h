/* A small JSON Lines writer: one record is built in memory and written to
 * stdout (or the --output file) as one line, then flushed, so a reader sees whole records as soon
 * as they exist (docs/native.md, "Records"). */
#ifndef COMMSCOPE_JSONL_H
#define COMMSCOPE_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSONL_MAX_DEPTH 8

struct jsonl {
    char *buf;
    size_t len, cap;
    unsigned depth;
    bool first[JSONL_MAX_DEPTH]; /* no member written yet at this depth */
};

/* Sends this process's records to f instead of stdout; set once, at start. */
void jsonl_output(FILE *f);
/* Starts a record {"type":TYPE, ...}. */
void jsonl_begin(struct jsonl *j, const char *type);
/* Closes the record, writes it with a newline, flushes, frees the buffer. */
void jsonl_end(struct jsonl *j);

/* Values. key is the member name inside an object, NULL inside an array. */
void jsonl_str(struct jsonl *j, const char *key, const char *s); /* NULL: null */
void jsonl_num(struct jsonl *j, const char *key, double x); /* %.17g */
void jsonl_int(struct jsonl *j, const char *key, long long x);
void jsonl_uint(struct jsonl *j, const char *key, uint64_t x);
void jsonl_bool(struct jsonl *j, const char *key, bool b);
void jsonl_null(struct jsonl *j, const char *key);

/* Nested containers: bracket is '[' or '{' to open, ']' or '}' to close. */
void jsonl_open(struct jsonl *j, const char *key, char bracket);
void jsonl_close(struct jsonl *j, char bracket);
/* A list of n numbers, each as jsonl_num writes it. */
void jsonl_nums(struct jsonl *j, const char *key, const double *x, int n);

#endif
