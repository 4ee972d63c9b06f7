"""Where the MPI library changes protocol: a coarse sweep, then bisection of each jump.

An MPI library sends a message eagerly while it fits a buffer slot and by rendezvous
(a handshake first, then the payload, often by single copy) once it does not: the
latency jumps at the switch, up (the handshake) or down (a single copy that beats the
eager path's two), and each side has its own start-up time and bandwidth.
The switch is set by the library's settings (Open MPI's btl_*_eager_limit, MPICH's
single-copy thresholds), which commscope reads through MPI_T (native/mpit.c).

The probe measures a coarse ladder of sizes (two a factor of 2: 2^k and 3 * 2^(k-1)),
finds each pair of neighbours between which the time steps off the line of the sizes
below (a jump, `jumps`), and then measures POINTS sizes evenly spaced inside each such
bracket, with its ends again, in one launch per round (`split`), until the bracket is
within RESOLUTION of its upper end or MIN_WIDTH bytes, a later launch has shown the
jump inside it again, and SEEN launches after the coarse one have shown it. The
library's limits, read after the coarse round, are then looked for in
their own windows where no switch was located at them. A switch is reported as the
first size of the later protocol (`bytes`) with the sizes it is known to lie between.

Only jumps are bisected: a change of slope with no jump (a cache size) has no size at
which one side's line stops explaining the times, and no bracket to shrink.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ..models.hockney import nonnegative_line

LARGEST = 4 << 20  # the coarse ladder's last size: 4 MiB
# A step counts as a protocol switch when the time at the upper size is off the lower
# side's line by this fraction: 15% is several times a launch median's own spread here
# (CV of medians 1-5% within a launch), and the protocol changes measured here moved
# the time by 20% (Open MPI's 6000 B eager limit) to 60%.
JUMP = 0.15
RESOLUTION = 0.01  # a switch is located within 1% of its size...
MIN_WIDTH = 64  # ...or 64 B, whichever is larger
POINTS = 7  # sizes measured inside each bracket per round: a bracket shrinks ~8x a round
SIDE = 3  # sizes on each side of a step whose line explains it
MISFITS = 1  # points a round may leave on the wrong side of its split (split)
SEEN = 2  # launches after the coarse one that must show a switch, however narrow
MAX_ROUNDS = 8  # a bracket that noise keeps from shrinking is given up after this many
# Launches in the usual state that go against a bracket before it is dropped as noise
# (each sends a narrowed one back to the bracket it came from): a coarse one whose ends
# step and whose inside does not split is dropped at once.
MAX_MISSES = 2
# A launch whose time at a bracket's lower end is this many times the fastest measured
# at that size found the machine in another state (split). This VM at times runs a
# launch's whole shared-memory path 2-4x slower (Open MPI, 12000 B eager limit: 64 B in
# 0.53-0.57 us against 0.18-0.27 us), mostly still stepping at the switch (on 2026-11-27,
# 8 launches in a row: 11,871 B in 4.2-4.8 us, against 1.35-1.7 us in others, then
# 6.6-8.0 us at 11,936 B), and in a few launches varies 3-9x from one size to the next.
OTHER_STATE = 2.0
# Open MPI counts its own header in an eager limit ("including header": ompi_info),
# MPICH's thresholds count the payload alone: a setting names a switch measured up to
# this many bytes below it.
HEADER_ALLOWANCE = 128


def ladder(largest: int = LARGEST) -> list[int]:
    """0, 1, 2, 3, 4, 6, 8, 12, ...: two sizes a factor of 2, up to `largest`."""
    sizes = {0, 1}
    k = 1
    while k <= largest:
        sizes.update(s for s in (k, 3 * k // 2) if s <= largest)
        k *= 2
    return sorted(sizes)


@dataclass(frozen=True)
class Regime:
    """A physical line over a run of sizes: t = alpha + n * slope."""
    from_bytes: int
    to_bytes: int
    alpha_s: float
    slope_s_per_byte: float
    ceiling_Bps: float | None = None  # the copy ceiling measured beside it: B's bound

    @property
    def line_Bps(self) -> float | None:
        """1 / slope where these sizes can tell one (span of 4x or more, slope above 0)."""
        if self.slope_s_per_byte <= 0 or self.to_bytes < 4 * max(self.from_bytes, 1):
            return None
        return 1 / self.slope_s_per_byte

    @property
    def bandwidth_Bps(self) -> float | None:
        """B, withheld where it is above the copy ceiling: no transfer moves bytes faster
        than one core copies them (a loaded machine's slope, not the link's)."""
        return None if self.withheld else self.line_Bps

    @property
    def withheld(self) -> bool:
        line = self.line_Bps
        return line is not None and self.ceiling_Bps is not None and line > self.ceiling_Bps


def bounded(result: "Probe", ceiling_Bps: float | None) -> "Probe":
    """The probe with each line's B bound by the copy ceiling (Regime.bandwidth_Bps)."""
    def bound(r: Regime | None) -> Regime | None:
        return None if r is None else replace(r, ceiling_Bps=ceiling_Bps)
    return replace(result, regimes=[bound(r) for r in result.regimes],
                   switches=[replace(b, below=bound(b.below), above=bound(b.above))
                             for b in result.switches])


