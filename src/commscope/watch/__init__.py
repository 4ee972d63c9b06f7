"""A watch of a fleet over time (docs/watch.md), by role: its probes measured on a schedule
(probe.py), stored and folded (points.py), their statistics (drift.py: steps; flapping.py:
two states), and its history judged with the expected level (history.py); `commscope
watch` and `results history` are cli/watch.py and cli/results.py, its lines
views/watch.py, its report section views/report/watch.py."""
