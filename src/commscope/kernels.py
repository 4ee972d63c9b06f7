"""What each native kernel's sample means, and what it needs, on the Python side.

The definitions are those of docs/native.md: a sample `t` is seconds per
iteration; latency and bandwidth follow from it here, never in C.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import UserError

SEND_MODES = ("standard", "synchronous", "buffered", "ready", "nonblocking", "sendrecv")
BW_WINDOW_BYTES = 1 << 30  # the native bw/bibw receiver keeps its window within 1 GiB


def effective_window(window: int, nbytes: int) -> int:
    return max(1, min(window, BW_WINDOW_BYTES // nbytes)) if nbytes else window


@dataclass(frozen=True)
class Kernel:
    name: str
    description: str
    min_ranks: int
    modes: tuple[str, ...]  # empty: the kernel has no send modes
    messages_per_iteration: str  # "round_trip", "exchange", "window", "bidirectional_window"

    def latency_s(self, t: float, window: int | None) -> float:
        """Time per message: half the round trip, one exchange, or one window slot."""
        if self.messages_per_iteration == "round_trip":
            return t / 2
        if self.messages_per_iteration == "exchange":
            return t
        return t / window

    def bandwidth_Bps(self, t: float, nbytes: int, window: int | None) -> float:
        """Payload bytes per second (both directions added for bibw)."""
        if t <= 0:
            return float("nan")
        if self.messages_per_iteration == "bidirectional_window":
            return 2 * window * nbytes / t
        return nbytes / self.latency_s(t, window)

    def bytes_per_rank(self, nbytes: int, window: int) -> int:
        """Buffer memory the busiest rank allocates for one case."""
        if self.messages_per_iteration in ("window", "bidirectional_window"):
            return nbytes * (1 + effective_window(window, nbytes))
        return 2 * nbytes  # a send and a receive buffer


KERNELS = {k.name: k for k in (
    Kernel("pingpong", "round trip between two ranks, in every send mode", 2, SEND_MODES,
           "round_trip"),
    Kernel("pingping", "both ranks send at once, then receive (IMB PingPing)", 2, (),
           "exchange"),
    Kernel("bw", "streaming bandwidth: a window of nonblocking sends, then an ack (OSU bw)", 2,
           (), "window"),
    Kernel("bibw", "bidirectional streaming bandwidth (OSU bibw)", 2, (), "bidirectional_window"),
)}


def kernel(name: str) -> Kernel:
    try:
        return KERNELS[name]
    except KeyError:
        raise UserError(f"unknown kernel '{name}'; choose one of: {', '.join(KERNELS)}") from None


def modes_for(k: Kernel, spec: str | None) -> list[str | None]:
    """The send modes to run: the --modes list, checked against what the kernel takes."""
    if not k.modes:
        if spec:
            raise UserError(f"--modes: kernel {k.name} has no send modes; drop --modes")
        return [None]
    if not spec:
        return [k.modes[0]]
    if spec.strip() == "all":
        return list(k.modes)
    wanted = [m.strip() for m in spec.split(",") if m.strip()]
    if not wanted:
        raise UserError(f"--modes: '{spec}' names no send mode; choose from: {', '.join(k.modes)}")
    for m in wanted:
        if m not in k.modes:
            raise UserError(f"--modes: unknown send mode '{m}' for {k.name}; "
                            f"choose from: {', '.join(k.modes)}, or all")
    return list(dict.fromkeys(wanted))
