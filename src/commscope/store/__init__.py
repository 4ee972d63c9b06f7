"""The results store: one SQLite file of runs, launches and cases, and how a case is named."""