@dataclass
class Bracket:
    """A switch known to lie in (lo, hi]: lo on the earlier protocol, hi on the later."""
    lo: int
    hi: int
    below: Regime | None  # the line of the coarse sizes on each side (None: no size there)
    above: Regime | None
    jump_s: float  # the later line's time above (or below) the earlier's at hi, last measured
    slope_below: float  # s/B of the sizes just below and just above the switch: the lines
    slope_above: float  # each round draws through its ends (split)
    rounds: int = 0
    confirmed: bool = True  # the jump was seen again in the last round
    misses: int = 0  # launches in the usual state that went against it (split)
    fastest_lo_s: float = math.inf  # the fastest time measured at lo itself so far
    seen: int = 0  # rounds that showed the jump and split the bracket
    checked: bool = False  # a launch after the one that located it showed it again
    parent: Bracket | None = None  # the bracket this one was narrowed from

    @property
    def done(self) -> bool:
        return self.hi - self.lo <= max(RESOLUTION * self.hi, MIN_WIDTH)

    @property
    def located(self) -> bool:
        return self.done and self.checked

    def interior(self) -> list[int]:
        """Up to POINTS sizes evenly inside (lo, hi)."""
        inside = np.linspace(self.lo, self.hi, POINTS + 2)[1:-1]
        return sorted({int(round(x)) for x in inside} - {self.lo, self.hi})


@dataclass
class Probe:
    """The probe's result: its switches, the lines between them, the rounds' sizes."""
    regimes: list[Regime | None]
    switches: list[Bracket]
    unconfirmed: list[Bracket] = field(default_factory=list)
    rounds: list[list[int]] = field(default_factory=list)


def line(sizes: np.ndarray, times: np.ndarray) -> Regime:
    """The least-squares physical line (alpha, slope >= 0) through a run of points.
    Unweighted: the points are launch medians of comparable relative precision, and the
    largest sizes are to set the slope."""
    w = np.ones_like(times)
    with np.errstate(invalid="ignore", divide="ignore"):  # one size: the flat line
        alpha, slope, _ = nonnegative_line(w.sum(), (w * sizes).sum(),
                                           (w * sizes * sizes).sum(), (w * times).sum(),
                                           (w * sizes * times).sum(), (w * times * times).sum())
    return Regime(int(sizes[0]), int(sizes[-1]), float(alpha), float(slope))


def _slope(sizes: np.ndarray, times: np.ndarray) -> float:
    """The least-squares slope of a few neighbouring points, never negative (0: one)."""
    if sizes.size < 2:
        return 0.0
    x = sizes - sizes.mean()
    return max(float((x * (times - times.mean())).sum() / (x * x).sum()), 0.0)


