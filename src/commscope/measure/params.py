"""A kernel's parameters, sizes and memory, checked before any launch: what each value may
be (its kind, its choices, what the MPI's build offers), what every size must be a whole
number of, and what the buffers need on this host; `Names` says how each value was given,
so a refusal names the flag (`--np`) or the sweep file's key (`plan.toml: experiment 2:
np`) to fix. measure/plan.py builds plans from these checks."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

from ..system.build import WITHOUT, left_out
from ..system.errors import UserError
from ..system.kernels import Catalog, Kernel, Param, pair
from ..system.sizes import format_bytes


@dataclass(frozen=True)
class Names:
    """How a plan's values are named in messages: a verb's flags, or a sweep file's keys."""
    where: str = ""  # a sweep file's "plan.toml: experiment 2: "
    flags: bool = True

    def __call__(self, key: str) -> str:
        return f"--{key.replace('_', '-')}" if self.flags else f"{self.where}{key}"

    def param(self, name: str) -> str:
        return f"--{name.replace('_', '-')}" if self.flags else f"{self.where}params.{name}"

    def bare(self, *keys: str) -> tuple[str, ...]:
        """Flags, or a sweep file's keys without where they are: for a remedy inside a
        message, and for messages that the sweep prefixes itself."""
        return tuple(self(k) if self.flags else k for k in keys)

    @property
    def params(self) -> str:
        """What the kernel's parameters are called: flags, or a sweep file's params table."""
        return "parameters" if self.flags else "params"


FLAGS = Names()


def of_kind(k: Kernel, kind: str) -> Param | None:
    """The kernel's parameter of this kind (native/kernel.h), or None."""
    return next((p for p in k.params.values() if p.kind == kind), None)


def split_sync(catalog: Catalog, k: Kernel, sync: str, given: dict[str, str],
               names: Names = FLAGS) -> tuple[str, dict[str, str]]:
    """The timing loop's sync, and the kernel parameters, for a --sync value.

    A kernel with an access epoch (a parameter of kind epoch: rma's) takes it as --sync
    too: that becomes the parameter's value, and the loop starts samples after a barrier.
    """
    name, methods = names("sync"), catalog.sync_methods
    epoch = of_kind(k, "epoch")
    if sync == "window" and epoch:
        # Window sync's busy-wait keeps the target out of MPI, and MPICH 5.0.2 grants a
        # lock only when the target enters MPI: 8 B lock epochs took 1.6 ms, not 2.1 us.
        raise UserError(f"{name} window: the {k.name} target would wait outside MPI, stalling "
                        f"its epochs; use {names.bare('sync')[0]} barrier or one of "
                        f"{', '.join(epoch.choices)}")
    if sync in methods:
        return sync, given
    takers = [o.name for o in catalog.kernels.values()
              if of_kind(o, "epoch") and sync in of_kind(o, "epoch").choices]
    if not epoch or sync not in epoch.choices:
        if not takers:
            raise UserError(f"{name} {sync}: invalid choice: '{sync}'; choose from "
                            f"{', '.join(methods)}, or an access epoch of "
                            f"{_epoch_kernels(catalog)}")
        raise UserError(f"{name} {sync}: an RMA access epoch, which only "
                        f"{', '.join(takers)} takes; use {names.bare('sync')[0]} "
                        f"{' or '.join(methods)} for {k.name}")
    if given.get(epoch.name, sync) != sync:
        raise UserError(f"{name} {sync}: the epoch is already given as "
                        f"{epoch.name}={given[epoch.name]}; give it once")
    return "barrier", {**given, epoch.name: sync}


def _epoch_kernels(catalog: Catalog) -> str:
    return "; ".join(f"{k.name}: {', '.join(of_kind(k, 'epoch').choices)}"
                     for k in catalog.kernels.values() if of_kind(k, "epoch"))


def modes_for(k: Kernel, spec: str | None, names: Names = FLAGS) -> list[str | None]:
    """The send modes to run: the --modes list, checked against what the kernel takes."""
    name = names("modes")
    if not k.modes:
        if spec:
            raise UserError(f"{name}: kernel {k.name} has no send modes; drop "
                            f"{names.bare('modes')[0]}")
        return [None]
    if not spec:
        return [k.modes[0]]
    if spec.strip() == "all":
        return list(k.modes)
    wanted = [m.strip() for m in spec.split(",") if m.strip()]
    if not wanted:
        raise UserError(f"{name}: '{spec}' names no send mode; choose from: {', '.join(k.modes)}")
    for m in wanted:
        if m not in k.modes:
            raise UserError(f"{name}: unknown send mode '{m}' for {k.name}; "
                            f"choose from: {', '.join(k.modes)}, or all")
    return list(dict.fromkeys(wanted))


