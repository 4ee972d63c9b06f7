"""Other tools' output read into neutral records: OSU Micro-Benchmarks (osu.py),
Intel MPI Benchmarks (imb.py) and nccl-tests (nccl.py). Pure: text in, records out;
imported.py says what the figures are in commscope's terms, the store keeps them.
The profilers' files (mpisee's SQLite, mpiP's report) are read into a profile
(profiles/mpisee.py, profiles/mpip.py) instead: a program's calls, not a benchmark's.

A figure keeps the token its tool printed, so a round trip is exact to print
precision. A line inside a table that does not parse is an error naming the file
and line, never skipped: a truncated or foreign file stores nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError
from ..profiles import Profile


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


def parse(path: Path) -> list[ImportedRun] | list[Profile]:
    """Every run in one file, in file order, or the one profile it holds; the tool is told
    by the file: SQLite's header for mpisee, a banner for the text tools."""
    from ..profiles import mpip, mpisee
    from . import imb, nccl, osu  # each knows its own banner
    try:
        if mpisee.is_sqlite(path):
            return [mpisee.read(path)]
        text = path.read_text(encoding="utf-8", errors="strict")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc}); give a text file of OSU, IMB, "
                        "nccl-tests or mpiP output, or an mpisee profile") from None
    if mpip.recognizes(text):
        return [mpip.parse(path, text)]
    for reader in (osu, imb, nccl):
        if reader.recognizes(text):
            return reader.parse(path, text)
    raise UserError(f"{path}: no OSU banner ('# OSU MPI ...'), IMB benchmark block, "
                    "nccl-tests table or mpiP banner ('@ mpiP') found; expected OSU, IMB, "
                    "nccl-tests or mpiP output, or an mpisee profile")
