"""Facts about the launching host, measured with the runs and stored with each, so views
read them from the store instead of timing anything themselves. A command measures
them once, or takes them from a run of the same host in the same store measured less
than MAX_AGE_S before (`recent`): the copy takes 0.1-0.2 s, most of it faulting 128 MiB
in, which a user pays on every command otherwise.

The memcpy ceiling: within one host an MPI message is at best one copy from the
sender's buffer to the receiver's (single-copy: CMA, XPMEM), at worst two through a
shared segment (copy-in/copy-out), so the rate at which one core copies a buffer far
larger than the caches bounds what one message stream can reach.
"""

from __future__ import annotations

import socket
import time
from datetime import datetime, timedelta, timezone

import numpy as np

BUFFER_BYTES = 64 * 2**20  # well beyond any last-level cache, so memory, not cache, is timed
REPEATS = 5
MAX_AGE_S = 3600.0


def memcpy_ceiling(buffer_bytes: int = BUFFER_BYTES, repeats: int = REPEATS) -> dict:
    """Median rate of numpy copies of one buffer into another, after one untimed copy
    that faults both buffers' pages in; bytes copied per second (each byte read once
    and written once), the slowest and fastest copy's rate beside it."""
    source = np.ones(buffer_bytes // 8)
    target = np.empty_like(source)
    np.copyto(target, source)
    seconds = np.empty(repeats)
    for i in range(repeats):
        start = time.perf_counter()
        np.copyto(target, source)
        seconds[i] = time.perf_counter() - start
    rates = source.nbytes / seconds
    return {"bytes_per_s": float(np.median(rates)), "buffer_bytes": source.nbytes,
            "repeats": repeats, "min_bytes_per_s": float(rates.min()),
            "max_bytes_per_s": float(rates.max()), "method": "numpy.copyto, time.perf_counter"}


_measured: list[dict] = []  # this process's own, latest last


def facts() -> dict:
    """This host's name and memcpy ceiling, measured now."""
    _measured.append({"host": socket.gethostname(), "memcpy": memcpy_ceiling(),
                      "measured_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")})
    return _measured[-1]


def recent(stored: list[dict]) -> dict:
    """The first of `stored` (facts of earlier runs, latest first) or of those this process
    measured of this host within MAX_AGE_S, or this host's facts measured now."""
    since = datetime.now(timezone.utc) - timedelta(seconds=MAX_AGE_S)
    for f in [*stored, *reversed(_measured)]:
        when = f.get("measured_utc")
        if f.get("host") == socket.gethostname() and when \
                and datetime.fromisoformat(when) >= since:
            return f
    return facts()
