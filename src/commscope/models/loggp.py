"""The LogGP model (Alexandrov, Ionescu, Schauser & Scheiman, "LogGP: incorporating long
messages into the LogP model", SPAA 1995) from the loggp kernel's phases.

A message of m bytes costs its sender o_s, the network L and (m - 1) G, its receiver
o_r: T(m) = o_s + (m - 1) G + L + o_r; back-to-back messages leave at most one per gap
g. The parts are measured per size as Kielmann, Bal & Verstoep do for parameterised
LogP ("Fast measurement of LogP parameters for message passing platforms", IPDPS
Workshops 2000, LNCS 1800): o_s(m) and o_r(m) directly, g(m) from W messages in a row,
and L from the round trip of nothing, RTT(0) = 2 (L + g(0)). LogGP's constants are the
parts at the smallest size measured (0 B where it was), and G is the slope of g(m) over
the sizes, a physical line (models.hockney.nonnegative_line). A gap longer than the
round trip at its size (back-to-back messages slower than one sent and acknowledged: a
stalled launch in the gap phase) cannot be physical: it is withheld, never a constant
and never a point of G's line.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..store.cases import Case
from .hockney import nonnegative_line


@dataclass(frozen=True)
class Parts:
    """One size's medians over its launches; seconds."""
    bytes: int
    o_s: float
    o_r: float
    g: float | None  # None: withheld, longer than rtt (no message waits out a round trip)
    rtt: float  # m bytes there, nothing back


@dataclass(frozen=True)
class LogGP:
    L_s: float | None  # None: not identifiable (the gap exceeds half the round trip)
    o_s_s: float
    o_r_s: float
    g_s: float | None  # None: the smallest size's gap withheld (Parts.g)
    G_s_per_byte: float | None  # None: fewer than two sizes, or g(m) flat
    parts: list[Parts]

    def time_s(self, nbytes):
        """T(m) = o_s + (m - 1) G + L + o_r, one message (L taken as 0 where not known)."""
        m = np.maximum(np.asarray(nbytes, dtype=float) - 1, 0)
        return self.o_s_s + m * (self.G_s_per_byte or 0.0) + (self.L_s or 0.0) + self.o_r_s


def _phase(case: Case, name: str) -> float:
    """A phase's median per iteration in one launch, the slowest rank's per sample."""
    return float(np.median(np.max(np.asarray(case.extra["phase_samples_s"][name]), axis=0)))


def parts(cases: list[Case]) -> list[Parts]:
    """Each size's parts, the median over its launches of each launch's median. The gap
    phase is W messages and one empty round trip (the last acknowledgement):
    g(m) = (gap - RTT(0)) / W."""
    by_size: dict[int, list[Case]] = {}
    for c in cases:
        if c.extra.get("phase_samples_s"):
            by_size.setdefault(c.bytes, []).append(c)
    found = []
    for nbytes in sorted(by_size):
        launches = by_size[nbytes]
        medians = {name: float(np.median([_phase(c, name) for c in launches]))
                   for name in ("o_s", "ack", "o_r", "gap")}
        found.append((nbytes, launches[0].window or 1, medians))
    if not found:
        return []
    first = found[0][2]
    rtt0 = first["o_s"] + first["ack"]
    return [Parts(n, m["o_s"], m["o_r"], _gap(max(m["gap"] - rtt0, 0.0) / w,
                                              m["o_s"] + m["ack"]), m["o_s"] + m["ack"])
            for n, w, m in found]


def _gap(g: float, rtt: float) -> float | None:
    """g(m), or None where it is longer than the round trip at its size."""
    return g if g <= rtt else None


def fit_loggp(cases: list[Case]) -> LogGP | None:
    """LogGP from the loggp cases of one configuration; None without phases."""
    measured = parts(cases)
    if not measured:
        return None
    first = measured[0]
    latency = None if first.g is None else first.rtt / 2 - first.g
    slope = None
    gaps = [p for p in measured if p.g is not None]
    if len(gaps) >= 2:
        x = np.array([p.bytes for p in gaps], float)
        y = np.array([p.g for p in gaps])
        ones = np.ones_like(y)
        _, fitted, _ = nonnegative_line(ones.sum(), x.sum(), (x * x).sum(), y.sum(),
                                        (x * y).sum(), (y * y).sum())
        slope = float(fitted) if fitted > 0 else None
    return LogGP(latency if latency is not None and latency >= 0 else None, first.o_s,
                 first.o_r, first.g, slope, measured)
