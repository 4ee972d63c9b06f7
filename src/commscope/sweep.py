"""Sweep plans: a TOML file of experiments, expanded into launches of stable cases.

A plan's top level holds defaults for every experiment (launches, precision
and max_time, or min_time, or iters; validate, window, sync); each [[experiment]] names a kernel and any of
sizes, np, map_by, bind_to, transport, sync, modes, window and a [params]
table, and where to run it: hosts or hostfile, ppn, launcher (one of each,
as in `commscope run`). List values multiply: every combination of np, map_by, bind_to,
transport, sync and params is one launch, repeated `launches` times so that
variance between launches can be told from variance within one. Modes and
sizes run inside a launch. Every case (launch settings, launch number, mode,
size) has a stable id, the key by which --resume knows what is stored.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError
from .kernels import check_sizes, modes_for, params_for, runnable
from .launcher import BIND_TO, MAP_BY, TRANSPORTS, Placement, check_placement, host_fields
from .plan import (DEFAULT_MAX_TIME, DEFAULT_PRECISION, EPOCHS, SYNCS, Plan, check_memory,
                   check_sample_count, parse_precision, parse_ranks, split_sync)
from .sizes import parse_sizes

TOP_KEYS = {"name", "launches", "precision", "max_time", "min_time", "iters", "timeout",
            "validate", "window", "sync", "experiment"}
EXPERIMENT_KEYS = {"kernel", "sizes", "np", "map_by", "bind_to", "transport", "sync", "modes",
                   "window", "params", "hosts", "hostfile", "ppn", "launcher"}
CHOICES = {"map_by": MAP_BY, "bind_to": BIND_TO, "transport": TRANSPORTS, "sync": SYNCS + EPOCHS}


@dataclass(frozen=True)
class Launch:
    plan: Plan
    number: int  # 1..launches

    def key(self, mode: str | None, nbytes: int) -> str:
        """The case's stable id: a hash of everything that defines it."""
        p = self.plan
        ident = {"kernel": p.kernel.name, "np": p.ranks, **p.placement.as_dict(),
                 "sync": p.sync, "window": p.window, "params": p.params, "launch": self.number,
                 "mode": mode, "bytes": nbytes}
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]

    def keys(self) -> dict[str, tuple[str | None, int]]:
        return {self.key(m, b): (m, b) for m in self.plan.modes for b in self.plan.sizes}