def params_for(k: Kernel, given: dict[str, str], ranks: int,
               names: Names = FLAGS) -> dict[str, str]:
    """The kernel's parameters with the declared defaults filled in, each value checked.

    Choices first, then what the kernel's size definition checks (halo's tile and
    width), then each parameter's kind (native/kernel.h: rank, count, grid, ...).
    """
    for name in given:
        if name not in k.params:
            takes = ", ".join(k.params) or "no parameters"
            # `--param x=1` and `--x 1` both land here: name the parameter, not a flag
            which = f"parameter {name}" if names.flags else names.param(name)
            raise UserError(f"{which}: kernel {k.name} takes {takes}")
    values = {name: str(given.get(name, p.default)).strip()
              for name, p in k.params.items() if name in given or p.default is not None}
    # A switch given as no is the switch not given: one identity for the same case.
    values = {name: value for name, value in values.items()
              if not (k.params[name].kind == "switch" and value == "no")}
    for name, value in values.items():
        p = k.params[name]
        if p.kind == "algorithm":
            values[name] = algorithm_name(k, p, value, names.param(name))
        elif p.choices and value not in p.choices:
            raise UserError(f"{names.param(name)} {value}: choose one of {', '.join(p.choices)}")
    forced = [n for n in values if k.params[n].kind == "algorithm"]
    other = [n for n in values if n in ("as", "persistent")]
    if forced and other:
        raise UserError(f"{names.param(forced[0])}: forces {k.name}'s own algorithm, which "
                        f"{names.param(other[0])} replaces; drop one of them")
    if k.meaning.fixed_bytes:
        k.meaning.fixed_bytes(values, names.param)
    for name, value in values.items():
        _check_kind(k.params[name], value, ranks, names.param(name))
    return values


def algorithm_name(k: Kernel, p, value: str, name: str) -> str:
    """The library's algorithm `value` (a name, or its number in the library's setting)
    by name: one case identity whichever way it was given."""
    if not p.choices:
        why = f"keeps {p.setting} fixed while a job runs (MPI_T scope constant)" if p.fixed \
            else f"has no {p.setting}"
        raise UserError(f"{name}: this MPI library {why}, so {k.name}'s algorithm cannot be "
                        "forced case by case; run without it, or choose another MPI")
    if value.isdigit() and int(value) in p.values:
        return p.choices[p.values.index(int(value))]
    if value not in p.choices:
        listed = ", ".join(f"{c} ({v})" for c, v in zip(p.choices, p.values))
        raise UserError(f"{name} {value}: {k.name} has no such algorithm in this MPI "
                        f"library ({p.setting}); choose one of {listed}")
    return value


def check_needs(catalog: Catalog, mpi, k: Kernel, params: dict[str, str], modes: list[str],
                cold_cache: bool, names: Names = FLAGS) -> None:
    """Refuse, before launching, what this MPI's build lacks (an MPI-4 feature), a
    parameter with a send mode it does not take, and a parameter that binds the buffers
    to requests made in set-up asked to rotate through cold ones."""
    wanted = [(f"kernel {k.name}", k.needs)] + [
        (names.param(n), k.params[n].needs) for n in params if k.params[n].needs]
    for what, need in wanted:
        feature = catalog.features.get(need) if need else None
        if need and not (feature and feature.present):
            calls = feature.calls if feature else need
            if need in left_out():
                raise UserError(f"{what}: needs {calls}; commscope's build for {mpi.label} "
                                f"left it out ({WITHOUT}={os.environ[WITHOUT]}): unset it")
            raise UserError(f"{what}: needs {calls}, which {mpi.label} lacks (its mpi.h says "
                            f"MPI {catalog.mpi_version}); choose an MPI that has it with "
                            f"{names.bare('mpi')[0]} PREFIX (MPICH 4.0 or later has it)")
    for name in params:
        allowed = k.params[name].modes
        odd = [m for m in modes if allowed and m not in allowed]
        if odd:
            raise UserError(f"{names.param(name)}: send mode {odd[0]} has no such form; "
                            f"give {names.bare('modes')[0]} {','.join(allowed)}")
    bound = [n for n in params if k.params[n].binds_buffers]
    if cold_cache and bound:
        raise UserError(f"{names.param(bound[0])}: its requests are bound to one buffer in "
                        f"set-up, so they cannot rotate through cold ones; drop "
                        f"{names('cold_cache')}")


def vector_blocks(value: str | None) -> tuple[int, int] | None:
    """A layout kind's vector:STRIDE:BLOCK as (stride, block) in elements; None: contiguous."""
    if value in (None, "contiguous"):
        return None
    found = re.fullmatch(r"vector:(\d+):(\d+)", value)
    if not found or not 1 <= int(found[2]) <= int(found[1]) or int(found[1]) > 2**31 - 1:
        raise ValueError(value)
    return int(found[1]), int(found[2])


