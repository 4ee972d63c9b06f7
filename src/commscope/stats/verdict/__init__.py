"""The verdict core: every verb that judges (check, compare, health, tune) states its
comparisons here as log ratios of launch medians and gets back claims, each with its test
at the threshold, its family, its word and one serialisation (docs/statistics.md,
"Verdicts"). The verbs choose only what to compare and what to advise.

- threshold.py: the level, the thresholds and their one unit, parsed once, and the
  difference below one barrier that no threshold makes a finding;
- inference.py: the estimates (paired, unpaired with the command term), moderated variances,
  the one-sided tests at the threshold, Benjamini-Hochberg over a family and the
  false-coverage-rate intervals of what is named;
- spec.py: how a command's verdicts are made, stored with its runs;
- claim.py: the words, the claim and its table row, JSON item and JUnit testcase, and the
  exit status a gate reads.
"""

from .claim import (FAIL_ON, INCONCLUSIVE, NEGLIGIBLE, PAIRED, SHIFT_ONLY, TERMS, UNDETERMINED,
                    Claim,
                    VERB_WORDS, Testcase, Words, apart_words, claims, detectable, exit_status,
                    footer, gate, junit, legend, unmeasured)
from .inference import Estimate, decide, moderate, paired, unpaired
from .spec import VerdictSpec
from ..stats import ALPHA
from .threshold import (DEFAULTS, Defaults, Threshold, more_launches, negligible,
                        parse_threshold)

__all__ = ["ALPHA", "DEFAULTS", "FAIL_ON", "INCONCLUSIVE", "NEGLIGIBLE", "PAIRED", "SHIFT_ONLY",
           "TERMS", "UNDETERMINED", "VERB_WORDS", "Claim", "Defaults", "Estimate", "Testcase",
           "Threshold", "VerdictSpec", "Words", "apart_words", "claims", "decide", "detectable",
           "exit_status", "footer", "gate", "junit", "legend", "moderate", "more_launches",
           "negligible", "paired", "parse_threshold", "unmeasured", "unpaired"]
