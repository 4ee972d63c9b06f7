#include "options.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "sync.h"

enum opt_type {
    OPT_KERNEL,
    OPT_MODES,
    OPT_SIZES,
    OPT_COUNT,
    OPT_SECONDS,
    OPT_FRACTION,
    OPT_FLAG,
    OPT_PARAM,
    OPT_PATH,
    OPT_SYNC,
    OPT_EACH,
    OPT_LATE,
    OPT_LATE_WAIT
};

/* Shown in --help after the option name. */
static const char *const type_labels[] = {
    [OPT_KERNEL] = "NAME",
    [OPT_MODES] = "LIST",
    [OPT_SIZES] = "LIST",
    [OPT_COUNT] = "N",
    [OPT_SECONDS] = "S",
    [OPT_FRACTION] = "F",
    [OPT_FLAG] = "",
    [OPT_PARAM] = "KEY=VALUE",
    [OPT_PATH] = "PATH",
    [OPT_SYNC] = "barrier|window",
    [OPT_EACH] = "KEY=V1,V2",
    [OPT_LATE] = "RANK:S1,S2",
    [OPT_LATE_WAIT] = "sleep|spin",
};

struct option_spec {
    const char *name; /* without the leading "--" */
    enum opt_type type;
    const char *def; /* parsed like a given value; NULL: none */
    bool required;
    long long min; /* OPT_COUNT only */
    const char *help;
    size_t offset; /* of the field in struct config */
};

#define FIELD(f) offsetof(struct config, f)

/* Every option, declared once; docs/native.md has the same table. */
static const struct option_spec specs[] = {
    {"kernel", OPT_KERNEL, NULL, true, 0, "kernel to run (listed below)", FIELD(kernel)},
    {"modes", OPT_MODES, "standard", false, 0,
     "send modes, comma-separated, for kernels that take them", FIELD(modes)},
    {"sizes", OPT_SIZES, NULL, true, 0, "message sizes in bytes, comma-separated", FIELD(sizes)},
    {"iters", OPT_COUNT, "0", false, 0, "timed samples per case (0: --min-time decides)",
     FIELD(iters)},
    {"min-time", OPT_SECONDS, "0.2", false, 0, "timed seconds per case", FIELD(min_time_s)},
    {"precision", OPT_FRACTION, NULL, false, 0,
     "sample until the 95% CI of the median is within +-F of it "
     "(0 < F < 1; unset: --iters or --min-time decides)",
     FIELD(precision)},
    {"max-time", OPT_SECONDS, "5", false, 0,
     "with --precision: seconds of sampling after which a case stops short", FIELD(max_time_s)},
    {"min-samples", OPT_COUNT, "10", false, 1,
     "fewest samples when --min-time or --precision decides (--precision: its "
     "first round)",
     FIELD(min_samples)},
    {"max-samples", OPT_COUNT, "100000", false, 1, "most samples when --min-time decides",
     FIELD(max_samples)},
    {"shuffle", OPT_COUNT, "0", false, 0,
     "run the cases in an order drawn from this seed (0: each mode's sizes in "
     "order)",
     FIELD(shuffle)},
    {"window", OPT_COUNT, NULL, false, 1,
     "messages in flight per iteration for bw and bibw; operations per "
     "epoch for rma [the kernel's: see --describe]",
     FIELD(window)},
    {"sync", OPT_SYNC, "barrier", false, 0,
     "start samples after a barrier, or at agreed times on synchronised "
     "clocks",
     FIELD(sync)},
    {"validate", OPT_FLAG, NULL, false, 0, "receivers check every payload byte, every iteration",
     FIELD(validate)},
    {"cold-cache", OPT_FLAG, NULL, false, 0,
     "buffers rotate through a working set of twice the last-level cache, "
     "so no iteration finds its data in cache (IMB's -off_cache idea)",
     FIELD(cold_cache)},
    {"param", OPT_PARAM, NULL, false, 0, "kernel-specific parameter, repeatable", FIELD(params)},
    {"each", OPT_EACH, NULL, false, 0,
     "every case once per value of this kernel parameter, in the cases' "
     "order (an empty value: the parameter not given)",
     FIELD(each)},
    {"late", OPT_LATE, NULL, false, 0,
     "with --sync window: samples cycle through punctual and each delay (in "
     "seconds); in a late one RANK (or random: a rank drawn per sample) waits "
     "the delay before its call",
     FIELD(late)},
    {"late-wait", OPT_LATE_WAIT, "sleep", false, 0,
     "how the late rank waits: sleeping, or busy-waiting", FIELD(late)},
    {"late-placebo", OPT_FLAG, NULL, false, 0,
     "the late rank waits after its call instead, where it must cost nothing",
     FIELD(late.placebo)},
    {"output", OPT_PATH, NULL, false, 0, "rank 0 writes records to this file instead of stdout",
     FIELD(output)},
    {"info", OPT_FLAG, NULL, false, 0, "write only the context record (no kernel is run)",
     FIELD(info)},
    {"describe", OPT_FLAG, NULL, false, 0,
     "print every kernel, its send modes and parameters as JSON, without "
     "MPI_Init",
     FIELD(describe)},
};
#define SPEC_COUNT (sizeof specs / sizeof specs[0])

