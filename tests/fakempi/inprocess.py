"""The launch seam's in-process fake (src/commscope/system/launcher/job.py): a Launcher whose
jobs write, in the test's own process, the records the native binary would (native.py's
latency model), to the records file as the real rank 0 does, on a clock of their own.

It translates the launch as the real launcher does (launcher.launch: argv, environment,
oversubscription, placement refused), keeps each launch's argv in `launched`, and fails
on request: a rank's error after N cases, a hang after N cases, a launcher that never
exits after the ranks' end, another record schema, an exit with only the launcher's
words on stderr.
"""

from __future__ import annotations

import dataclasses
import json
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from commscope.system.build import native_description
from commscope.system.launcher import launch

from .native import records as fake_records


@dataclass
class FakeLauncher:
    schema: int = 1  # the context record's schema
    fail_after: int | None = None  # a rank reports an error after this many cases, exit 1
    hang_after: int | None = None  # no record after this many cases, until stopped
    launcher_hangs: bool = False  # every record written, then no exit until stopped
    exit_code: int = 0  # with `stderr`: the launcher's own failure
    stderr: list[str] = field(default_factory=list)
    case_s: float = 0.0  # wall seconds each case takes
    start_s: float = 0.0  # wall seconds before the first record (MPI start-up)
    scale: float = 1.0  # the host's state: every time this many times longer
    spread: float = 0.02  # the samples' own spread within a launch
    on_case: Callable[[int], None] | None = None  # told each case written (the count)
    # With --each: how many times as slow a side is, by its value and the case's bytes
    factor: Callable[[str | None, int], float] = lambda value, nbytes: 1.0
    seed: int = 0  # another command's noise
    # The node-level kernels' bandwidth from node x to node y, bytes/s (None: the model's)
    rate: Callable[[int, int], float] | None = None
    launched: list[list[str]] = field(default_factory=list)
    # (n, factor): the command's n-th launch runs factor times as long (a slow machine state)
    slow_launch: tuple[int, float] | None = None
    # The node-level kernels: `rate`'s nodes as places in this host order (a launch of some
    # of them, in an order of its own), and each node's log factor in each launch
    host_order: list[str] | None = None
    node_noise: float = 0.0
    # A launch whose hosts (each rank's) make this true hangs after its context record
    hangs_if: Callable[[list[str]], bool] | None = None
    # (launch number, bytes) -> how many times as long that launch takes at that size: a
    # recorded machine's launches replayed (tests/test_noise_replay.py)
    replay: Callable[[int, int], float] | None = None
    # (MPI_Get_library_version's text, the family's name): another library than the fake's
    # Open MPI, as its context record names it
    library: tuple[str, str] | None = None

    def start(self, mpi, ranks: int, args: list[str], placement, records: Path) -> "FakeJob":
        if self.slow_launch is not None:
            n, factor = self.slow_launch
            self.scale = factor if len(self.launched) + 1 == n else 1.0
        how = launch(mpi, ranks, Path("commscope-native"), args + ["--output", str(records)],
                     placement)
        self.launched.append(how.argv)
        hosts = _hosts(placement, ranks)
        factor = self.factor
        if self.replay is not None:
            number = len(self.launched)
            factor = (lambda value, nbytes: self.factor(value, nbytes)
                      * self.replay(number, nbytes))
        made = fake_records(args, ranks, self.schema, native_description(mpi), self.scale,
                            self.spread, factor, self.seed, hosts, self.rate,
                            self.host_order, self.node_noise)
        hangs = self.hangs_if is not None and self.hangs_if(hosts or [])
        made = list(made)
        if self.library is not None:
            version, name = self.library
            made[0] = {**made[0], "mpi_library_version": version, "mpi_library": name}
        return FakeJob(dataclasses.replace(self, hang_after=0) if hangs else self, made,
                       how.oversubscribed, records)


def _hosts(placement, ranks: int) -> list[str] | None:
    """Each rank's host, as --hosts fills them; None: this host."""
    if not placement.hosts:
        return None
    spread = placement.hosts.ranks_per_host(ranks, round_robin=placement.map_by == "node")
    return [name for name, n in spread.items() for _ in range(n)]


class FakeJob:
    def __init__(self, fake: FakeLauncher, made: list[dict], oversubscribed: bool,
                 records: Path):
        self.oversubscribed = oversubscribed
        self.file = open(records, "a")
        self.stdout: list[str] = []
        self.code: int | None = None
        self.stopped = False
        self.hangs = fake.launcher_hangs
        self.exit_code = fake.exit_code
        self.on_case = fake.on_case
        self.cases = 0
        self.stderr = list(fake.stderr)
        self.due = self._schedule(fake, made, time.monotonic())

    def _schedule(self, fake: FakeLauncher, made: list[dict], start: float) -> list:
        """(when, line) of each record rank 0 writes, up to where the job fails or hangs."""
        due, cases = [], 0
        start += fake.start_s
        for rec in made:
            at = start + cases * fake.case_s
            if rec["type"] == "case_start" and cases == fake.fail_after:
                self.stdout.append(json.dumps({
                    "type": "error", "kernel": rec["kernel"], "send_mode": rec["send_mode"],
                    "bytes": rec["bytes"], "rank": 1, "message": "fake failure"}) + "\n")
                self.exit_code = 1
                break
            if rec["type"] == "case_start" and cases == fake.hang_after:
                due.append((at, json.dumps(rec) + "\n"))
                self.hangs = True
                break
            cases += rec["type"] == "case"
            due.append((start + cases * fake.case_s, json.dumps(rec) + "\n"))
        return due

    def lines(self) -> list[str]:
        """The lines due by now; after a case, the rest wait for the next call when
        someone is told of it (a test may signal the command then)."""
        now = time.monotonic()
        out = []
        while self.due and self.due[0][0] <= now:
            _, line = self.due.pop(0)
            self.file.write(line)
            out.append(line)
            if self.on_case and '"type": "case"' in line:
                self.cases += 1
                self.on_case(self.cases)
                break
        self.file.flush()
        return out

    def poll(self) -> int | None:
        if self.code is None and not self.due and not self.hangs:
            self.code = self.exit_code
        return self.code

    def stop(self) -> None:
        if self.code is None:
            self.code = -signal.SIGTERM
        self.stopped = True
        self.due = [(when, line) for when, line in self.due if when <= time.monotonic()]

    def output(self) -> tuple[list[str], list[str]]:
        return self.stdout, self.stderr

    def close(self) -> None:
        self.file.close()
