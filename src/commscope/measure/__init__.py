"""Measuring: the plan of a command, its launches and their samples into the store."""
