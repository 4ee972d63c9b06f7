"""How numbers are shown. Inside commscope every time is seconds and every size bytes;
shown, times are µs or ms and rates MB/s with MB = 10^6 bytes. One formatter per unit,
for the terminal tables, the exports and the report alike (sizes: sizes.format_bytes).
"""

from __future__ import annotations

MB = 1e6  # bytes in the MB of MB/s
US_PER_S = 1e6  # figures draw seconds as µs
MS_PER_S = 1e3  # and long solves as ms
NS_PER_S = 1e9  # a time per byte (LogGP's G) is shown as ns/B
PERCENT = 100  # figures draw fractions as percent
MISSING = "-"


def us(seconds: float | None, signed: bool = False) -> str:
    """Microseconds to three decimals: 0.357, +1.250; '-' when there is no value."""
    return MISSING if seconds is None else f"{seconds * US_PER_S:{'+' if signed else ''}.3f}"


def states(levels) -> str:
    """The states a level's probes or commands sat in, each (seconds, share), as the
    expected line's tail: '; in states 0.113 µs in 74% of them, 0.352 µs in 26% of them'."""
    return "" if not levels else "; in states " + ", ".join(
        f"{us(level)} µs in {share:.0%} of them" for level, share in levels)


def us_short(seconds: float | None) -> str:
    """Microseconds to three significant digits, where room is short (a heat map's cell,
    a warning's few words): 0.357, 12.3."""
    return MISSING if seconds is None else f"{seconds * US_PER_S:.3g}"


def ms(seconds: float | None) -> str:
    return MISSING if seconds is None else f"{seconds * MS_PER_S:.3f}"


def seconds(value: float | None) -> str:
    """Seconds as they are, to three significant digits, for times far from a message's
    (the timer's resolution and overhead, a compute cost in s/B): 2e-08, 4.36e-07."""
    return MISSING if value is None else f"{value:.3g}"


def ns_per_byte(seconds_per_byte: float | None) -> str:
    return MISSING if seconds_per_byte is None else f"{seconds_per_byte * NS_PER_S:.4f}"


def rate(megabytes_per_s: float | None, decimals: int = 0, missing: str = "inf") -> str:
    """A rate in MB/s with thousands separators; `missing` where there is none (a fitted
    line's infinite bandwidth: 'inf'; a kernel without a rate: '-')."""
    return missing if megabytes_per_s is None else f"{megabytes_per_s:,.{decimals}f}"


def mb_per_s(bytes_per_s: float | None) -> float | None:
    return None if bytes_per_s is None else bytes_per_s / MB


def whole(value: float | None) -> str:
    """A whole number with thousands separators, where a header names the unit: 12,345."""
    return MISSING if value is None else f"{value:,.0f}"


def percent(fraction: float | None, signed: bool = False, decimals: int | None = 1) -> str:
    """A fraction as percent: 5.0%, +12%; decimals None: as few digits as it needs (a
    threshold the user gave: 5%, 2.5%)."""
    if fraction is None:
        return MISSING
    digits = "g" if decimals is None else f".{decimals}f"
    return f"{fraction * PERCENT:{'+' if signed else ''}{digits}}%"


def ratio(x: float | None, decimals: int = 2) -> str:
    """A dimensionless ratio (a bandwidth over its ceiling, a CFL number): 1.31."""
    return MISSING if x is None else f"{x:.{decimals}f}"


def scientific(x: float | None) -> str:
    """Errors and other small dimensionless numbers: 1.234e-05."""
    return MISSING if x is None else f"{x:.3e}"


def p_value(p: float) -> str:
    # Far out in the tails the normal approximation's digits mean nothing.
    return "<1e-16" if p < 1e-16 else f"{p:.2g}"
