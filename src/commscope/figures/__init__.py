"""Each case's one figure read from the results file: its summary over the launches kept
(stats/summary.CaseSummary), with its history, the commands stored before it."""
