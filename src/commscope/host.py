"""Facts about the launching host, measured with each run and stored with it, so views
read them from the store instead of timing anything themselves.

The memcpy ceiling: within one host an MPI message is at best one copy from the
sender's buffer to the receiver's (single-copy: CMA, XPMEM), at worst two through a
shared segment (copy-in/copy-out), so the rate at which one core copies a buffer far
larger than the caches bounds what one message stream can reach.
"""

from __future__ import annotations

import functools
import socket
import time

import numpy as np

BUFFER_BYTES = 64 * 2**20  # well beyond any last-level cache, so memory, not cache, is timed
REPEATS = 7


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


@functools.lru_cache(maxsize=1)
def facts() -> dict:
    """This host's name and memcpy ceiling, measured once per command."""
    return {"host": socket.gethostname(), "memcpy": memcpy_ceiling()}
