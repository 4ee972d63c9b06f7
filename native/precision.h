/* The stopping rule of --precision: how far the 95% confidence interval of
 * the median reaches from the median, relative to it. The loop uses it only
 * to decide when a case has enough samples; the figures users see are
 * computed again in Python from the stored samples (src/commscope/stats/stats.py),
 * by the same rule. */
#ifndef COMMSCOPE_PRECISION_H
#define COMMSCOPE_PRECISION_H

#include <stdbool.h>

/* max(median - low, high - median) / median over the values whose skip flag
 * is false (skip may be NULL); INFINITY when too few values for a CI.
 * Sorts a copy; values are not changed. */
double precision_reached(const double *values, const unsigned char *skip, int n);

/* The median of values[0..n-1] (n >= 1), sorting them in place. */
double median_in_place(double *values, int n);

#endif