@dataclass(frozen=True)
class Step:
    """A jump from sizes[at] to sizes[at + 1], with the slopes of the sizes on its sides."""
    at: int
    slope_below: float
    slope_above: float
    jump_s: float  # the time at sizes[at + 1] above (or below) the lower side's line


def jumps(sizes, times) -> list[Step]:
    """The steps from sizes[i] to sizes[i+1] that move by more than JUMP off the line of
    the SIDE sizes just below (since the last jump): up, over that line drawn with the
    larger of the two sides' slopes (and over the time at sizes[i]), or down, under it
    while rising less than JUMP from sizes[i] (an eager copy's time can climb from
    sizes[i] and fall back to it by sizes[i+1] on a single copy). Ladder neighbours are
    a factor 1.33-2 apart, so a bandwidth-bound line rises by up to that factor, which
    the slopes account for; a line of three points, not of one step, is what 3% noise
    leaves usable. A bend with no jump that this lets through is dropped by the rounds
    (split)."""
    sizes, times = np.asarray(sizes, float), np.asarray(times, float)
    found = []
    for i in range(sizes.size - 1):
        first = max(i - SIDE + 1, found[-1].at + 1 if found else 0)  # not across a jump
        xs, ts = sizes[first:i + 1], times[first:i + 1]
        below = _slope(xs, ts)
        above = _slope(sizes[i + 1:i + 1 + SIDE], times[i + 1:i + 1 + SIDE])
        at = lambda slope: ts.mean() + slope * (sizes[i + 1] - xs.mean())  # noqa: E731
        t = times[i + 1]
        if (t > (1 + JUMP) * max(at(max(below, above)), times[i])
                or (1 + JUMP) * t < at(below) and t < (1 + JUMP) * times[i]):
            found.append(Step(i, below, above, t - at(below)))
    # the slope above a jump, of the sizes before the next one
    ends = [s.at for s in found[1:]] + [sizes.size - 1]
    return [Step(s.at, s.slope_below,
                 _slope(sizes[s.at + 1:min(s.at + 1 + SIDE, end + 1)],
                        times[s.at + 1:min(s.at + 1 + SIDE, end + 1)]), s.jump_s)
            for s, end in zip(found, ends)]


def regimes(sizes, times, after: list[int]) -> list[Regime | None]:
    """The line of each run of sizes between cuts, a cut after each size in `after`
    (ascending); None for a run that holds no size."""
    sizes, times = np.asarray(sizes, float), np.asarray(times, float)
    edges = [-1, *after, math.inf]
    runs = [(sizes > a) & (sizes <= b) for a, b in zip(edges, edges[1:])]
    return [line(sizes[run], times[run]) if run.any() else None for run in runs]


