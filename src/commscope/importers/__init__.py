"""Other tools' output read into neutral records: OSU Micro-Benchmarks (osu.py),
Intel MPI Benchmarks (imb.py) and nccl-tests (nccl.py). Pure: text in, records out;
imported.py says what the figures are in commscope's terms, the store keeps them.
The profilers' files (mpisee's SQLite, mpiP's report) are read into a profile
(profiles/mpisee.py, profiles/mpip.py) instead: a program's calls, not a benchmark's.

A figure keeps the token its tool printed, so a round trip is exact to print
precision. A line inside a table that does not parse is an error naming the file
and line, never skipped: a truncated or foreign file stores nothing. Every figure
passes figures.checked, as the profiles' do: a NaN, an infinity, a negative or zero
time is refused there, before anything is stored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..system.errors import UserError
from ..profiles import Profile
from .figures import LINE, checked, kind_of, label_of


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
    warning: str | None = None  # what the reading assumed where the file did not say


TEXT = "OSU, IMB or nccl-tests output"
ANY = "the text output of OSU, IMB, nccl-tests or mpiP, or an mpisee profile (SQLite)"
GZIP = b"\x1f\x8b"  # outputs are often kept compressed (RFC 1952's magic number)


def bad(path: Path, line: int, what: str, expected: str = TEXT) -> UserError:
    return UserError(f"{path}:{line}: {what}; expected {expected}")


def row(path: Path, number: int, names: list[str], tokens: list[str],
        size_column: int | None = 0) -> ImportedRow:
    """One table line: its size (bytes) and each named figure, as value and token; a column
    printed as N/A (nccl-tests' #wrong without validation) is no figure. Every figure is
    checked (figures.py): a row that is no measurement is refused, not stored."""
    width = len(names) + (size_column is not None)
    if len(tokens) != width:
        raise bad(path, number, f"{len(tokens)} column{'s' * (len(tokens) != 1)} where the "
                                f"table's header has {width} (a line cut short?)",
                  f"a row of {width} figures, as the header names them ({LINE})")
    where = f"{path}:{number}"
    size = tokens[size_column] if size_column is not None else "0"
    printed = {n: v for n, v in zip(names, (t for i, t in enumerate(tokens) if i != size_column))
               if n and v != "N/A"}
    size = int(checked(where, "size", size, "size"))
    # A row without a time (OSU's bw, bibw, mbw_mr; IMB's Uniband, Biband) is measured by
    # its bandwidth alone, and a time is derived from it: zero there, but at 0 bytes,
    # measured nothing.
    headline = size > 0 and not any(kind_of(n) == "time" for n in printed)
    figures = {n: checked(where, label_of(n), v, "headline bandwidth"
                          if headline and kind_of(n) == "bandwidth" else kind_of(n))
               for n, v in printed.items()}
    return ImportedRow(size, figures, printed)


def parse(path: Path) -> list[ImportedRun] | list[Profile]:
    """Every run in one file, in file order, or the one profile it holds; the tool is told
    by the file: SQLite's header for mpisee, a banner for the text tools."""
    from . import mpip, mpisee
    from . import imb, nccl, osu  # each knows its own banner
    if path.is_dir():
        raise UserError(f"{path}: a directory, not a file; give its files one by one, "
                        f"each {ANY}")
    try:
        if mpisee.is_sqlite(path):
            return [mpisee.read(path)]
        text = _text(path, path.read_bytes())
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc}); give {ANY}") from None
    if mpip.recognizes(text):
        return [mpip.parse(path, text)]
    for reader in (osu, imb, nccl):
        if reader.recognizes(text):
            return reader.parse(path, text)
    raise UserError(f"{path}: no OSU banner ('# OSU MPI ...'), IMB benchmark block, "
                    "nccl-tests table or mpiP banner ('@ mpiP') found; expected OSU, IMB, "
                    "nccl-tests or mpiP output, or an mpisee profile")


def _text(path: Path, data: bytes) -> str:
    """The file as text, refused in one line where it is empty, binary, or its last row is
    cut off. The tools write text ending in a line end: a NUL byte or bytes that are not
    UTF-8 are another kind of file, and a last line without its end is a file cut while
    written, whose last number may be cut too (7558.12 as 7558.1)."""
    if not data.strip():
        raise UserError(f"{path}: the file is empty; expected {ANY}")
    if data.startswith(GZIP):
        raise UserError(f"{path}: a gzip-compressed file; expected {ANY} (gunzip it first)")
    offset, why = data.find(b"\0"), "a NUL byte"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset, why = exc.start, "a byte that is not UTF-8 text"
    if offset >= 0:
        line = data[:offset].count(b"\n") + 1
        raise UserError(f"{path}:{line}: {why} (at byte {offset}): a binary file; "
                        f"expected {ANY}")
    text = text.removeprefix("\ufeff")  # an editor's byte-order mark: no part of the text
    last = text.splitlines()[-1]
    if not text.endswith("\n") and re.match(r"\s*[-+]?\d", last):
        raise bad(path, text.count("\n") + 1, f"the last line {last.strip()!r} has no line "
                  "end: a row cut off (truncated?)", f"the whole file ({LINE})")
    return text
