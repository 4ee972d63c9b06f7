"""A profile priced on this cluster (`commscope predict --profile`, docs/profile.md): each
row's predicted time is its calls x the cost of one call: the one figure of the stored
case of the same call, size, process count and spread (one host or several), as
`results show RUN` prints it (docs/statistics.md, "One figure per case"), else from a
fallback (profiles/whatif.py: the Hockney line fitted to the stored ping-pongs and, for a
collective, the algorithm models), saying which.

A nonblocking call's cost is less its overlap: the program's own work between the call's
return and the wait that completed it (the mean a call), which the transfer ran behind.

A point-to-point message is priced at its one-way time (ping-pong's half round trip):
MPI_Send and MPI_Recv each, so that a ping-pong's send and receive add up to its round
trip. An exchange, both ways at once, is priced at ping-ping's time (IMB's PingPing: each
message obstructed by the oncoming one): MPI_Sendrecv, and a nonblocking receive beside
sends of the same size and peer (nonblocking, or blocking with no blocking receive beside
them: a ping-pong's), whose sends are priced with it (the profiling library charges an
exchange's wait to its receives). A persistent request's start is priced as the
nonblocking call of its mode."""

from __future__ import annotations

import math
import socket
from dataclasses import dataclass, replace

import numpy as np

from ..figures.read import measured
from ..stats.summary import CaseSummary
from ..stats.verdict.claim import INCONCLUSIVE, UNDETERMINED, Claim
from ..store.cases import Case
from ..system.errors import shell_line
from ..system.launcher.placement import cores
from . import Profile, Row

BLOCKING_SENDS = {"MPI_Send": "standard", "MPI_Ssend": "synchronous", "MPI_Rsend": "ready",
                  "MPI_Bsend": "buffered"}
SEND_MODES = {**BLOCKING_SENDS, "MPI_Recv": "standard", "MPI_Isend": "standard",
              "MPI_Issend": "synchronous", "MPI_Irsend": "ready", "MPI_Ibsend": "buffered",
              "MPI_Irecv": "standard", "MPI_Send_init": "standard",
              "MPI_Ssend_init": "synchronous", "MPI_Rsend_init": "ready",
              "MPI_Bsend_init": "buffered", "MPI_Recv_init": "standard"}
NONBLOCKING_SENDS = {"MPI_Isend", "MPI_Issend", "MPI_Irsend", "MPI_Ibsend", "MPI_Send_init",
                     "MPI_Ssend_init", "MPI_Rsend_init", "MPI_Bsend_init"}
NONBLOCKING_RECEIVES = {"MPI_Irecv", "MPI_Recv_init"}
EXCHANGES = {"MPI_Sendrecv", "MPI_Sendrecv_replace"}
COLLECTIVES = {f"MPI_{name.capitalize()}": name for name in (
    "barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
    "allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter",
    "reduce_scatter_block", "scan", "exscan", "ibarrier", "ibcast", "ireduce", "iallreduce",
    "iallgather", "ialltoall")}
# calls that return before their transfer ends: what the program does until the wait hides
# that much of it (profile.c: a request's overlap)
NONBLOCKING = {*NONBLOCKING_RECEIVES, *NONBLOCKING_SENDS,
               *(call for call, kernel in COLLECTIVES.items() if kernel.startswith("i"))}
REDUCTIONS = {"reduce", "allreduce", "reduce_scatter", "reduce_scatter_block", "scan", "exscan",
              "ireduce", "iallreduce"}
ELEMENT = 4  # bytes: the reduction kernels' default dtype, int, whose multiple a size must be
MAX_GAP = 4  # interpolate between measured sizes at most this far apart (log-log)
# with no measured size on one side, a size this close to a measured one takes its figure:
# a call site's mean size a few bytes off the size measured for another
NEAR = 1.0625
LOW_EFFICIENCY = 0.8  # an efficiency whose interval lies below this: time not explained
HIGH_EFFICIENCY = 1 / LOW_EFFICIENCY  # above this: priced beyond what the program spent
# A row's efficiency: its interval below LOW_EFFICIENCY, above HIGH_EFFICIENCY, between them
# (else undetermined).
UNEXPLAINED, OVERPRICED, EXPLAINED = "unexplained", "overpriced", "explained"