def split(bracket: Bracket, measured: dict[int, float]) -> Bracket:
    """The bracket after a round: `measured` holds this launch's times at its ends and
    inside. Lines of the two sides' slopes are drawn through this launch's ends; each
    inside point takes the side it is nearer on the log scale, and the new ends are the
    neighbours where a split leaves the fewest points on the wrong side (ties: the
    narrower bracket's lower end is the higher). The jump is seen again when the ends
    step by more than JUMP, at most MISFITS points are on the wrong side of the split
    (noise labels the points at random, and a real switch, many noise widths high,
    labels them in two runs) and the two sides' points, each side's carried along its
    line to the first upper size, step by more than JUMP. Either way: in a launch whose
    eager path ran slower than the rendezvous the step falls, and it still lies where
    the protocol changes.
    A launch in another state (OTHER_STATE) must split with no misfit; one that does
    not says nothing. One in the usual state is evidence against this bracket: a
    narrowed one goes back to the bracket it was narrowed from (one launch's noise can
    narrow to the wrong side), a coarse one counts a miss, or, where its ends stepped,
    is dropped at once."""
    lo, hi = bracket.lo, bracket.hi
    t_lo, t_hi = measured[lo], measured[hi]
    lower = lambda n: t_lo + bracket.slope_below * (n - lo)  # noqa: E731
    upper = lambda n: max(t_hi - bracket.slope_above * (hi - n), 1e-12)  # noqa: E731
    stepped = abs(math.log(t_hi / lower(hi))) > math.log1p(JUMP)
    inside = sorted(n for n in measured if lo < n < hi)
    on_upper = [abs(math.log(measured[n] / upper(n))) < abs(math.log(measured[n] / lower(n)))
                for n in inside]
    points = [lo, *inside, hi]
    labels = [False, *on_upper, True]
    # split after position j: points[:j+1] lower, points[j+1:] upper
    wrong = [sum(labels[:j + 1]) + sum(not u for u in labels[j + 1:])
             for j in range(len(points) - 1)]
    j = min(range(len(wrong)), key=lambda k: (wrong[k], -k))
    first = points[j + 1]
    before = _carried(points[:j + 1], measured, first, bracket.slope_below)
    after = _carried(points[j + 1:], measured, first, bracket.slope_above)
    rounds = bracket.rounds + 1
    other_state = t_lo > OTHER_STATE * bracket.fastest_lo_s
    if stepped and wrong[j] <= (0 if other_state else MISFITS) \
            and abs(math.log(after / before)) > math.log1p(JUMP):
        seen = replace(bracket, jump_s=after - before, rounds=rounds, seen=bracket.seen + 1,
                       fastest_lo_s=min(t_lo, bracket.fastest_lo_s))
        if bracket.done:  # a second launch shows the switch in the bracket located
            return replace(seen, checked=True)
        return replace(seen, lo=points[j], hi=first, parent=bracket,
                       fastest_lo_s=seen.fastest_lo_s if j == 0 else measured[points[j]])
    if other_state:
        return replace(bracket, rounds=rounds)
    misses = bracket.misses + 1
    if bracket.parent is not None:
        return replace(bracket.parent, rounds=rounds, misses=misses,
                       confirmed=misses < MAX_MISSES)
    return replace(bracket, rounds=rounds, misses=misses, fastest_lo_s=min(
        t_lo, bracket.fastest_lo_s), confirmed=not stepped and misses < MAX_MISSES)


def _carried(sizes: list[int], measured: dict[int, float], to: int, slope: float) -> float:
    """One side's time at size `to`: its points' mean carried along their own slope where
    there are SIDE of them (this launch's line), else along `slope` (the coarse round's);
    never below the side's fastest time, which a steep noisy line could reach past 0."""
    xs = np.array(sizes, float)
    ts = np.array([measured[n] for n in sizes])
    if xs.size >= SIDE:
        slope = _slope(xs, ts)
    return max(float(ts.mean() + slope * (to - xs.mean())), float(ts.min()))


Measure = Callable[[list[int]], dict[int, float]]  # sizes -> one launch's median times (s)


def probe(measure: Measure, coarse: list[int],
          expected: Callable[[], list[Setting]] = list) -> Probe:
    """The coarse round, then rounds of bisection until every switch is located or has
    had MAX_ROUNDS; `measure(sizes)` makes one launch and returns its medians.
    `expected()`, asked after the coarse round, gives the library's limits: a limit no
    switch was located at is then looked for in its own window (a switch can fall
    between two ladder sizes that take about the same time, as where MPICH's two-cell
    messages end at its single-copy threshold, and a launch's noise can hide a jump)."""
    first = measure(coarse)
    sizes = sorted(first)
    times = [first[s] for s in sizes]
    at = jumps(sizes, times)
    lines = regimes(sizes, times, [sizes[s.at] for s in at])
    brackets = [Bracket(sizes[s.at], sizes[s.at + 1], lines[k], lines[k + 1], s.jump_s,
                        s.slope_below, s.slope_above, fastest_lo_s=times[s.at])
                for k, s in enumerate(at)]
    result = Probe(lines, [], rounds=[sizes])
    brackets = _bisect(measure, brackets, result.rounds)
    windows = []
    for limit in expected():
        if sizes[0] <= limit.last_before and limit.bytes <= sizes[-1] and not any(
                named_by(b, [limit]) for b in windows + [b for b in brackets if b.confirmed]):
            line_ = next(r for r in reversed(lines) if r.from_bytes <= limit.bytes)
            windows.append(Bracket(limit.last_before, limit.bytes, line_, line_, 0.0,
                                   line_.slope_s_per_byte, line_.slope_s_per_byte))
    # a window no launch showed a step in is a limit with no switch measured at it
    windows = [b if b.seen else replace(b, confirmed=False)
               for b in _bisect(measure, windows, result.rounds)]
    brackets = sorted(brackets + windows, key=lambda b: b.lo)
    switches = [b for b in brackets if b.confirmed]
    # the coarse sizes' lines between the switches located, for each switch's two sides
    result.regimes = regimes(sizes, times, [b.lo for b in switches])
    result.switches = [replace(b, below=result.regimes[k], above=result.regimes[k + 1])
                       for k, b in enumerate(switches)]
    result.unconfirmed = [b for b in brackets if not b.confirmed]
    return result


