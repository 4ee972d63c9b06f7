"""How numbers are shown. Inside commscope every time is seconds and every size bytes;
shown, times are µs or ms and rates MB/s with MB = 10^6 bytes. One formatter per unit,
for the terminal tables, the exports and the report alike (sizes: sizes.format_bytes).
"""

from __future__ import annotations

MB = 1e6  # bytes in the MB of MB/s
US_PER_S = 1e6  # figures draw seconds as µs
MS_PER_S = 1e3  # and long solves as ms
MISSING = "-"


def us(seconds: float | None, signed: bool = False) -> str:
    """Microseconds to three decimals: 0.357, +1.250; '-' when there is no value."""
    return MISSING if seconds is None else f"{seconds * US_PER_S:{'+' if signed else ''}.3f}"


def ms(seconds: float | None) -> str:
    return MISSING if seconds is None else f"{seconds * MS_PER_S:.3f}"


def rate(megabytes_per_s: float | None, decimals: int = 0, missing: str = "inf") -> str:
    """A rate in MB/s with thousands separators; `missing` where there is none (a fitted
    line's infinite bandwidth: 'inf'; a kernel without a rate: '-')."""
    return missing if megabytes_per_s is None else f"{megabytes_per_s:,.{decimals}f}"


def mb_per_s(bytes_per_s: float | None) -> float | None:
    return None if bytes_per_s is None else bytes_per_s / MB


def percent(fraction: float | None, signed: bool = False, decimals: int = 1) -> str:
    return MISSING if fraction is None else f"{fraction * 100:{'+' if signed else ''}.{decimals}f}%"


def scientific(x: float | None) -> str:
    """Errors and other small dimensionless numbers: 1.234e-05."""
    return MISSING if x is None else f"{x:.3e}"


def p_value(p: float) -> str:
    # Far out in the tails the normal approximation's digits mean nothing.
    return "<1e-16" if p < 1e-16 else f"{p:.2g}"