@dataclass(frozen=True)
class Need:
    """The measurement that prices a row: a kernel at one size, ranks and spread."""
    kernel: str
    mode: str | None
    ranks: int
    several_hosts: bool
    bytes: int

    def hosts(self, hosts) -> str | None:
        """--hosts for it, from the profile's hosts in rank order: two different hosts for a
        message between hosts, the profile's own layout (its first ranks) for a collective
        across hosts, else the host of rank 0 (None: this one, or unknown)."""
        known = [h for h in hosts if h]
        if not known:
            return "HOST1,HOST2" if self.several_hosts else None
        if self.several_hosts and self.ranks == 2:
            return ",".join(list(dict.fromkeys(known))[:2])
        if self.several_hosts:
            first = known[: self.ranks]
            return ",".join(f"{h}:{first.count(h)}" for h in dict.fromkeys(first))
        return None if known[0] == socket.gethostname() else f"{known[0]}:{self.ranks}"


def runs_of(needs, hosts) -> dict[tuple, list[int]]:
    """The fewest runs that measure these needs: (kernel, mode, ranks, --hosts) -> sizes."""
    groups: dict[tuple, set[int]] = {}
    for n in needs:
        groups.setdefault((n.kernel, n.mode, n.ranks, n.hosts(hosts)), set()).add(n.bytes)
    return {key: sorted(sizes) for key, sizes in groups.items()}


def commands(needs, hosts, db) -> list[str]:
    """The `commscope run` commands of runs_of(needs, hosts), into the results file `db`;
    a profile's rank count beyond this host's cores measured anyway (as the refusal of
    more ranks than cores offers)."""
    return [shell_line("run", kernel, "--np", ranks, "--sizes", ",".join(map(str, sizes)),
                       *(["--modes", mode] if mode else []),
                       *(["--hosts", where] if where else
                         ["--oversubscribe"] if ranks > cores() else []), db=db)
            for (kernel, mode, ranks, where), sizes in runs_of(needs, hosts).items()]


@dataclass(frozen=True)
class Priced:
    row: Row  # summed over ranks
    need: Need | None  # None: no commscope kernel measures this call
    cost_s: float | None  # one call
    cost_ci_s: tuple[float, float] | None
    source: str  # "measured", "interpolated", "nearest", "hockney", "model:<algorithm>",
    # "with MPI_Irecv"
    evidence: str  # which runs and sizes
    why_not: str | None = None  # unpriced: why
    overlap_s: float = 0.0  # a nonblocking call's: the program's work while it was in flight
    with_s: float = 0.0  # an exchange's receive: the profiled time of the sends priced with it

    def _calls(self, cost: float) -> float:
        """The row's calls at this cost each, less the overlap: a transfer that the
        program's own work covered costs it no wait."""
        return self.row.count * max(cost - self.overlap_s, 0.0)

    @property
    def predicted_s(self) -> float | None:
        return None if self.cost_s is None else self._calls(self.cost_s)

    @property
    def predicted_ci_s(self) -> tuple[float, float] | None:
        ci = self.cost_ci_s
        return None if ci is None else (self._calls(ci[0]), self._calls(ci[1]))

    @property
    def efficiency(self) -> Claim | None:
        """Predicted over profiled, as a claim: well below 1, the program loses time the
        network does not explain (waits for late ranks, imbalance); well above, the price
        is more than the program paid, a price to check. Its ratio is the efficiency itself,
        and its interval is the predicted cost's over the profiled time; `unexplained` where
        that lies below LOW_EFFICIENCY, `overpriced` above HIGH_EFFICIENCY. None: no
        efficiency (an exchange's sends priced with its receives, no time)."""
        spent = self.row.time_s + self.with_s
        if self.predicted_s is None or self.source.startswith("with") or not spent:
            return None
        r, cost = self.row, self.predicted_ci_s
        ci = None if cost is None else (cost[0] / spent, cost[1] / spent)
        if ci is None:
            word = INCONCLUSIVE
        else:
            word = UNEXPLAINED if ci[1] < LOW_EFFICIENCY else \
                OVERPRICED if ci[0] > HIGH_EFFICIENCY else \
                EXPLAINED if ci[0] >= LOW_EFFICIENCY and ci[1] <= HIGH_EFFICIENCY \
                else UNDETERMINED
        # launches 0: not a comparison over launches, its interval the cost's (its case's)
        return Claim("efficiency", f"{r.call} comm {r.comm_size} {r.bytes} B {r.peer or ''}"
                     .strip(), self.predicted_s / spent, ci, None, word, 0, False, None,
                     word in (UNEXPLAINED, OVERPRICED))


def spread(hosts) -> bool:
    """Several hosts among these (else one, or unknown)."""
    return len({h for h in hosts if h}) > 1


