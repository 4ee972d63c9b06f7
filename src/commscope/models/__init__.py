"""Performance models over stored samples: pure functions, numpy inside, no MPI.

- `resample`: per-case medians, their standard errors, and bootstrap medians;
- `hockney`: t(n) = alpha + n/B by weighted least squares (Hockney 1994);
- `segmented`: piecewise lines over size, segment count by BIC (Schwarz 1978);
- `groups`: cases grouped by configuration, each group fitted;
- `collectives`: predicted times of the ring and of collective algorithms
  (Thakur, Rabenseifner & Gropp 2005) from a fitted message time t(n).

See docs/models.md for the formulas and methods.
"""
