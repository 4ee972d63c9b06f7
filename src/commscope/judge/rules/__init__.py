"""The libraries' own formats for a choice of collective algorithms by communicator and
message size (docs/tune.md, "Formats"): written by `commscope tune`, read back by
`commscope tune --verify`. Each format's module gives write(ranges, kernels) -> text,
read(text, name) -> Rules, and the settings that make a launch use a file."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Rules:
    """What a rules file covers: per collective, the communicator sizes it names; per
    (collective, communicator size), the message sizes (commscope's bytes) where one of
    its ranges of choices ends and the next begins."""
    collectives: dict[str, tuple[int, ...]]
    boundaries: dict[tuple[str, int], tuple[int, ...]] = field(default_factory=dict)

    def sizes(self, kernel: str, np: int) -> list[int]:
        """What `--verify` measures there: each range's first size and its last (the
        power of two below the next range's first), both sides of every boundary."""
        out = set()
        for b in self.boundaries.get((kernel, np), ()):
            out |= {b, 1 << (b - 1).bit_length() - 1} if b > 1 else {b}
        return sorted(out)
