"""The libraries' own formats for a choice of collective algorithms by communicator and
message size (docs/tune.md, "Formats"): written by `commscope tune`, read back by
`commscope tune --verify`. Each format's module gives write(ranges, kernels) -> text,
read(text, name) -> Rules, and the settings that make a launch use a file."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rules:
    """What a rules file covers: per collective, the communicator sizes it names."""
    collectives: dict[str, tuple[int, ...]]
