"""A progress bar with ETA on stderr, drawn only when stderr is a terminal."""

from __future__ import annotations

import sys
import time


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


class Progress:
    def __init__(self, total: int, label: str = "", stream=None):
        self.total = total
        self.done = 0
        self.label = label
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.enabled = self.stream.isatty()
        self._draw("")

    def advance(self, what: str = "") -> None:
        self.done += 1
        self._draw(what)

    def _draw(self, what: str) -> None:
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.started
        # ETA from the mean time per finished case: cases of one run cost about the same
        # (the sample count follows --min-time), so this is fair after the first few.
        eta = elapsed / self.done * (self.total - self.done) if self.done else None
        width = 24
        filled = width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (width - filled)
        eta_text = f"ETA {_clock(eta)}" if eta is not None else "ETA --:--"
        line = f"{self.label} [{bar}] {self.done}/{self.total} {_clock(elapsed)} {eta_text} {what}"
        self.stream.write("\r\x1b[2K" + line[:120])
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
