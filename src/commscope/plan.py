"""What one launch measures: kernel, ranks, cases, and how it is placed and synchronised."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import UserError
from .kernels import Kernel
from .launcher import Placement
from .sizes import format_bytes

SYNCS = ("barrier", "window")
EPOCHS = ("fence", "lock", "lock_all_flush", "pscw")  # rma's access epochs, given as --sync
DEFAULT_PRECISION = 0.01  # the 95% CI of each median within +-1% of it
DEFAULT_MAX_TIME = 2.0  # seconds of sampling before a case stops short of that
TIMEOUT_BASE, TIMEOUT_FACTOR = 60.0, 10.0  # default per-case timeout: 60 s + 10x the budget
ITERS_TIMEOUT = 600.0  # --iters gives no time budget: 10 minutes per case


def parse_precision(text: str, flag: str = "--precision") -> float:
    """A relative precision: 1%, 0.5% or 0.01."""
    raw = str(text).strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise UserError(f"{flag} {text}: give a relative precision such as 1% or 0.01, "
                        "above 0 and below 100%")
    return value


def check_sample_count(iters: int | None, min_time: float | None, max_time: float,
                       where: str = "--", timeout: float | None = None) -> None:
    if iters is not None and iters < 1:
        raise UserError(f"{where}iters {iters}: give at least 1 sample per case")
    if min_time is not None and not min_time > 0:
        raise UserError(f"{where}min-time {min_time}: give a positive number of seconds")
    if not max_time > 0:
        raise UserError(f"{where}max-time {max_time}: give a positive number of seconds")
    if timeout is not None and not timeout > 0:
        raise UserError(f"{where}timeout {timeout}: give a positive number of seconds")


@dataclass(frozen=True)
class Plan:
    kernel: Kernel
    ranks: int
    modes: list[str | None]
    sizes: list[int]
    iters: int | None
    min_time: float | None  # None, and no --iters: --precision decides
    window: int
    validate: bool
    params: dict[str, str] = field(default_factory=dict)
    sync: str = "barrier"
    placement: Placement = Placement()
    precision: float = DEFAULT_PRECISION
    max_time: float = DEFAULT_MAX_TIME
    timeout: float | None = None  # None: case_timeout derives one

    @property
    def case_timeout(self) -> float:
        """Seconds a case (or the launch before its first record) may go without progress.

        Derived from the case's sampling budget: start-up, probing and calibration
        take seconds, sampling at most the budget; ten times that is a hang.
        """
        if self.timeout:
            return self.timeout
        if self.iters:
            return ITERS_TIMEOUT
        return TIMEOUT_BASE + TIMEOUT_FACTOR * (self.min_time or self.max_time)

    @property
    def cases(self) -> int:
        return len(self.modes) * len(self.sizes)

    def native_args(self) -> list[str]:
        args = ["--kernel", self.kernel.name, "--sizes", ",".join(map(str, self.sizes)),
                "--window", str(self.window), "--sync", self.sync]
        if self.modes != [None]:
            args += ["--modes", ",".join(self.modes)]
        args += self._sample_count_args()
        for key, value in self.params.items():
            args += ["--param", f"{key}={value}"]
        if self.validate:
            args.append("--validate")
        return args

    def _sample_count_args(self) -> list[str]:
        if self.iters:
            return ["--iters", str(self.iters)]
        if self.min_time:
            return ["--min-time", repr(self.min_time)]
        return ["--precision", repr(self.precision), "--max-time", repr(self.max_time)]

    def settings(self) -> dict:
        """What was asked for, stored with the run: the provenance of every case in it."""
        return {"params": self.params, "sync": self.sync, **self.placement.as_dict(),
                "modes": self.modes, "sizes": self.sizes, "iters": self.iters,
                "min_time": None if self.iters else self.min_time,
                "precision": None if self.iters or self.min_time else self.precision,
                "max_time": None if self.iters or self.min_time else self.max_time,
                "window": self.window,
                "validate": self.validate}


def split_sync(k: Kernel, sync: str, given: dict[str, str],
               flag: str = "--sync") -> tuple[str, dict[str, str]]:
    """The timing loop's sync, and the kernel parameters, for a --sync value.

    For rma, --sync also names the access epoch (fence, lock, ...): that becomes its
    epoch parameter, and the loop starts samples after a barrier.
    """
    takes_epoch = "epoch" in k.params
    if sync == "window" and takes_epoch:
        # Window sync's busy-wait keeps the target out of MPI, and MPICH 5.0.2 grants a
        # lock only when the target enters MPI: 8 B lock epochs took 1.6 ms, not 2.1 us.
        raise UserError(f"{flag} window: the rma target would wait outside MPI, stalling its "
                        f"epochs; use {flag} barrier, fence, lock, lock_all_flush or pscw")
    if sync in SYNCS:
        return sync, given
    if not takes_epoch:
        raise UserError(f"{flag} {sync}: an RMA access epoch, which only rma takes; "
                        f"use {flag} {' or '.join(SYNCS)} for {k.name}")
    if given.get("epoch", sync) != sync:
        raise UserError(f"{flag} {sync}: the epoch is already given as epoch={given['epoch']}; "
                        "give it once")
    return "barrier", {**given, "epoch": sync}


def parse_ranks(spec: str, flag: str = "--np") -> list[int]:
    """Process counts: a list (2,4,8) or a power-of-two range (2:16), sorted, distinct."""
    counts: set[int] = set()
    for item in (i.strip() for i in str(spec).split(",")):
        m = re.fullmatch(r"(\d+)(?:\s*:\s*(\d+))?", item)
        if not m or int(m.group(1)) < 1:
            raise UserError(f"{flag}: '{item}' is not a process count; use a list (2,4,8) "
                            "or a power-of-two range (2:16)")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise UserError(f"{flag}: range {item} ends below its start")
        if m.group(2) is None:
            counts.add(lo)
            continue
        n = lo
        while n <= hi:
            counts.add(n)
            n *= 2
    return sorted(counts)


def available_memory() -> int | None:
    """MemAvailable of this host in bytes (Linux), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_memory(plan: Plan) -> None:
    """Refuse sizes whose buffers cannot fit on this host, before launching anything."""
    largest = max(plan.sizes)
    per_rank = plan.kernel.memory(largest, plan.window, plan.ranks)
    need = per_rank * (2 if plan.kernel.two_ranks else plan.ranks)
    have = available_memory()
    if have is not None and need > have:
        raise UserError(
            f"--sizes: {format_bytes(largest)} messages need {per_rank / 2**30:.1f} GiB per "
            f"rank for {plan.kernel.name}, {need / 2**30:.1f} GiB on this host for "
            f"{plan.ranks} ranks, but only {have / 2**30:.1f} GiB is available; "
            "lower the largest size")
