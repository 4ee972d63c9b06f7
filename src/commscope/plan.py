"""What one launch measures: kernel, ranks, cases, and how it is placed and synchronised."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import UserError
from .kernels import Kernel
from .launcher import Placement
from .sizes import format_bytes

SYNCS = ("barrier", "window")


@dataclass(frozen=True)
class Plan:
    kernel: Kernel
    ranks: int
    modes: list[str | None]
    sizes: list[int]
    iters: int | None
    min_time: float
    window: int
    validate: bool
    params: dict[str, str] = field(default_factory=dict)
    sync: str = "barrier"
    placement: Placement = Placement()

    @property
    def cases(self) -> int:
        return len(self.modes) * len(self.sizes)

    def native_args(self) -> list[str]:
        args = ["--kernel", self.kernel.name, "--sizes", ",".join(map(str, self.sizes)),
                "--window", str(self.window), "--sync", self.sync]
        if self.modes != [None]:
            args += ["--modes", ",".join(self.modes)]
        args += ["--iters", str(self.iters)] if self.iters else ["--min-time", repr(self.min_time)]
        for key, value in self.params.items():
            args += ["--param", f"{key}={value}"]
        if self.validate:
            args.append("--validate")
        return args

    def settings(self) -> dict:
        """What was asked for, stored with the run: the provenance of every case in it."""
        return {"params": self.params, "sync": self.sync, **self.placement.as_dict(),
                "modes": self.modes, "sizes": self.sizes, "iters": self.iters,
                "min_time": None if self.iters else self.min_time, "window": self.window,
                "validate": self.validate}


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