def _bisect(measure: Measure, brackets: list[Bracket], rounds: list[list[int]]
            ) -> list[Bracket]:
    """Rounds of one launch each until every bracket is located and checked, seen SEEN
    times (a narrow one too) or given up; each round's sizes are appended to `rounds`."""
    while True:
        open_ = [b for b in brackets if b.confirmed and b.rounds < MAX_ROUNDS
                 and not (b.located and b.seen >= SEEN)]
        if not open_:
            return brackets
        wanted = sorted({n for b in open_ for n in (b.lo, *b.interior(), b.hi)})
        got = measure(wanted)
        rounds.append(wanted)
        brackets = [split(b, got) if b in open_ else b for b in brackets]


@dataclass(frozen=True)
class Setting:
    """A library setting of a size: where it switches protocol, a message of `bytes` is
    the first on the later one, or (`counts_header`) the limit includes the library's
    own header and the switch comes up to HEADER_ALLOWANCE bytes earlier."""
    name: str
    bytes: int
    counts_header: bool = True

    @property
    def last_before(self) -> int:
        """The largest size the switch can follow: the window it names is (this, bytes]."""
        return self.bytes - (HEADER_ALLOWANCE + 1 if self.counts_header else 1)


def named_by(bracket: Bracket, settings: list[Setting]) -> list[Setting]:
    """The settings that put a switch where this one was measured: their window meets
    the bracket's interval."""
    return [s for s in settings if bracket.lo < s.bytes and s.last_before < bracket.hi]


def protocol_settings(library: str | None, protocols: dict | None, over_network: bool
                      ) -> tuple[list[Setting], list[Setting]]:
    """The library's size settings that apply to this path (shared memory, or a network),
    and of those the limits it switches protocol at, which a probe should find."""
    if not protocols:
        return [], []
    path = "tcp" if over_network else "sm"
    sized = {n: v for n, v in protocols.items() if isinstance(v, int) and v >= 0}
    if library and "MPICH" in library:
        # MPICH's single-copy thresholds count the payload (a message of the threshold is
        # copied once); a shared-memory cell holds its header too. A message that fills
        # more than a cell takes two, a switch wherever single copy starts later.
        cma = "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"
        cell = "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE"
        applies = ["MPIR_CVAR_CH4_OFI_EAGER_THRESHOLD"] if over_network else \
            [cma, "MPIR_CVAR_CH4_IPC_XPMEM_P2P_THRESHOLD", cell]
        limits = applies[:1]
        if not over_network and cell in sized and sized[cell] <= sized.get(cma, sized[cell]):
            limits.append(cell)
        payload = ("MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD", "MPIR_CVAR_CH4_IPC_XPMEM_P2P_THRESHOLD")
    else:
        # Open MPI's eager limit includes its match header (ompi_info: "including header")
        applies = [f"btl_{path}_eager_limit", f"btl_{path}_rndv_eager_limit",
                   f"btl_{path}_max_send_size"]
        limits, payload = applies[:1], ()
    found = [Setting(n, sized[n], n not in payload) for n in applies if n in sized]
    return found, [s for s in found if s.name in limits]
