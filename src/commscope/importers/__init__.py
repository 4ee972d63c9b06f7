"""Other tools' output read into neutral records: OSU Micro-Benchmarks (osu.py),
Intel MPI Benchmarks (imb.py) and nccl-tests (nccl.py). Pure: text in, records out;
imported.py says what the figures are in commscope's terms, the store keeps them.

A figure keeps the token its tool printed, so a round trip is exact to print
precision. A line inside a table that does not parse is an error naming the file
and line, never skipped: a truncated or foreign file stores nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError


@dataclass(frozen=True)
class ImportedRow:
    bytes: int
    figures: dict[str, float]  # commscope's name of a printed column -> its value
    printed: dict[str, str]  # the same names -> the token as printed


@dataclass(frozen=True)
class ImportedRun:
    tool: str  # osu, imb, nccl-tests
    version: str  # as printed; "" where the tool prints none
    benchmark: str  # the tool's own name: osu_bw, PingPong, all_reduce_perf
    kernel: str  # commscope's name of the operation
    ranks: int | None  # processes, where the output says
    metric: str  # the primary figure's name among the row's figures
    definition: str  # how the tool defines that figure
    rows: tuple[ImportedRow, ...]
    header: dict[str, str] = field(default_factory=dict)


def bad(path: Path, line: int, what: str) -> UserError:
    return UserError(f"{path}:{line}: {what}; expected OSU, IMB or nccl-tests output")


def row(path: Path, number: int, names: list[str], tokens: list[str],
        size_column: int | None = 0) -> ImportedRow:
    """One table line: its size (bytes) and each named figure, as value and token; a column
    printed as N/A (nccl-tests' #wrong without validation) is no figure."""
    if len(tokens) != len(names) + (size_column is not None):
        raise bad(path, number, f"{len(tokens)} columns where the table has "
                                f"{len(names) + (size_column is not None)} (truncated?)")
    size = tokens[size_column] if size_column is not None else "0"
    printed = {n: v for n, v in zip(names, (t for i, t in enumerate(tokens) if i != size_column))
               if n and v != "N/A"}
    try:
        return ImportedRow(int(size), {n: float(v) for n, v in printed.items()}, printed)
    except ValueError:
        raise bad(path, number, f"not a row of numbers: {' '.join(tokens)!r}") from None


def parse(path: Path) -> list[ImportedRun]:
    """Every run in one file, in file order; the tool is told by the text."""
    from . import imb, nccl, osu  # each knows its own banner
    try:
        text = path.read_text(encoding="utf-8", errors="strict")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc}); give a text file of OSU, IMB or "
                        "nccl-tests output") from None
    for reader in (osu, imb, nccl):
        if reader.recognizes(text):
            return reader.parse(path, text)
    raise UserError(f"{path}: no OSU banner ('# OSU MPI ...'), IMB benchmark block or "
                    "nccl-tests table found; expected OSU, IMB or nccl-tests output")
