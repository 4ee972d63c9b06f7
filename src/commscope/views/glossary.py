"""The abbreviations tables print, each defined once: a table's footer takes its own with
`defined`, and docs/usage.md's glossary lists them all (a test holds the two together)."""

from __future__ import annotations

GLOSSARY = {
    "x/": "the interval as a factor: median x/ f spans median/f to median*f",
    "95% CI": "the 95% confidence interval",
    "p (BH)": "the p-value adjusted for the number of cases judged together "
              "(Benjamini-Hochberg, false discovery rate 5%)",
    "power": "the chance that these launches detect a change of that size",
    "below barrier": "a difference smaller than twice the median barrier time of the same "
                     "launches, which no program would notice",
    "n_half": "the message size that reaches half the asymptotic bandwidth B (alpha*B)",
    "BIC": "the Bayesian information criterion: fit quality less a penalty per parameter; "
           "the lower, the better",
    "CIF": "the congestion impact factor: the canary's time beside the aggressors over its "
           "time alone",
    "MB/s": "10^6 bytes a second",
    "us": "microseconds (10^-6 s)",
    "np": "the number of MPI processes (ranks)",
}


def defined(*terms: str) -> str:
    """The footer line that defines `terms`: "x/: ...; p (BH): ..."."""
    return "; ".join(f"{t}: {GLOSSARY[t]}" for t in terms)
