/* The command line (docs/native.md, "Command line"), parsed once into a
 * config that nothing changes afterwards. */
#ifndef COMMSCOPE_OPTIONS_H
#define COMMSCOPE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "msg.h"

struct kernel;
struct sync_method;

struct mode_list {
    enum send_mode *v;
    size_t n;
};

struct size_list {
    size_t *v;
    size_t n;
};

struct param {
    const char *key, *value;
};

struct param_list {
    struct param *v;
    size_t n;
};

/* --each KEY=V1,V2,...: every case once per value of one kernel parameter,
 * in the same launch; NULL (an empty item) is the parameter not given. */
struct each {
    const char *key; /* NULL: not given, one variant (values[0] NULL) */
    const char **values;
    size_t n;
};

/* --late RANK:D1,D2,... or random:D1,D2,... (docs/under-load.md): with --sync
 * window, samples cycle through punctual and each delay; in a late sample the
 * late rank (a fixed one, or one drawn per sample) waits the delay before its
 * call, or with --late-placebo after it. n 0: not given. */
struct late {
    int rank;         /* LATE_RANDOM: drawn per sample */
    double *delays_s; /* [n] */
    size_t n;
    bool spin;    /* --late-wait spin: busy-wait; else sleep */
    bool placebo; /* the wait after the call, where it must cost nothing */
};
#define LATE_RANDOM (-1)
/* The delay of sample i: samples cycle through punctual (0) and each delay in
 * turn, so a case's late and punctual samples share its launch, its minutes
 * and its drift. */
double late_delay(const struct late *late, int sample);

struct config {
    const struct kernel *kernel;
    struct mode_list modes; /* "standard" for kernels without modes */
    struct size_list sizes; /* bytes */
    long long iters;        /* 0: --min-time decides */
    double min_time_s;
    double precision;  /* 0: --iters or --min-time decides */
    double max_time_s; /* sampling time cap of a case, with --precision */
    long long min_samples, max_samples;
    long long window; /* the kernel's default_window when not given */
    long long shuffle; /* seed of the cases' order; 0: modes, then sizes, in order */
    const struct sync_method *sync;
    bool validate;
    bool cold_cache;    /* buffers rotate through twice the LLC (cache.h) */
    bool info;          /* context record only */
    bool describe;      /* the kernels as JSON, and nothing else */
    const char *output; /* rank 0's records file; NULL: stdout */
    struct param_list params;
    struct each each;
    struct late late;
};

enum options_result { OPTIONS_OK, OPTIONS_HELP, OPTIONS_BAD };

/* Pure: no MPI. On OPTIONS_BAD, error holds one line for stderr. */
enum options_result options_parse(int argc, char **argv, struct config *out, char *error,
                                  size_t error_len);
void options_print_help(FILE *f);
void options_free(const struct config *cfg);

#endif
