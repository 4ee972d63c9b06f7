"""What one launch measures, and the one builder that checks it: kernel, ranks, cases,
placement, synchronisation and sampling, from plain values.

Every verb and study builds its plans here (`plans`, `sampling`), and a plan is derived
from a built one only here (a side of a comparison: `side`; a launch on some of its hosts:
`on_hosts`; a launch of some of its cases: Plan.measuring; a watch's probe: `for_probe`),
so what a valid plan is lives in one place; measure/params.py checks a kernel's
parameters, sizes and memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Iterable

from ..system.errors import UserError
from ..system.kernels import Catalog, Kernel
from ..system.launcher import BIND_TO, MAP_BY, TRANSPORTS, Placement, check_placement, host_fields
from ..system.launcher.hosts import Hosts
from ..system.launcher.placement import cores, most_per_host, room
from ..stats.replication import MAX_LAUNCHES, PILOT
from ..stats.verdict.spec import VerdictSpec
from ..system.sizes import parse_sizes
from .params import (FLAGS, Names, _finite, check_memory, check_needs, check_sizes, modes_for,
                     params_for, size_units, split_sync)

DEFAULT_SIZES = "0:4MiB"
# The default goal: each case's launch-aware 95% interval within +-5% of its median
# (replication.py), in at most 1 s of launches per run once 3 launches are in.
DEFAULT_PRECISION = 0.05
DEFAULT_MAX_TIME = 1.0
AUTO_LAUNCHES = (PILOT, MAX_LAUNCHES)  # auto: at least 3 launches, at most 10
# Per case and launch: the first round of samples. Fewer than the 6 a launch's own CI of
# the median needs, since the interval is of the launches' medians: a case whose time
# share ends after 3 samples (bw at 4 MiB: 256 MiB a sample) is still one launch's median.
LAUNCH_MIN_SAMPLES = 3
MIN_CASE_TIME = 1e-3  # a launch's per-case share of the budget is never taken below 1 ms
TIMEOUT_BASE, TIMEOUT_FACTOR = 60.0, 10.0  # default per-case timeout: 60 s + 10x the budget
ITERS_TIMEOUT = 600.0  # --iters gives no time budget: 10 minutes per case


@dataclass(frozen=True)
class Sampling:
    """How a run spends its time: over `launches` launches (None: auto, see launches.py),
    each case taking a fixed count of samples per launch (iters), a fixed time
    (min_time), or by default samples until its launch-aware interval is within
    +-precision of the median, the launches of the run sharing max_time seconds."""
    iters: int | None = None
    min_time: float | None = None
    precision: float = DEFAULT_PRECISION
    max_time: float = DEFAULT_MAX_TIME
    timeout: float | None = None  # None: Step.case_timeout derives one
    launches: int | None = None  # None: auto

    @property
    def adaptive(self) -> bool:
        return not (self.iters or self.min_time)

    def settings(self) -> dict:
        return {"iters": self.iters, "min_time": None if self.iters else self.min_time,
                "precision": self.precision if self.adaptive else None,
                "max_time": self.max_time if self.adaptive else None,
                "launches": self.launches or "auto"}


@dataclass(frozen=True)
class Step:
    """One launch of a run: its number (the seed of its case order), and, when the run
    samples to a precision, each case's share of the time left and the precision a
    launch median needs (launches.py); `timeout_s`, where given, the seconds a case of this
    launch may go without progress (health's rounds: their deadline, set launch by launch
    from the slowest before it)."""
    number: int = 1
    case_time_s: float = DEFAULT_MAX_TIME
    within_precision: float = DEFAULT_PRECISION / 2
    timeout_s: float | None = None

    def native_args(self, sampling: Sampling) -> list[str]:
        args = ["--shuffle", str(self.number)]
        if sampling.iters:
            return args + ["--iters", str(sampling.iters)]
        if sampling.min_time:
            return args + ["--min-time", repr(sampling.min_time)]
        return args + ["--precision", repr(self.within_precision), "--max-time",
                       repr(max(self.case_time_s, MIN_CASE_TIME)), "--min-samples",
                       str(LAUNCH_MIN_SAMPLES)]

    def case_timeout(self, sampling: Sampling) -> float:
        """Seconds a case (or the launch before its first record) may go without progress.

        Derived from the case's sampling budget: start-up, probing and calibration
        take seconds, sampling at most the budget; ten times that is a hang.
        """
        if self.timeout_s or sampling.timeout:
            return self.timeout_s or sampling.timeout
        if sampling.iters:
            return ITERS_TIMEOUT
        return TIMEOUT_BASE + TIMEOUT_FACTOR * (sampling.min_time or self.case_time_s)

    def settings(self) -> dict:
        return {"launch": self.number, "case_time_s": self.case_time_s,
                "within_precision": self.within_precision}


def parse_precision(text, name: str = "--precision") -> float:
    """A relative precision: 1%, 0.5% or 0.01."""
    raw = str(text).strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise UserError(f"{name} {text}: give a relative precision such as 1% or 0.01, "
                        "above 0 and below 100%")
    return value


def parse_launches(value, name: str = "--launches") -> int | None:
    """A launch count: a whole number from 1, or auto (None)."""
    if value is None or str(value).strip() == "auto":
        return None
    text = str(value).strip()
    if not text.isdigit() or int(text) < 1:
        raise UserError(f"{name} {value}: give a whole number of launches from 1, or auto")
    return int(text)


def sampling(*, iters: int | None = None, min_time: float | None = None,
             precision=None, max_time: float | None = None, timeout: float | None = None,
             launches=None, names: Names = FLAGS) -> Sampling:
    """Sampling, checked: one of iters, min_time or precision; positive times; a launch
    count from 1, or auto."""
    if sum(v is not None for v in (iters, min_time, precision)) > 1:
        raise UserError(f"{names.where}give one of {names('precision')}, "
                        f"{names('min_time')} or {names('iters')}")
    max_time = DEFAULT_MAX_TIME if max_time is None else max_time
    if iters is not None and iters < 1:
        raise UserError(f"{names('iters')} {iters}: give at least 1 sample per case")
    for key, value in (("min_time", min_time), ("max_time", max_time), ("timeout", timeout)):
        if value is not None and not value > 0:
            raise UserError(f"{names(key)} {value}: give a positive number of seconds")
    budget = ("min_time", min_time) if min_time else ("max_time", max_time) if not iters \
        else None
    if timeout is not None and budget and timeout <= budget[1]:
        raise UserError(f"{names('timeout')} {timeout}: a case may sample for "
                        f"{names(budget[0])} {budget[1]:g} s; give a timeout above that, or "
                        f"lower {names(budget[0])}")
    chosen = DEFAULT_PRECISION if precision is None else parse_precision(precision,
                                                                          names("precision"))
    return Sampling(iters, min_time, chosen, max_time, timeout,
                    parse_launches(launches, names("launches")))


# --late: samples per delay and launch when --iters does not say (each cycle is one
# punctual sample and one of each delay), and launches when --launches is auto: the
# sensitivity's interval is over launches, and 5 give a t interval of 4 df.
LATE_CYCLES = 20
LATE_LAUNCHES = 5
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


@dataclass(frozen=True)
class Late:
    """--late RANK:DELAYS (or random:DELAYS): in a late sample, `rank` (None: one drawn per
    sample) waits each delay before its call (`placebo`: after it), by `wait`."""
    rank: int | None
    delays_s: tuple[float, ...]
    wait: str = "sleep"
    placebo: bool = False

    def native_args(self) -> list[str]:
        spec = f"{'random' if self.rank is None else self.rank}:" + ",".join(
            repr(d) for d in self.delays_s)
        return ["--late", spec, "--late-wait", self.wait] + (
            ["--late-placebo"] if self.placebo else [])

    def settings(self) -> dict:
        return {"rank": "random" if self.rank is None else self.rank,
                "delays_s": list(self.delays_s), "wait": self.wait, "placebo": self.placebo}


def parse_late(spec: str, wait: str = "sleep", placebo: bool = False,
               names: Names = FLAGS) -> Late:
    """RANK:D1,D2 or random:D1,D2, each delay a positive time with a unit (0.1ms, 1ms, 10ms;
    bare: seconds)."""
    name = names("late")
    rank, colon, delays = str(spec).partition(":")
    rank = rank.strip()
    if not colon or not (rank == "random" or rank.isdigit()):
        raise UserError(f"{name} {spec}: write RANK:DELAY[,DELAY...] (e.g. 1:0.1ms,1ms,10ms) "
                        "or random:DELAY[,...]")
    found = []
    for item in (d.strip() for d in delays.split(",")):
        m = re.fullmatch(r"(-?[0-9.]+(?:e-?\d+)?)\s*(s|ms|us)?", item)
        value = float(m.group(1)) * TIME_UNITS[m.group(2) or "s"] if m and _finite(
            m.group(1)) else None
        if value is None or value <= 0:
            raise UserError(f"{name} {spec}: '{item}' is not a positive delay; give one "
                            "with a unit, such as 0.1ms, 1ms or 10ms")
        found.append(value)
    if wait not in ("sleep", "spin"):
        raise UserError(f"{names('late_wait')} {wait}: choose sleep or spin")
    return Late(None if rank == "random" else int(rank), tuple(found), wait, placebo)


def check_late(late: Late, k: Kernel, ranks: int, sync: str, names: Names) -> None:
    if k.family != "collective":
        raise UserError(f"{names('late')}: {k.name} is not a collective; a late rank is "
                        "measured on collectives (barrier, bcast, allreduce, ...)")
    if k.phases:  # its phases are started together by a barrier, which would absorb it
        raise UserError(f"{names('late')}: {k.name} times its phases apart, each after a "
                        f"barrier; measure its blocking form ({k.name[1:]})")
    if late.rank is not None and late.rank >= ranks:
        raise UserError(f"{names('late')} {late.rank}:...: rank {late.rank} is not one of "
                        f"the {ranks} ranks ({names('np')} {ranks}: 0 to {ranks - 1})")
    if sync != "window":
        raise UserError(f"{names('late')}: the punctual ranks start at an agreed time only "
                        f"with {names.bare('sync')[0]} window (the default with "
                        f"{names.bare('late')[0]})")


@dataclass(frozen=True)
class Plan:
    kernel: Kernel
    ranks: int
    modes: list[str | None]
    sizes: list[int]
    window: int | None  # None: the kernel takes no window
    params: dict[str, str] = field(default_factory=dict)
    sync: str = "barrier"
    validate: bool = False
    placement: Placement = Placement()
    sampling: Sampling = Sampling()
    cold_cache: bool = False  # buffers rotate through twice the last-level cache
    # Every case once per value of one kernel parameter, in the same launches (native
    # --each; None: the parameter not given): (name, values). `commscope check`'s sides.
    each: tuple[str, tuple[str | None, ...]] | None = None
    # `run --info KEY=VALUE`: free-form labels stored with the run (not part of what a case
    # is: two runs that differ only in labels measured the same thing).
    info: dict[str, str] = field(default_factory=dict)
    # How a verdict verb judges this run (its threshold, catalogue, ...): stored with it so
    # that `--runs` and the report judge as the command did (docs/statistics.md).
    verdict: VerdictSpec | None = None
    late: Late | None = None  # --late: a rank made late in some samples (skew.py)

    @property
    def cases(self) -> int:
        return len(self.modes) * len(self.sizes) * (len(self.each[1]) if self.each else 1)

    def measuring(self, todo: dict[str | None, list[int]]) -> Plan:
        """The plan of a launch that measures only these cases, send mode -> sizes (the
        cases whose pilot asks for more launches: launches.py)."""
        sizes = sorted({b for bs in todo.values() for b in bs})
        return replace(self, modes=list(todo), sizes=sizes)

    def native_args(self, step: Step = Step()) -> list[str]:
        args = ["--kernel", self.kernel.name, "--sizes", ",".join(map(str, self.sizes)),
                "--sync", self.sync]
        if self.window is not None:
            args += ["--window", str(self.window)]
        if self.modes != [None]:
            args += ["--modes", ",".join(self.modes)]
        args += step.native_args(self.sampling)
        for key, value in self.params.items():
            args += ["--param", f"{key}={value}"]
        if self.each:
            name, values = self.each
            args += ["--each", f"{name}={','.join(v or '' for v in values)}"]
        if self.validate:
            args.append("--validate")
        if self.cold_cache:
            args.append("--cold-cache")
        if self.late:
            args += self.late.native_args()
        return args

    def settings(self) -> dict:
        """What was asked for, stored with the run: the provenance of every case in it."""
        return {"params": self.params, "sync": self.sync, **self.placement.as_dict(),
                "modes": self.modes, "sizes": self.sizes, **self.sampling.settings(),
                "window": self.window, "validate": self.validate, "cold_cache": self.cold_cache,
                **({"each": {self.each[0]: list(self.each[1])}} if self.each else {}),
                **({"info": self.info} if self.info else {}),
                **({"verdict": self.verdict.as_dict()} if self.verdict else {}),
                **({"late": self.late.settings()} if self.late else {})}


def side(plans: list[Plan], name: str, max_time: float, library=(),
         environment=()) -> list[Plan]:
    """One side of an A/B comparison in alternate launches (`compare --live`): its plans
    labelled side=NAME (Plan.info), sharing max_time seconds alike, launched with these
    library settings beside their own and this environment (a side's change)."""
    share = max_time / len(plans)
    return [replace(p, info={**p.info, "side": name},
                    sampling=replace(p.sampling, max_time=share),
                    placement=replace(p.placement, library=p.placement.library + tuple(library),
                                      environment=p.placement.environment + tuple(environment)))
            for p in plans]


def for_probe(plan: Plan, info: dict[str, str], max_time: float, timeout: float) -> Plan:
    """`plan` as a watch's probe measures it (watch/probe.py): labelled `info` beside its
    own labels, its launches sharing at most max_time seconds of the probe's budget, and a
    case (or a launch's start) without progress for `timeout` seconds hung."""
    return replace(plan, info={**plan.info, **info},
                   sampling=replace(plan.sampling, timeout=timeout,
                                    max_time=min(plan.sampling.max_time, max_time)))


def on_hosts(plan: Plan, hosts: Hosts, params: dict[str, str] | None = None,
             each: tuple[str, Iterable[str | None]] | None = None) -> Plan:
    """`plan` launched on these hosts instead, a rank in every slot (health's rounds, and the
    parts of its full matrix): with `params` set beside its own, and `each` (its values
    checked as plans checks them) for its own."""
    moved = replace(plan, ranks=hosts.total, placement=replace(plan.placement, hosts=hosts),
                    params={**plan.params, **(params or {})})
    if params:  # checked; the plan keeps its order of them (the binary's --param order)
        params_for(moved.kernel, moved.params, moved.ranks)
    return _each(moved, each, "", FLAGS) if each else moved


def parse_ranks(spec, name: str = "--np") -> list[int]:
    """Process counts: a list (2,4,8) or a power-of-two range (2:16), sorted, distinct."""
    counts: set[int] = set()
    for item in (i.strip() for i in str(spec).split(",")):
        m = re.fullmatch(r"(\d+)(?:\s*:\s*(\d+))?", item)
        if not m or int(m.group(1)) < 1:
            raise UserError(f"{name}: '{item}' is not a process count; use a list (2,4,8) "
                            "or a power-of-two range (2:16)")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise UserError(f"{name}: range {item} ends below its start")
        if m.group(2) is None:
            counts.add(lo)
            continue
        n = lo
        while n <= hi:
            counts.add(n)
            n *= 2
    return sorted(counts)


def plans(catalog: Catalog, mpi, *, kernel: str, np="2", sizes=None, modes=None,
          window: int | None = None, params: dict | None = None, sync: str = "barrier",
          validate: bool = False, sampling: Sampling = Sampling(), map_by: str | None = None,
          bind_to: str | None = None, transport: str = "auto", hosts: str | None = None,
          hostfile: str | None = None, ppn: int | None = None, launcher: str = "auto",
          app: bool = False, cold_cache: bool = False, late: Late | None = None,
          each: tuple[str, Iterable[str | None]] | None = None, each_from: str = "",
          case_time_s: float | None = None, library: Iterable[tuple[str, str]] = (),
          info: dict[str, str] | None = None, verdict: VerdictSpec | None = None,
          names: Names = FLAGS) -> list[Plan]:
    """One plan per process count, every one checked before anything is launched.

    np and sizes take a spec ("2:8", "0:4MiB") or a list; modes a spec ("all",
    "standard,ready"); params the kernel's parameters by name, as strings (a name's '-' is
    its '_': --recv-buffers is recv_buffers). `each` (name, values) measures every case
    once per value of that parameter in the same launches, each value checked (_each;
    `each_from` says what gave them, for a refusal). `case_time_s`: the seconds each case
    samples per launch, the plan's max_time following from its cases and launches.
    `library`: the MPI library's settings for the launches (Plan.placement); `info` and
    `verdict` are stored with the run (Plan).
    """
    k = catalog.kernel(kernel) if app else catalog.runnable(kernel)
    if cold_cache and not k.cold_cache:
        takes = ", ".join(n for n, other in catalog.kernels.items() if other.cold_cache)
        raise UserError(f"{names('cold_cache')}: kernel {k.name} keeps its own buffers warm; "
                        f"cold caches are for {takes}")
    window = _window(k, window, names)
    sync, given = split_sync(catalog, k, sync, {n.strip().replace('-', '_'): _param_text(v)
                                                  for n, v in (params or {}).items()},
                             names)
    # A range (the default one, or A:B) holds the sizes in it that the parameters can split;
    # a list names each size, so one that does not fit is refused.
    ranged = sizes is None or ":" in str(sizes)
    sizes, given = _sizes(k, sizes, given, names)
    chosen_modes = modes_for(k, modes, names)
    if str(modes).strip() == "all":  # the modes that have the form the parameters ask for
        limits = [k.params[n].modes for n, v in given.items()
                  if n in k.params and k.params[n].modes and v != "no"]
        chosen_modes = [m for m in chosen_modes if all(m in allowed for allowed in limits)]
    _choice(map_by, MAP_BY, names("map_by"))
    _choice(bind_to, BIND_TO, names("bind_to"))
    _choice(transport, TRANSPORTS, names("transport"))
    placement = Placement(map_by, bind_to, transport, library=tuple(library),
                          **host_fields(hosts, hostfile, ppn, launcher, mpi,
                                        names.bare("hosts", "hostfile", "ppn", "launcher")))
    found = []
    for ranks in _counts(np, names):
        if ranks < k.min_ranks:
            raise UserError(f"{names('np')} {ranks}: {k.name} needs at least {k.min_ranks} ranks")
        if ranks % k.ranks_multiple:
            raise UserError(f"{names('np')} {ranks}: {k.name} needs a multiple of "
                            f"{k.ranks_multiple} ranks (it pairs them); give "
                            f"{names('np')} {_nearest_count(k, ranks, placement)}")
        chosen = params_for(k, given, ranks, names)
        check_needs(catalog, mpi, k, chosen, chosen_modes, cold_cache, names)
        these_sizes = [k.meaning.fixed_bytes(chosen, names.param)] if k.meaning.fixed_bytes \
            else sizes
        if ranged:  # none fitting: refused below, as a list would be
            these_sizes = [s for s in these_sizes if all(
                s % unit == 0 for unit, _ in size_units(k, chosen))] or these_sizes
        check_sizes(k, these_sizes, chosen, names)
        check_placement(mpi, ranks, placement)
        if late:
            check_late(late, k, ranks, sync, names)
        check_window_sync(sync, placement, ranks, names)
        plan = Plan(k, ranks, chosen_modes, these_sizes, window, chosen, sync, validate,
                    placement, sampling, cold_cache, late=late, info=dict(info or {}),
                    verdict=verdict)
        check_memory(catalog, plan, names)
        if each:
            plan = _each(plan, each, each_from, names, catalog, mpi)
        if case_time_s is not None:
            plan = replace(plan, sampling=replace(plan.sampling, max_time=case_time_s * (
                plan.cases * (plan.sampling.launches or AUTO_LAUNCHES[0]))))
        found.append(plan)
    return found


@dataclass(frozen=True)
class _Varied(Names):
    """Names in a refusal of an --each value: the parameter after what gave the values
    (`source`: a guideline), else as the verb names it."""
    source: str = ""

    def param(self, name: str) -> str:
        return f"{self.source}: {name}" if self.source else super().param(name)


def _each(plan: Plan, each, source: str, names: Names, catalog: Catalog | None = None,
          mpi=None) -> Plan:
    """The plan measuring every case once per value of one kernel parameter (native
    --each; a value None: the parameter not given), each value checked before any launch
    as the parameter given alone is (its choices and kind, beside the other parameters;
    with the catalog also what the MPI's build and the send modes allow, and the memory
    it takes); the parameter then leaves the plan's own, which the binary takes once."""
    name, values = each[0], tuple(each[1])
    k = plan.kernel
    said = _Varied(names.where, names.flags, source)
    if name not in k.params:
        raise UserError(f"{source or names.param(name)}: kernel {k.name} has no parameter "
                        f"{name} to vary; it takes {', '.join(k.params) or 'no parameters'}")
    if not values:
        raise UserError(f"{said.param(name)}: give at least one value to measure")
    own = {n: v for n, v in plan.params.items() if n != name}
    for value in values:
        if value is None:
            continue
        chosen = params_for(k, {**own, name: value}, plan.ranks, said)
        check_sizes(k, plan.sizes, chosen, said)
        if catalog is not None:
            check_needs(catalog, mpi, k, chosen, plan.modes, plan.cold_cache, said)
            check_memory(catalog, replace(plan, params=chosen), said)
    return replace(plan, params=own, each=(name, values))


def _nearest_count(k: Kernel, ranks: int, placement: Placement) -> int:
    """The count the kernel takes next to `ranks`: above it where the hosts hold that many
    (launch.room), else below it."""
    step = k.ranks_multiple
    up = -(-ranks // step) * step
    down = max(ranks // step * step, -(-k.min_ranks // step) * step)
    holds = room(placement)
    return up if holds is None or up <= holds or down > holds else down


def check_window_sync(sync: str, placement: Placement, ranks: int, names: Names) -> None:
    """--sync window busy-waits every rank until its start: with more ranks than cores on a
    host a waiting rank keeps another from running, so samples start late (4 ranks on 2
    cores: every sample below 1 MiB), and the case would have no figure."""
    most = most_per_host(placement, ranks)
    if sync == "window" and most is not None and most > cores():
        raise UserError(f"{names('sync')} window: {most} ranks on a host of {cores()} cores "
                        "would start every sample late; use "
                        f"{names.bare('sync')[0]} barrier (the default) or at most {cores()} "
                        "ranks per host")


def _param_text(value) -> str:
    """A parameter's value as the binary takes it; a sweep file's true or false is a
    switch's yes or no."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value).strip()


def _counts(np, names: Names) -> list[int]:
    spec = ",".join(map(str, np)) if isinstance(np, (list, tuple)) else str(np)
    return parse_ranks(spec, names("np"))


def _choice(value, choices: Iterable[str], name: str) -> None:
    if value is not None and value not in choices:
        raise UserError(f"{name} {value}: choose from {', '.join(choices)}")


def _window(k: Kernel, window: int | None, names: Names) -> int | None:
    """The window to pass and record; None for a kernel without one (a window given for
    it, as for every kernel of a sweep, has nothing to set)."""
    if window is None or k.default_window is None:
        return k.default_window
    if window < 1:
        raise UserError(f"{names('window')} {window}: give at least 1 message in flight")
    return window


def _sizes(k: Kernel, spec, given: dict[str, str], names: Names) -> tuple[list[int], dict]:
    """The sizes to measure, and the parameters without a size given as a length."""
    text = None if spec is None else ",".join(map(str, spec)) if isinstance(spec, (list, tuple)) \
        else str(spec)
    if k.meaning.fixed_bytes:
        if text is not None:
            raise UserError(f"{names('sizes')}: {k.name}'s bytes follow from its "
                            f"{names.params}; drop {names.bare('sizes')[0]}")
        return [], given
    length = k.meaning.length
    if length and (text is None or length[0] in given):
        key, unit, default = length
        if text is not None:
            raise UserError(f"{names('sizes')}: {k.name}'s size is its length; give "
                            f"{names.bare('param')[0]} {key}=N or {names.bare('sizes')[0]}, "
                            "not both")
        given = dict(given)
        n = given.pop(key, str(default))
        if not n.isdigit() or int(n) < 1:
            raise UserError(f"{names.param(key)}={n}: give the vector length as a positive "
                            "integer")
        return [unit * int(n)], given
    # An empty list (a script's unset variable) is refused, not taken for the default.
    return parse_sizes(DEFAULT_SIZES if text is None else text, names("sizes")), given
