"""The level every verdict is made at, and the threshold in its one unit.

A threshold of 5% means the slower side delivers less than 95% of the other's bandwidth,
the same data rate, so its time is more than 1 / 0.95 = 1.053 times as long. Every verb
states it so: a check's guideline, a compare's regression, a health node or link, a tune
gain (a bandwidth ratio; docs/statistics.md, "Verdicts")."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ...system.errors import UserError

POWER = 0.80  # what the smallest detectable change is detected with


@dataclass(frozen=True)
class Defaults:
    """A judging verb's defaults: its threshold (tune's: the least gain worth writing) and
    its launches (auto: as many as the spread asks, docs/statistics.md)."""
    threshold: str
    launches: int | str


# Five launches: the paired t on 4 degrees of freedom; health's ten, a node's effect on 9.
DEFAULTS = {"check": Defaults("5%", 5), "compare": Defaults("5%", "auto"),
            "health": Defaults("20%", 10), "tune": Defaults("5%", 5),
            "congestion": Defaults("10%", 5)}
LEAST_LAUNCHES = 3  # the fewest whose spread a test can use (2 degrees of freedom)


def more_launches(verb: str = "run", given: int | str | None = None) -> str:
    """The one remedy for launches too few to tell a difference from launch noise: past
    `given` launches where that many were measured, else LEAST_LAUNCHES (the verb's
    default launches, auto or a count, give at least that)."""
    if str(given).isdigit() and int(given) >= LEAST_LAUNCHES:
        return f"measure in more launches than --launches {given}"
    default = DEFAULTS[verb].launches if verb in DEFAULTS else "auto"
    was = f", not --launches {given}" if str(given).isdigit() else ""
    return (f"measure in {LEAST_LAUNCHES} or more launches{was} (--launches {LEAST_LAUNCHES}; "
            f"the default, {default}, does)")


@dataclass(frozen=True)
class Threshold:
    """A bandwidth shortfall: `fraction` 0.05 is a side below 0.95 of the other's rate."""
    fraction: float

    @property
    def bandwidth_ratio(self) -> float:
        return 1 - self.fraction

    @property
    def time_ratio(self) -> float:
        return 1 / (1 - self.fraction)

    @property
    def log(self) -> float:
        """The bound on the log time ratio: log(1 / (1 - fraction)) > 0."""
        return -math.log1p(-self.fraction)

    def __str__(self) -> str:
        return f"{self.fraction * 100:g}% (bandwidth below {self.bandwidth_ratio:.3g}x, " \
               f"time above {self.time_ratio:.3g}x)"


def negligible(left_s: float | None, right_s: float | None, barrier_s: float) -> bool:
    """The two times differ by less than one barrier's time, which no program that
    synchronises would notice, so a claim beyond the threshold fails no gate (as
    pgchecker marks it). The barrier is a typical one of the launches compared
    (checks.barrier_time), not a stalled one's, so twice it is never negligible."""
    if left_s is None or right_s is None:
        return False
    return abs(left_s - right_s) < barrier_s


def parse_threshold(text: str, option: str = "--threshold") -> Threshold:
    """`5%` or `0.05`, above 0 and below 100%; anything else a UserError naming `option`."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*", str(text))
    value = float(m.group(1)) / (100 if m.group(2) else 1) if m else None
    if value is None or not 0 < value < 1:
        raise UserError(f"{option} {text}: give a percentage above 0 and below 100 (5%) or "
                        "a fraction (0.05)")
    return Threshold(value)