def _check_kind(p, value: str, ranks: int, name: str) -> None:
    if p.kind == "layout":
        try:
            vector_blocks(value)
        except ValueError:
            raise UserError(f"{name} {value}: give contiguous or vector:STRIDE:BLOCK, in "
                            "elements, with STRIDE >= BLOCK >= 1 (e.g. vector:4:1)") from None
    if p.kind == "rank" and value != "rotate" and (not value.isdigit() or int(value) >= ranks):
        raise UserError(f"{name} {value}: give a rank from 0 to {ranks - 1}, or rotate")
    if p.kind in ("count", "parts") and not (value.isdigit() and int(value) >= 1):
        raise UserError(f"{name} {value}: give a whole number from 1")
    if p.kind == "number" and not _finite(value):
        raise UserError(f"{name} {value}: give a finite number")
    if p.kind == "extent" and pair(value) is None:
        raise UserError(f"{name} {value}: give NXxNY {p.help}, e.g. {p.default}")
    if p.kind == "grid" and value != "auto":
        grid = pair(value)
        if grid is None:
            raise UserError(f"{name} {value}: give PXxPY (e.g. 2x2) or auto")
        if grid[0] * grid[1] != ranks:
            raise UserError(f"{name} {value}: a {value} process grid is {grid[0] * grid[1]} "
                            f"ranks, but the run has {ranks}; give PXxPY with PX*PY = {ranks}, "
                            "or auto")


def _finite(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def size_units(k: Kernel, params: dict[str, str]) -> list[tuple[int, str]]:
    """What every size must be a whole number of under the chosen parameters: (bytes,
    what they are), e.g. (8, "double (8 B) elements")."""
    units = []
    for name, value in params.items():
        element = (k.params[name].elements or {}).get(value)
        if element is not None:
            what = value if element.type == value else f"{value}'s {element.type}"
            units.append((element.bytes, f"{what} ({element.bytes} B) elements"))
        if k.params[name].kind == "parts":
            units.append((int(value), f"{int(value)} equal {name}"))
    chosen = _value_of_kind(k, params, "layout")
    vector = vector_blocks(chosen)
    if vector:  # after the elements: its blocks are counted in them
        unit = vector[1] * element_bytes(k, params)
        units.append((unit, f"{chosen} blocks ({unit} B)"))
    return units


def check_sizes(k: Kernel, sizes: list[int], params: dict[str, str],
                names: Names = FLAGS) -> None:
    """Every size a whole number of the units the chosen parameters ask for."""
    for unit, what in size_units(k, params):
        odd = [s for s in sizes if s % unit]
        if odd:
            raise UserError(f"{names('sizes')}: {odd[0]} B is not a whole number of {what}; "
                            f"give multiples of {unit}")


def _value_of_kind(k: Kernel, params: dict[str, str], kind: str) -> str | None:
    p = of_kind(k, kind)
    return params.get(p.name) if p else None


def element_bytes(k: Kernel, params: dict[str, str]) -> int:
    """Bytes of the element a chosen value names (double: 8; none chosen: 1, bytes): what
    a vector layout's blocks count."""
    for name, value in params.items():
        element = (k.params[name].elements or {}).get(value)
        if element is not None:
            return element.bytes
    return 1


def extent(k: Kernel, nbytes: int, params: dict[str, str]) -> int:
    """The bytes a message of nbytes payload spans in memory under its vector layout."""
    vector = vector_blocks(_value_of_kind(k, params, "layout"))
    if not vector or not nbytes:
        return nbytes
    unit = element_bytes(k, params)
    blocks = nbytes // (vector[1] * unit)
    return ((blocks - 1) * vector[0] + vector[1]) * unit


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


def check_memory(catalog: Catalog, plan, names: Names = FLAGS) -> None:
    """Refuse a plan's (plan.Plan's) sizes whose buffers cannot fit on this host, before
    launching anything."""
    largest = max(plan.sizes)
    window = catalog.window_used(plan.kernel, plan.window, largest)
    per_rank = plan.kernel.meaning.memory(extent(plan.kernel, largest, plan.params), window,
                                          plan.ranks, plan.params)
    need = per_rank * (2 if plan.kernel.two_ranks else plan.ranks)
    have = available_memory()
    if have is not None and need > have:
        raise UserError(
            f"{names('sizes')}: {format_bytes(largest)} messages need {per_rank / 2**30:.1f} GiB "
            f"per rank for {plan.kernel.name}, {need / 2**30:.1f} GiB on this host for "
            f"{plan.ranks} ranks, but only {have / 2**30:.1f} GiB is available; "
            "lower the largest size")
