"""The advection2d application's problem: checked before launching; the native side checks again.

c_t + u c_x + v c_y = 0 on [0, 2pi)^2, n x n grid points x_i = i 2pi/n, solved by
Beam-Warming dimension by dimension (docs/app-advection2d.md). Everything here is
pure: no MPI.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from ..store.cases import Case
from ..system.errors import UserError

INITS = ("sin", "gauss")
METHODS = ("rma", "p2p")
WIDTH = 2  # Beam-Warming reads two points upwind: the ghost width, the smallest tile side
# What the native report adds to a case record (native/kernels/advection2d.c).
REPORTED = ("l2_error", "max_error", "process_grid", "points_per_rank", "cfl", "final_time")


def spacing(n: int) -> float:
    return 2 * math.pi / n


def cfl_number(n: int, u: float, v: float, dt: float) -> float:
    """sigma = |u| dt/dx + |v| dt/dy, in the order the native check computes it."""
    dx = spacing(n)
    return (abs(u) / dx + abs(v) / dx) * dt


def largest_stable_dt(n: int, u: float, v: float) -> float:
    """dt at sigma = 1; infinite when nothing moves."""
    rate = abs(u) / spacing(n) + abs(v) / spacing(n)
    return math.inf if rate == 0 else 1 / rate


def default_dt(n: int, u: float, v: float) -> float:
    """CFL number 0.5; with u = v = 0 every dt is stable: one grid spacing."""
    stable = largest_stable_dt(n, u, v)
    return spacing(n) if math.isinf(stable) else 0.5 * stable


def check_points(n: int) -> None:
    if n < 1:
        raise UserError(f"--n {n}: give a positive number of grid points per side")


def default_grid(ranks: int) -> tuple[int, int]:
    """The most nearly square PX x PY = ranks with PX >= PY, as MPI_Dims_create makes it."""
    py = max(d for d in range(1, math.isqrt(ranks) + 1) if ranks % d == 0)
    return ranks // py, py


def parse_grid(text: str | None, ranks: int) -> tuple[int, int]:
    if text is None:
        return default_grid(ranks)
    m = re.fullmatch(r"([1-9]\d*)x([1-9]\d*)", text.strip())
    if not m:
        raise UserError(f"--grid {text}: give PXxPY, e.g. 2x2")
    px, py = int(m.group(1)), int(m.group(2))
    if px * py != ranks:
        raise UserError(f"--grid {text}: {px}x{py} is {px * py} ranks, but --np is {ranks}; "
                        f"give PXxPY with PX*PY = {ranks}")
    return px, py


@dataclass(frozen=True)
class Problem:
    n: int
    u: float
    v: float
    dt: float
    steps: int
    init: str
    method: str
    comm: bool
    grid: tuple[int, int]
    field: str | None = None

    @property
    def cfl(self) -> float:
        return cfl_number(self.n, self.u, self.v, self.dt)

    def params(self) -> dict[str, str]:
        """The native kernel's --param values; repr keeps every float exact."""
        params = {"u": repr(self.u), "v": repr(self.v), "dt": repr(self.dt),
                  "steps": str(self.steps), "init": self.init, "method": self.method,
                  "comm": "on" if self.comm else "off", "grid": "%dx%d" % self.grid}
        if self.field:
            params["field"] = self.field
        return params


def check(p: Problem) -> None:
    """Refuse, in one line naming the flag, what the solver cannot do."""
    check_points(p.n)
    for flag, value in (("--u", p.u), ("--v", p.v), ("--dt", p.dt)):
        if not math.isfinite(value):
            raise UserError(f"{flag} {value}: give a finite number")
    if not p.dt > 0:
        raise UserError(f"--dt {p.dt}: give a positive time step")
    if p.steps < 1:
        raise UserError(f"--steps {p.steps}: give at least 1 time step")
    if p.init not in INITS:
        raise UserError(f"--init {p.init}: choose one of {', '.join(INITS)}")
    px, py = p.grid
    if p.n % px or p.n % py:
        raise UserError(f"--n {p.n}: not divisible by the {px}x{py} process grid; tiles must "
                        f"be equal, so give n a multiple of {math.lcm(px, py)} or another --grid")
    if p.n // px < WIDTH or p.n // py < WIDTH:
        raise UserError(f"--n {p.n}: a {px}x{py} process grid leaves fewer than {WIDTH} points "
                        f"per rank along a side; give n >= {WIDTH * max(px, py)}")
    if p.cfl > 1:
        raise UserError(f"--dt {p.dt}: CFL number {p.cfl:.4g} > 1 is unstable; the largest "
                        f"stable dt is {largest_stable_dt(p.n, p.u, p.v):.6g}")
    if p.field and not Path(p.field).parent.is_dir():
        raise UserError(f"--field {p.field}: directory {Path(p.field).parent} does not exist")


def field_bytes(n: int) -> int:
    """The case's size: the global field of n^2 float64 values."""
    return 8 * n * n


def app_summary(case: Case, summary) -> dict:
    """A case summary's JSON item with the solve's figures: errors, grid, CFL number."""
    out = dict(summary.as_dict(), points_per_side=math.isqrt(case.bytes // 8))
    out.update({key: case.extra.get(key) for key in REPORTED})
    return out
