"""Sweep plans: a TOML file of experiments, expanded into points of stable cases.

A plan's top level holds defaults for every experiment (launches, precision
and max_time, or min_time, or iters; validate, cold_cache, window, sync); each
[[experiment]] names a kernel and any of
sizes, np, map_by, bind_to, transport, sync, modes, window and a [params]
table, and where to run it: hosts or hostfile, ppn, launcher (one of each,
as in `commscope run`). List values multiply: every combination of np, map_by, bind_to,
transport, sync and params is one point, a run measured in `launches` launches
(default auto, as `commscope run`: launches.py), so that variance between launches can
be told from variance within one. Modes and sizes run inside a launch. Every case
(point settings, launch number, mode, size) has a stable id, the key by which
--resume knows what is stored.
"""

from __future__ import annotations

import hashlib
import itertools
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..store.cases import Planned, identity, short_hash
from ..system.errors import UserError
from ..system.kernels import Catalog, catalog
from .params import Names
from .plan import Plan, plans, sampling

TOP_KEYS = {"name", "launches", "precision", "max_time", "min_time", "iters", "timeout",
            "validate", "cold_cache", "window", "sync", "experiment"}
EXPERIMENT_KEYS = {"kernel", "sizes", "np", "map_by", "bind_to", "transport", "sync", "modes",
                   "window", "params", "hosts", "hostfile", "ppn", "launcher"}
# What a sweep's case key says: the planned case (cases.identity) with its launch number.
KEY = {"validated": False, "oversubscribed": False, "window": "asked", "launch": True}


def case_key(p: Plan, number: int, mode: str | None, nbytes: int) -> str:
    """A case's stable id: a hash of everything that defines it, with its launch number."""
    planned = Planned(p.kernel.name, mode, nbytes, p.ranks, p.settings(), number, p.params,
                      p.window, sample=p.kernel.sample)
    return short_hash(identity(planned, **KEY))


@dataclass(frozen=True)
class SweepPlan:
    name: str
    path: str
    text: str
    hash: str
    points: list[Plan]  # each measured as one run of one or more launches

    @property
    def cases(self) -> int:
        return sum(p.cases for p in self.points)

    def key(self, index: int, number: int, mode: str | None, nbytes: int) -> str:
        return case_key(self.points[index], number, mode, nbytes)


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def _checked_keys(table: dict, allowed: set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise UserError(f"{where}: unknown key '{key}'; "
                            f"use one of {', '.join(sorted(allowed))}")


def _experiment(known: Catalog, exp: dict, top: dict, names: Names, mpi,
                how_many, hosts: str | None = None) -> list[Plan]:
    where = names.where.rstrip(": ")
    _checked_keys(exp, EXPERIMENT_KEYS, where)
    if "kernel" not in exp:
        raise UserError(f"{where}: no kernel; add kernel = \"pingpong\" (or another kernel)")
    params = exp.get("params", {})
    if not isinstance(params, dict):
        raise UserError(f"{where}: params must be a table, "
                        "e.g. params = { op = [\"sum\", \"max\"] }")
    spec = exp.get("hosts", None if "hostfile" in exp else hosts)
    fixed = {"kernel": exp["kernel"],
             "sizes": _as_list(exp["sizes"]) if "sizes" in exp else None,
             "modes": ",".join(_as_list(exp["modes"])) if "modes" in exp else None,
             "window": exp.get("window", top.get("window")),
             "validate": bool(top.get("validate", False)),
             "cold_cache": bool(top.get("cold_cache", False)), "sampling": how_many,
             # One set of hosts per experiment (not a list to multiply): they say where.
             "hosts": ",".join(map(str, spec)) if isinstance(spec, list) else spec,
             "hostfile": exp.get("hostfile"), "ppn": exp.get("ppn"),
             "launcher": exp.get("launcher", "auto")}
    varied = {"np": _as_list(exp.get("np", 2)), "map_by": _as_list(exp.get("map_by")),
              "bind_to": _as_list(exp.get("bind_to")),
              "transport": _as_list(exp.get("transport", "auto")),
              "sync": _as_list(exp.get("sync", top.get("sync", "barrier"))),
              **{f"params.{n}": _as_list(v) for n, v in params.items()}}
    found = []
    for values in itertools.product(*varied.values()):
        chosen = dict(zip(varied, values))
        given = {k[len("params."):]: chosen.pop(k) for k in list(chosen)
                 if k.startswith("params.")}
        found += plans(known, mpi, **fixed, **chosen, params=given, names=names)
    return found


def load(path: str, mpi, hosts: str | None = None) -> SweepPlan:
    """Read and check a whole plan; nothing runs until every combination is known to be valid.
    `hosts`: where the experiments that name no hosts nor hostfile run (`watch --hosts`)."""
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
    how_many = sampling(iters=top.get("iters"), min_time=top.get("min_time"),
                        precision=top.get("precision"), max_time=top.get("max_time"),
                        timeout=top.get("timeout"), launches=top.get("launches"),
                        names=Names(f"{path}: ", flags=False))
    known = catalog(mpi)
    found = []
    for i, exp in enumerate(experiments, 1):
        where = f"{path}: experiment {i}"
        try:
            found += _experiment(known, exp, top, Names(f"{where}: ", flags=False), mpi,
                                 how_many, hosts)
        except UserError as exc:
            message = str(exc)
            raise UserError(message if message.startswith(path)
                            else f"{where}: {message}") from None
    digest = hashlib.sha256(text.encode()).hexdigest()
    return SweepPlan(top.get("name", Path(path).stem), str(path), text, digest, found)