def exchanges(rows) -> set[tuple]:
    """(communicator size, bucket, peer) of the nonblocking receives that have sends of the
    same beside them: nonblocking ones, or blocking ones with no blocking receive of the
    same (which would make them a ping-pong's): exchanges."""
    def of(calls):
        return {(r.comm_size, r.bytes, r.peer) for r in rows if r.call in calls}
    return of(NONBLOCKING_RECEIVES) & (
        of(NONBLOCKING_SENDS) | (of(BLOCKING_SENDS) - of({"MPI_Recv"})))


def needs(rows, hosts) -> list[tuple[Row, "Need | None"]]:
    """Each row with the measurement that prices it."""
    several, both_ways = spread(hosts), exchanges(rows)
    return [(r, need_of(r, several, (r.comm_size, r.bytes, r.peer) in both_ways)) for r in rows]


def need_of(row: Row, several_hosts: bool, exchange: bool = False) -> Need | None:
    size = int(round(row.mean_bytes))
    if exchange and row.call in {*NONBLOCKING_RECEIVES, *NONBLOCKING_SENDS, *BLOCKING_SENDS}:
        return Need("pingping", None, 2, row.peer == "remote", size)
    if row.call in SEND_MODES:
        return Need("pingpong", SEND_MODES[row.call], 2, row.peer == "remote", size)
    if row.call in EXCHANGES:
        return Need("pingping", None, 2, row.peer == "remote", size)
    if row.call in COLLECTIVES and row.comm_size >= 2:
        kernel = COLLECTIVES[row.call]
        if kernel.endswith("barrier"):
            size = 0
        elif kernel in REDUCTIONS:
            size = max(ELEMENT, ELEMENT * round(size / ELEMENT))
        return Need(kernel, None, row.comm_size, several_hosts, size)
    return None


# Parameters that make a case something other than the plain call a program makes: an
# algorithm forced (tune), a mock-up (check), persistent requests, a derived datatype.
NOT_PLAIN = ("algorithm", "as", "persistent", "layout")


def plain(case: Case) -> bool:
    """The call as a program makes it, under the library's own settings, with every rank
    on time."""
    return not any(case.params.get(name) for name in NOT_PLAIN) and \
        not case.settings.get("library") and not case.settings.get("late")


class Prices:
    """The stored cases that price rows, by what they measured: the plain ones, or (rules)
    those measured under a rules file's library settings; each with its one figure
    (figures.read.measured, run by run), which prices one call."""

    def __init__(self, found: list[tuple[list[Case], CaseSummary]], label: str,
                 rules: str | None = None):
        self.label = label  # where they came from: "runs 3-7 of x.db"
        self.by_need: dict[tuple, list[Case]] = {}
        self.figure: dict[tuple, list[CaseSummary]] = {}
        for cases, s in sorted(found, key=lambda f: f[1].run):
            c = cases[0]
            under = rules is not None and rules in c.settings.get("library", {}).values()
            if not s.measured or s.imported or not (under if rules else plain(c)):
                continue
            key = (c.kernel, c.send_mode if c.kernel in ("pingpong", "pingping") else None,
                   c.ranks, spread(c.hosts))
            self.by_need.setdefault(key, []).extend(cases)
            self.figure.setdefault(key, []).append(s)

    def measured(self, need: Need) -> tuple[float, tuple[float, float] | None, str, str] | None:
        """One call's cost at this size: (its case's figure, that figure's 95% interval,
        source, evidence), from the newest run at the size, else between the nearest
        sizes either side, else at the nearest size within NEAR of it."""
        found = self.figure.get((need.kernel, need.mode, need.ranks, need.several_hosts), [])
        at = [s for s in found if s.bytes == need.bytes]
        if at:
            s = at[-1]
            return s.median_s, _ci(s), "measured", f"run {s.run}"
        below = [s for s in found if s.bytes < need.bytes]
        above = [s for s in found if s.bytes > need.bytes]
        lo = max(below, key=lambda s: (s.bytes, s.run), default=None)
        hi = min(above, key=lambda s: (s.bytes, -s.run), default=None)
        if not lo or not hi or hi.bytes > MAX_GAP * max(lo.bytes, 1):
            near = [s for s in (lo, hi) if s and max(s.bytes, need.bytes) <=
                    NEAR * min(s.bytes, need.bytes)]
            if not near:
                return None
            s = min(near, key=lambda s: abs(math.log(max(s.bytes, 1) / max(need.bytes, 1))))
            return s.median_s, _ci(s), "nearest", f"run {s.run} at {s.bytes} B"
        w = _weight(lo.bytes, hi.bytes, need.bytes)
        ci_lo, ci_hi = _ci(lo), _ci(hi)
        ci = None if ci_lo is None or ci_hi is None else (
            _between(ci_lo[0], ci_hi[0], w), _between(ci_lo[1], ci_hi[1], w))
        return _between(lo.median_s, hi.median_s, w), ci, "interpolated", (
            f"runs {lo.run}, {hi.run} at {lo.bytes} and {hi.bytes} B")


