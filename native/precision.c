#include "precision.h"

#include <math.h>
#include <stdlib.h>

#include "check.h"

/* Below this many values the binomial ranks are exact; above it the normal
 * approximation (src/commscope/stats/stats.py uses the same bound). */
#define EXACT_CI_MAX_N 1000
#define Z_975 1.959963984540054

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The largest 1-based rank j with P(Binomial(n, 1/2) <= j - 1) <= 2.5%:
 * [x_(j), x_(n+1-j)] is a distribution-free 95% CI of the median (Le Boudec,
 * "Performance Evaluation of Computer and Communication Systems", 2010,
 * Thm 2.1); 0 when none exists (n < 6). */
static int median_ci_rank(int n)
{
    if (n > EXACT_CI_MAX_N)
        return (int)floor(n / 2.0 - Z_975 / 2 * sqrt((double)n));
    double tail = 0, log_half_n = n * log(0.5);
    int j = 0;
    for (int i = 0; i <= n; i++) {
        tail += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) + log_half_n);
        if (tail > 0.025)
            break;
        j = i + 1;
    }
    return j;
}

double median_in_place(double *values, int n)
{
    qsort(values, (size_t)n, sizeof *values, ascending);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double precision_reached(const double *values, const unsigned char *skip, int n)
{
    double *kept = xcalloc((size_t)(n > 0 ? n : 1), sizeof *kept);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!skip || !skip[i])
            kept[m++] = values[i];
    int j = median_ci_rank(m);
    double reached = INFINITY;
    if (j >= 1) {
        double median = median_in_place(kept, m); /* sorted now: the bounds below */
        double low = kept[j - 1], high = kept[m - j];
        if (median > 0)
            reached = fmax(median - low, high - median) / median;
    }
    free(kept);
    return reached;
}
