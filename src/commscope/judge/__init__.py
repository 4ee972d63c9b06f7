"""The judging verbs: compare, check, tune and congestion, each choosing its comparisons
and leaving the rest to the verdict core (stats/verdict/)."""