def _ci(s: CaseSummary) -> tuple[float, float] | None:
    return None if s.ci_low_s is None else (s.ci_low_s, s.ci_high_s)


def _weight(a: int, b: int, x: int) -> float:
    """Where x lies between sizes a and b, in log size (a = 0: linear)."""
    if a <= 0:
        return x / b
    return math.log(x / a) / math.log(b / a)


def _between(y0: float, y1: float, w: float) -> float:
    if y0 > 0 and y1 > 0:
        return float(np.exp(np.log(y0) + w * (np.log(y1) - np.log(y0))))
    return y0 + w * (y1 - y0)


def price(profile: Profile, prices: Prices, hosts, model=None) -> list[Priced]:
    """Every summed row of the profile, priced or said why not; `model(need)` is the
    fallback: (cost, ci, source, evidence) or None."""
    rows = profile.summed()
    both_ways = exchanges(rows)
    out = [_priced(row, need, prices, model) for row, need in needs(rows, hosts)]

    def where(p):
        return (p.row.comm_size, p.row.bytes, p.row.peer)
    received = {where(p) for p in out if p.row.call in NONBLOCKING_RECEIVES
                and p.cost_s is not None and where(p) in both_ways}
    sends = {id(p): p for p in out if p.row.call in {*NONBLOCKING_SENDS, *BLOCKING_SENDS}
             and where(p) in received}
    with_s = {key: sum(p.row.time_s for p in sends.values() if where(p) == key)
              for key in received}
    return [Priced(p.row, p.need, 0.0, (0.0, 0.0), "with MPI_Irecv",
                   "its exchange's wait is charged to the receives") if id(p) in sends else
            replace(p, with_s=with_s[where(p)])
            if p.row.call in NONBLOCKING_RECEIVES and where(p) in received else p
            for p in out]


def _priced(row: Row, need: Need | None, prices: Prices, model) -> Priced:
    if need is None:
        return Priced(row, None, None, None, "", "", _no_kernel(row))
    found = prices.measured(need) or (model(need) if model else None)
    if found is None:
        return Priced(row, need, None, None, "", "",
                      f"nothing in {prices.label} measures {need.kernel} at {need.bytes} B "
                      f"on {need.ranks} ranks"
                      f"{' across hosts' if need.several_hosts else ' on one host'}")
    overlap = row.overlap_s / row.count if row.overlap_s and row.call in NONBLOCKING else 0.0
    return Priced(row, need, *found, overlap_s=overlap)


def stored_prices(store, rules: str | None = None, run_ids: list[int] | None = None,
                  label: str | None = None) -> Prices:
    """Every measured (not imported) case of a results file (of `run_ids`), profiles
    aside, with its figure as `results show RUN` gives it; with `rules` (a rules file's
    path), those measured under it."""
    ids = run_ids or [r.id for r in store.runs() if r.kernel != "profile"]
    found = [pair for run_id in ids for pair in measured(store, [run_id])]
    return Prices(found, label or (f"the runs under {rules}" if rules else str(store.path)),
                  rules)


def _no_kernel(row: Row) -> str:
    if row.call.startswith(("MPI_Wait", "MPI_Test")):
        return (f"{row.call} of no request the profile started (null or generalized "
                "requests): no size to price")
    if row.comm_size < 2 and row.call in COLLECTIVES:
        return "a collective on one rank: no communication"
    return f"no commscope kernel measures {row.call} alone"


def total(priced: list[Priced]) -> tuple[float, tuple[float, float] | None]:
    """The predicted time of the priced rows, its interval the rows' half-widths added in
    quadrature (independent measurements)."""
    done = [p for p in priced if p.predicted_s is not None]
    value = sum(p.predicted_s for p in done)
    if any(p.predicted_ci_s is None for p in done):
        return value, None
    low = math.sqrt(sum((p.predicted_s - p.predicted_ci_s[0]) ** 2 for p in done))
    high = math.sqrt(sum((p.predicted_ci_s[1] - p.predicted_s) ** 2 for p in done))
    return value, (value - low, value + high)
