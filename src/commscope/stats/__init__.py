"""Statistics of stored samples: per-case summaries, launch states, the between-launch
variance and replication, advice on precision, and the verdict core (verdict/) that every
judging verb answers through."""