/* Sizes stop well below any overflow of window or page arithmetic. */
#define MAX_BYTES ((unsigned long long)1 << 50)

static bool bad(char *error, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool bad(char *error, size_t len, const char *fmt, ...)
{
    int n = snprintf(error, len, "commscope-native: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error + n, len - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

/* Decimal digits only, so "-1", "+1", "1e3" and "" are refused. */
static bool parse_digits(const char *s, size_t len, unsigned long long max,
                         unsigned long long *out)
{
    unsigned long long v = 0;
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static size_t count_items(const char *text)
{
    size_t n = 1;
    for (const char *p = text; *p; p++)
        n += *p == ',';
    return n;
}

static bool parse_modes(const char *text, struct mode_list *out, char *error, size_t len)
{
    size_t n = count_items(text);
    enum send_mode *v = calloc(n, sizeof *v);
    if (!v)
        return bad(error, len, "out of memory");
    const char *item = text;
    for (size_t i = 0; i < n; i++) {
        size_t item_len = strcspn(item, ",");
        int found = -1;
        for (int m = 0; m < SEND_MODE_COUNT; m++)
            if (strlen(send_mode_names[m]) == item_len &&
                strncmp(send_mode_names[m], item, item_len) == 0)
                found = m;
        if (found < 0) {
            free(v);
            return bad(error, len, "--modes: unknown send mode '%.*s'", (int)item_len, item);
        }
        v[i] = (enum send_mode)found;
        item += item_len + 1;
    }
    free(out->v);
    *out = (struct mode_list){v, n};
    return true;
}

static bool parse_sizes(const char *text, struct size_list *out, char *error, size_t len)
{
    size_t n = count_items(text);
    size_t *v = calloc(n, sizeof *v);
    if (!v)
        return bad(error, len, "out of memory");
    const char *item = text;
    for (size_t i = 0; i < n; i++) {
        size_t item_len = strcspn(item, ",");
        unsigned long long bytes;
        if (!parse_digits(item, item_len, MAX_BYTES, &bytes)) {
            free(v);
            return bad(error, len, "--sizes: '%.*s' is not a byte count from 0 to %llu",
                       (int)item_len, item, MAX_BYTES);
        }
        v[i] = (size_t)bytes;
        item += item_len + 1;
    }
    free(out->v);
    *out = (struct size_list){v, n};
    return true;
}

static bool parse_param(const char *text, struct param_list *out, char *error, size_t len)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        return bad(error, len, "--param: '%s' is not KEY=VALUE", text);
    struct param *v = realloc(out->v, (out->n + 1) * sizeof *v);
    if (!v)
        return bad(error, len, "out of memory");
    out->v = v;
    char *key = strdup(text);
    if (!key)
        return bad(error, len, "out of memory");
    key[eq - text] = '\0';
    v[out->n++] = (struct param){key, key + (eq - text) + 1};
    return true;
}

static bool parse_each(const char *text, struct each *out, char *error, size_t len)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        return bad(error, len, "--each: '%s' is not KEY=V1,V2,...", text);
    char *copy = strdup(text);
    size_t n = count_items(eq + 1);
    const char **values = calloc(n, sizeof *values);
    if (!copy || !values) {
        free(copy);
        free(values);
        return bad(error, len, "out of memory");
    }
    copy[eq - text] = '\0';
    char *item = copy + (eq - text) + 1;
    for (size_t i = 0; i < n; i++) {
        size_t item_len = strcspn(item, ",");
        bool last = item[item_len] == '\0';
        item[item_len] = '\0';
        values[i] = item_len ? item : NULL;
        item += item_len + !last;
    }
    free((char *)out->key);
    free(out->values);
    *out = (struct each){copy, values, n};
    return true;
}

/* RANK:S1,S2,... or random:S1,... : delays in seconds, each positive and
 * finite, and a rank of digits (checked against the ranks after MPI_Init). */
static bool parse_late(const char *text, struct late *late, char *error, size_t len)
{
    const char *colon = strchr(text, ':');
    unsigned long long rank;
    if (!colon)
        return bad(error, len, "--late: '%s' is not RANK:S1,S2,... or random:S1,...", text);
    if ((size_t)(colon - text) == 6 && strncmp(text, "random", 6) == 0)
        late->rank = LATE_RANDOM;
    else if (parse_digits(text, (size_t)(colon - text), INT_MAX, &rank))
        late->rank = (int)rank;
    else
        return bad(error, len, "--late: '%.*s' is not a rank or random", (int)(colon - text),
                   text);
    free(late->delays_s);
    late->n = count_items(colon + 1);
    late->delays_s = calloc(late->n, sizeof *late->delays_s);
    if (!late->delays_s)
        return bad(error, len, "--late: cannot allocate %zu delays", late->n);
    const char *item = colon + 1;
    for (size_t i = 0; i < late->n; i++) {
        char *end;
        late->delays_s[i] = strtod(item, &end);
        if (end == item || (*end && *end != ',') || !isfinite(late->delays_s[i]) ||
            late->delays_s[i] <= 0)
            return bad(error, len,
                       "--late: '%s' has a delay that is not a positive "
                       "number of seconds",
                       text);
        item = end + 1;
    }
    return true;
}

static bool parse_value(const struct option_spec *o, const char *text, struct config *cfg,
                        char *error, size_t len)
{
    void *field = (char *)cfg + o->offset;
    unsigned long long count;
    char *end;
    switch (o->type) {
    case OPT_KERNEL:
        *(const struct kernel **)field = kernel_find(text);
        if (!*(const struct kernel **)field)
            return bad(error, len, "--kernel: unknown kernel '%s' (see --help)", text);
        return true;
    case OPT_MODES:
        return parse_modes(text, field, error, len);
    case OPT_SIZES:
        return parse_sizes(text, field, error, len);
    case OPT_COUNT:
        /* INT_MAX: sample counts travel as MPI int counts. */
        if (!parse_digits(text, strlen(text), INT_MAX, &count) || (long long)count < o->min)
            return bad(error, len, "--%s: '%s' is not an integer from %lld to %d", o->name, text,
                       o->min, INT_MAX);
        *(long long *)field = (long long)count;
        return true;
    case OPT_SECONDS:
        *(double *)field = strtod(text, &end);
        if (end == text || *end || !isfinite(*(double *)field) || *(double *)field <= 0)
            return bad(error, len, "--%s: '%s' is not a positive number of seconds", o->name,
                       text);
        return true;
    case OPT_FRACTION:
        *(double *)field = strtod(text, &end);
        if (end == text || *end || !(*(double *)field > 0 && *(double *)field < 1))
            return bad(error, len, "--%s: '%s' is not a fraction between 0 and 1", o->name, text);
        return true;
    case OPT_FLAG: /* value is NULL */
        *(bool *)field = true;
        return true;
    case OPT_PARAM:
        return parse_param(text, field, error, len);
    case OPT_PATH:
        *(const char **)field = text;
        return true;
    case OPT_EACH:
        return parse_each(text, field, error, len);
    case OPT_LATE:
        return parse_late(text, field, error, len);
    case OPT_LATE_WAIT:
        if (strcmp(text, "sleep") != 0 && strcmp(text, "spin") != 0)
            return bad(error, len, "--late-wait: '%s' is not sleep or spin", text);
        ((struct late *)field)->spin = strcmp(text, "spin") == 0;
        return true;
    case OPT_SYNC:
        *(const struct sync_method **)field = sync_find(text);
        if (!*(const struct sync_method **)field)
            return bad(error, len, "--sync: '%s' is not barrier or window", text);
        return true;
    }
    return bad(error, len, "--%s: unhandled option type", o->name);
}

static const struct option_spec *find_spec(const char *name, size_t len)
{
    for (size_t i = 0; i < SPEC_COUNT; i++)
        if (strlen(specs[i].name) == len && strncmp(specs[i].name, name, len) == 0)
            return &specs[i];
    return NULL;
}

/* value is one of p's choices, where p has choices. */
static bool chosen(const struct kernel *k, const struct kparam *p, const char *value)
{
    const char *const *choices = kparam_choices(k, p);
    for (int i = 0; choices && choices[i]; i++)
        if (strcmp(choices[i], value) == 0)
            return true;
    return !choices;
}

/* "a, b, c": p's choices, for a message. */
static const char *choice_list(const struct kernel *k, const struct kparam *p)
{
    static char text[1024];
    const char *const *choices = kparam_choices(k, p);
    size_t used = 0;
    text[0] = '\0';
    if (!choices[0])
        return "nothing: this MPI library has no setting that forces it";
    for (int i = 0; choices[i] && used < sizeof text; i++) {
        int n = snprintf(text + used, sizeof text - used, "%s%s", i ? ", " : "", choices[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    return text;
}

/* --each: a parameter of the kernel, each value one it takes. */
static bool check_each(const struct config *cfg, char *error, size_t len)
{
    const struct each *e = &cfg->each;
    if (!e->key)
        return true;
    const struct kparam *p = kernel_param(cfg->kernel, e->key);
    if (!p)
        return bad(error, len, "--each: kernel %s has no parameter '%s'", cfg->kernel->name,
                   e->key);
    for (size_t i = 0; i < e->n; i++)
        if (e->values[i] && !chosen(cfg->kernel, p, e->values[i]))
            return bad(error, len, "--each %s=%s: kernel %s takes one of %s", e->key, e->values[i],
                       cfg->kernel->name, choice_list(cfg->kernel, p));
    return true;
}

/* A forced algorithm is the collective's own: not a mock-up (--as), nor the
 * persistent form, which the libraries serve from another component. */
static bool check_algorithm(const struct config *cfg, char *error, size_t len)
{
    bool forced = cfg->each.key && strcmp(cfg->each.key, "algorithm") == 0;
    const char *other = NULL;
    for (size_t i = 0; i < cfg->params.n; i++) {
        const struct param *given = &cfg->params.v[i];
        if (strcmp(given->key, "algorithm") == 0)
            forced = true;
        else if (strcmp(given->key, "as") == 0 ||
                 (strcmp(given->key, "persistent") == 0 && strcmp(given->value, "yes") == 0))
            other = given->key;
    }
    if (cfg->each.key &&
        (strcmp(cfg->each.key, "as") == 0 || strcmp(cfg->each.key, "persistent") == 0))
        other = cfg->each.key;
    if (forced && other)
        return bad(error, len,
                   "--param algorithm forces the collective's own algorithm; "
                   "drop %s",
                   other);
    return true;
}

/* Rules that tie options to the chosen kernel. */
static bool check_config(const struct config *cfg, bool modes_given, char *error, size_t len)
{
    const struct kernel *k = cfg->kernel;
    if (cfg->max_samples < cfg->min_samples)
        return bad(error, len, "--max-samples %lld is below --min-samples %lld", cfg->max_samples,
                   cfg->min_samples);
    if (modes_given && k->modes == 0)
        return bad(error, len, "--modes: kernel %s takes no send modes", k->name);
    for (size_t i = 0; i < cfg->modes.n; i++)
        if (k->modes && !(k->modes & SEND_MODE_BIT(cfg->modes.v[i])))
            return bad(error, len, "--modes: kernel %s has no send mode %s", k->name,
                       send_mode_names[cfg->modes.v[i]]);
    for (size_t i = 0; i < cfg->params.n; i++) {
        const struct param *given = &cfg->params.v[i];
        const struct kparam *p = kernel_param(k, given->key);
        if (!p)
            return bad(error, len, "--param: kernel %s has no parameter '%s'", k->name,
                       given->key);
        if (!chosen(k, p, given->value))
            return bad(error, len, "--param %s=%s: kernel %s takes one of %s", given->key,
                       given->value, k->name, choice_list(k, p));
        if (cfg->each.key && strcmp(given->key, cfg->each.key) == 0)
            return bad(error, len, "--param %s and --each %s: give it once", given->key,
                       given->key);
        bool given_yes = p->kind != PARAM_SWITCH || strcmp(given->value, "yes") == 0;
        if (p->binds_buffers && given_yes && cfg->cold_cache && k->cold_cache)
            return bad(error, len,
                       "--param %s=%s: its requests are bound to one "
                       "buffer in set-up, so they cannot rotate; drop --cold-cache",
                       given->key, given->value);
    }
    if (cfg->late.n && cfg->sync != &sync_window)
        return bad(error, len,
                   "--late: the punctual ranks start at an agreed time only "
                   "with --sync window");
    if (cfg->late.placebo && !cfg->late.n)
        return bad(error, len, "--late-placebo: give --late too");
    return check_each(cfg, error, len) && check_algorithm(cfg, error, len);
}

static bool parse_args(int argc, char **argv, struct config *cfg, bool *help, char *error,
                       size_t len)
{
    bool given[SPEC_COUNT] = {false}, modes_given = false;
    for (size_t i = 0; i < SPEC_COUNT; i++)
        if (specs[i].def && !parse_value(&specs[i], specs[i].def, cfg, error, len))
            return false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            *help = true;
            return true;
        }
        if (strncmp(arg, "--", 2) != 0)
            return bad(error, len, "unexpected argument '%s' (see --help)", arg);
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
        const struct option_spec *o = find_spec(name, name_len);
        if (!o)
            return bad(error, len, "unknown option --%.*s (see --help)", (int)name_len, name);
        const char *value = eq ? eq + 1 : NULL;
        if (o->type == OPT_FLAG && value)
            return bad(error, len, "--%s takes no value", o->name);
        if (o->type != OPT_FLAG && !value) {
            if (i + 1 >= argc)
                return bad(error, len, "--%s needs a value", o->name);
            value = argv[++i];
        }
        if (!parse_value(o, value, cfg, error, len))
            return false;
        given[o - specs] = true;
        modes_given |= o->type == OPT_MODES;
    }
    if (cfg->info || cfg->describe)
        return true; /* nothing is measured, so nothing else is required */
    if (cfg->window == 0)
        cfg->window = cfg->kernel->default_window ? cfg->kernel->default_window : 1;
    for (size_t i = 0; i < SPEC_COUNT; i++)
        if (specs[i].required && !given[i])
            return bad(error, len, "--%s is required", specs[i].name);
    return check_config(cfg, modes_given, error, len);
}

enum options_result options_parse(int argc, char **argv, struct config *out, char *error,
                                  size_t error_len)
{
    struct config cfg = {0};
    bool help = false;
    if (!parse_args(argc, argv, &cfg, &help, error, error_len)) {
        options_free(&cfg);
        return OPTIONS_BAD;
    }
    if (help) {
        options_free(&cfg);
        return OPTIONS_HELP;
    }
    *out = cfg;
    return OPTIONS_OK;
}

void options_print_help(FILE *f)
{
    fputs("usage: commscope-native --kernel NAME --sizes LIST [options]\n\n"
          "options:\n",
          f);
    for (size_t i = 0; i < SPEC_COUNT; i++) {
        const struct option_spec *o = &specs[i];
        char usage[64];
        snprintf(usage, sizeof usage, "--%s %s", o->name, type_labels[o->type]);
        fprintf(f, "  %-24s %s", usage, o->help);
        if (o->def)
            fprintf(f, " [%s]", o->def);
        fputc('\n', f);
    }
    fputs("\nkernels:\n", f);
    for (size_t i = 0; kernel_at(i); i++) {
        const struct kernel *k = kernel_at(i);
        fprintf(f, "  %-10s %s (%d ranks", k->name, k->description, k->min_ranks);
        for (int m = 0, first = 1; m < SEND_MODE_COUNT; m++)
            if (k->modes & SEND_MODE_BIT(m)) {
                fprintf(f, "%s%s", first ? "; modes " : ",", send_mode_names[m]);
                first = 0;
            }
        fputs(")\n", f);
        for (const struct kparam *p = k->params; p && p->name; p++)
            fprintf(f, "      --param %s=%s: %s [%s]\n", p->name,
                    kparam_choices(k, p) ? choice_list(k, p) : param_kind_names[p->kind], p->help,
                    p->def ? p->def : "none");
    }
}

double late_delay(const struct late *late, int sample)
{
    size_t slot = late->n ? (size_t)sample % (late->n + 1) : 0;
    return slot ? late->delays_s[slot - 1] : 0.0;
}

void options_free(const struct config *cfg)
{
    free(cfg->modes.v);
    free(cfg->sizes.v);
    for (size_t i = 0; i < cfg->params.n; i++)
        free((char *)cfg->params.v[i].key);
    free(cfg->params.v);
    free((char *)cfg->each.key);
    free(cfg->each.values);
    free(cfg->late.delays_s);
}
