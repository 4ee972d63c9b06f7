"""Message sizes: parse the --sizes grammar and format byte counts for tables.

Grammar (whitespace around items, around ':' and between number and unit
is allowed):

    spec  := item ("," item)*
    item  := size | size ":" size
    size  := digits ["." digits] [unit]

Units are case-sensitive, exactly as IEC 80000-13 and SI write them:

    B                    1 byte (same as no unit)
    K, KiB               1024        (binary; K is the short form of KiB)
    M, MiB               1024**2
    G, GiB               1024**3
    T, TiB               1024**4
    kB, MB, GB, TB       10**3, 10**6, 10**9, 10**12 (decimal)

Anything else is rejected rather than guessed: lowercase k/m/g alone, KB
(JEDEC says 1024, SI readers read 1000), Kb/kb (bits), exponents such as
1e6. A fraction is accepted only when it gives a whole number of bytes
(1.5K = 1536; 1.3K = 1331.2 is rejected).

A range LO:HI means every power of two from LO to HI inclusive, plus 0
when LO is 0. Both ends must be 0 or a power of two and HI >= LO, so the
ends the user wrote are always measured: 0:4MiB = 0, 1, 2, 4, ..., 4194304.
The result is sorted and de-duplicated.
"""

import re
from fractions import Fraction

from .errors import UserError

_UNITS = {
    "": 1,
    "B": 1,
    "K": 1024,
    "KiB": 1024,
    "M": 1024**2,
    "MiB": 1024**2,
    "G": 1024**3,
    "GiB": 1024**3,
    "T": 1024**4,
    "TiB": 1024**4,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
}

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([A-Za-z]*)")

_ACCEPTED = (
    "use bytes with an optional unit (B, K/KiB, M/MiB, G/GiB, T/TiB, kB, MB, GB, TB), "
    "a list (8,1K,64KiB) or a power-of-two range (0:4MiB)"
)

# Binary units for display, largest first.
_DISPLAY_UNITS = (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024))


def parse_sizes(spec: str, flag: str = "--sizes") -> list[int]:
    """Parse a size spec such as "0:4MiB" or "8, 1K, 64KiB" into sorted byte counts.

    See the module docstring for the grammar. Raises UserError with one line
    naming `flag` and the offending item.
    """
    if not spec.strip():
        raise UserError(f"{flag}: no sizes given; {_ACCEPTED}")
    sizes: set[int] = set()
    for raw_item in spec.split(","):
        item = raw_item.strip()
        if not item:
            raise UserError(f"{flag}: empty item in '{spec.strip()}'; {_ACCEPTED}")
        if ":" in item:
            sizes.update(_parse_range(item, flag))
        else:
            sizes.add(_parse_size(item, flag))
    return sorted(sizes)


def _parse_range(item: str, flag: str) -> list[int]:
    ends = [end.strip() for end in item.split(":")]
    if len(ends) != 2 or not all(ends):
        raise UserError(f"{flag}: '{item}' is not a range; {_ACCEPTED}")
    lo, hi = (_parse_size(end, flag) for end in ends)
    for end in (lo, hi):
        if not _is_zero_or_power_of_two(end):
            raise UserError(
                f"{flag}: range '{item}' has an end of {end} bytes; "
                f"range ends must be 0 or a power of two (e.g. 0:4MiB), "
                f"or list other sizes with commas"
            )
    if hi < lo:
        raise UserError(f"{flag}: range '{item}' ends below its start; write LO:HI with LO <= HI")
    sizes = [0] if lo == 0 else []
    size = max(lo, 1)
    while size <= hi:
        sizes.append(size)
        size *= 2
    return sizes


def _parse_size(text: str, flag: str) -> int:
    if text.startswith("-"):
        raise UserError(f"{flag}: '{text}' is negative; sizes are byte counts >= 0")
    match = _SIZE.fullmatch(text)
    if match is None or match.group(2) not in _UNITS:
        unit = match.group(2) if match else ""
        if unit == "KB":
            raise UserError(
                f"{flag}: '{text}' is ambiguous; write KiB (1024 bytes) or kB (1000 bytes)"
            )
        raise UserError(f"{flag}: '{text}' is not a size; {_ACCEPTED}")
    number, unit = match.groups()
    nbytes = Fraction(number) * _UNITS[unit]
    if nbytes.denominator != 1:
        raise UserError(f"{flag}: '{text}' is {float(nbytes)} bytes, not a whole number of bytes")
    return int(nbytes)


def _is_zero_or_power_of_two(n: int) -> bool:
    return n & (n - 1) == 0


def format_bytes(nbytes: int) -> str:
    """Short exact form for tables: the largest binary unit that divides nbytes.

    0 -> "0 B", 1536 -> "1536 B", 4194304 -> "4 MiB", 2147487744 -> "2097156 KiB".
    """
    if nbytes < 0:
        raise ValueError(f"byte count must be >= 0, got {nbytes}")
    for unit, factor in _DISPLAY_UNITS:
        if nbytes and nbytes % factor == 0:
            return f"{nbytes // factor} {unit}"
    return f"{nbytes} B"