@dataclass(frozen=True)
class SweepPlan:
    name: str
    path: str
    text: str
    hash: str
    launches: list[Launch]

    @property
    def cases(self) -> int:
        return sum(launch.plan.cases for launch in self.launches)


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def _checked_keys(table: dict, allowed: set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise UserError(f"{where}: unknown key '{key}'; use one of {', '.join(sorted(allowed))}")


def _choice(value, key: str, where: str):
    for v in _as_list(value):
        if v is not None and v not in CHOICES[key]:
            raise UserError(f"{where}: {key} = {v!r}; choose from {', '.join(CHOICES[key])}")
    return _as_list(value)


def _experiment(exp: dict, top: dict, where: str, mpi) -> list[Plan]:
    _checked_keys(exp, EXPERIMENT_KEYS, where)
    if "kernel" not in exp:
        raise UserError(f"{where}: no kernel; add kernel = \"pingpong\" (or another kernel)")
    k = runnable(exp["kernel"])
    sizes = parse_sizes(",".join(map(str, _as_list(exp.get("sizes", "0:4MiB")))), f"{where}: sizes")
    counts = parse_ranks(",".join(map(str, _as_list(exp.get("np", 2)))), f"{where}: np")
    modes = modes_for(k, ",".join(_as_list(exp["modes"])) if "modes" in exp else None)
    params = exp.get("params", {})
    if not isinstance(params, dict):
        raise UserError(f"{where}: params must be a table, e.g. params = {{ op = [\"sum\", \"max\"] }}")
    names = list(params)
    window = exp.get("window", top.get("window", k.default_window))
    # One set of hosts per experiment (not a list to multiply): they say where, not what.
    spec = exp.get("hosts")
    hosts = host_fields(",".join(map(str, spec)) if isinstance(spec, list) else spec,
                        exp.get("hostfile"), exp.get("ppn"), exp.get("launcher", "auto"), mpi,
                        ("hosts", "hostfile", "ppn", "launcher"))
    plans = []
    for ranks, map_by, bind_to, transport, sync, *values in itertools.product(
            counts, _choice(exp.get("map_by"), "map_by", where),
            _choice(exp.get("bind_to"), "bind_to", where),
            _choice(exp.get("transport", "auto"), "transport", where),
            _choice(exp.get("sync", top.get("sync", "barrier")), "sync", where),
            *(_as_list(params[n]) for n in names)):
        if ranks < k.min_ranks:
            raise UserError(f"{where}: np {ranks} is below the {k.min_ranks} ranks {k.name} needs")
        sync, given = split_sync(k, sync, dict(zip(names, map(str, values))), f"{where}: sync =")
        chosen = params_for(k, given, ranks, where=f"{where}: params.")
        if k.fixed_bytes:  # its one size follows from its parameters
            if "sizes" in exp:
                raise UserError(f"{where}: {k.name}'s bytes follow from its params; drop sizes")
            sizes = [k.fixed_bytes(chosen, f"{where}: params.")]
        check_sizes(k, sizes, chosen)
        placement = Placement(map_by, bind_to, transport, **hosts)
        check_placement(mpi, ranks, placement)
        plan = Plan(k, ranks, modes, sizes, top.get("iters"), top.get("min_time"), window,
                    bool(top.get("validate", False)), chosen, sync, placement,
                    *_sampling(top, where))
        check_memory(plan)
        plans.append(plan)
    return plans


def _sampling(top: dict, where: str) -> tuple[float, float, float | None]:
    """The plan's precision, max_time and timeout, checked with its iters and min_time."""
    at = where.split(": experiment")[0] + ": "
    if sum(key in top for key in ("precision", "min_time", "iters")) > 1:
        raise UserError(f"{at}give one of precision, min_time or iters")
    max_time = top.get("max_time", DEFAULT_MAX_TIME)
    check_sample_count(top.get("iters"), top.get("min_time"), max_time, at, top.get("timeout"))
    return (parse_precision(top.get("precision", DEFAULT_PRECISION), f"{at}precision"), max_time,
            top.get("timeout"))


def load(path: str, mpi) -> SweepPlan:
    """Read and check a whole plan; nothing runs until every combination is known to be valid."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise UserError(f"{path}: cannot read the plan ({exc.strerror})") from None
    try:
        top = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML ({exc})") from None
    _checked_keys(top, TOP_KEYS, path)
    experiments = top.get("experiment")
    if not experiments or not isinstance(experiments, list):
        raise UserError(f"{path}: no [[experiment]] tables; add one with kernel = \"pingpong\"")
    launches_per = top.get("launches", 1)
    if not isinstance(launches_per, int) or launches_per < 1:
        raise UserError(f"{path}: launches = {launches_per!r}; give a whole number from 1")
    plans = []
    for i, exp in enumerate(experiments, 1):
        where = f"{path}: experiment {i}"
        try:
            plans += _experiment(exp, top, where, mpi)
        except UserError as exc:
            message = str(exc)
            raise UserError(message if message.startswith(path) else f"{where}: {message}") from None
    # Launch k of every setting before launch k+1 of any: drift over the sweep then
    # spreads over all settings instead of landing on the last ones.
    launches = [Launch(p, n) for n in range(1, launches_per + 1) for p in plans]
    digest = hashlib.sha256(text.encode()).hexdigest()
    return SweepPlan(top.get("name", Path(path).stem), str(path), text, digest, launches)


def remaining(launch: Launch, stored: set[str]) -> list[Plan]:
    """The launch's cases not yet stored, as plans (one per send mode with missing sizes)."""
    missing: dict[str | None, list[int]] = {}
    for key, (mode, nbytes) in launch.keys().items():
        if key not in stored:
            missing.setdefault(mode, []).append(nbytes)
    p = launch.plan
    return [dataclasses.replace(p, modes=[mode], sizes=sizes) for mode, sizes in missing.items()]

