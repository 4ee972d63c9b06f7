"""The advection2d table: one row per solve case, time and accuracy side by side."""

from __future__ import annotations

from ..system import units
from .tables import Table

HEADER = ("method", "comm", "n", "grid", "steps", "CFL", "samples", "solve ms", "95% CI ms",
          "compute ms", "communicate ms", "L2 error", "max error")
FOOTER = ("solve: one whole solve from the initial condition, slowest rank; compute and "
          "communicate: its median split (the slowest rank per sample); errors against the "
          "exact solution at the final time, RMS and maximum over all n^2 points")


def _row(s: dict) -> tuple[str, ...]:
    ci = (("disagree" if s["disagree"] else "n<6") if s["ci_low_s"] is None
          else f"{units.ms(s['ci_low_s'])}-{units.ms(s['ci_high_s'])}")
    phases = s.get("phase_median_s") or {}
    grid = s.get("process_grid")
    return (s["params"]["method"], s["params"]["comm"], str(s["points_per_side"]),
            "-" if not grid else f"{grid[0]}x{grid[1]}", s["params"]["steps"],
            units.ratio(s.get("cfl"), 3), str(s["n"]),
            units.ms(s["median_s"]), ci, units.ms(phases.get("compute")),
            units.ms(phases.get("communicate")), units.scientific(s.get("l2_error")),
            units.scientific(s.get("max_error")))


def render(summaries: list[dict]) -> str:
    return Table(HEADER, [_row(s) for s in summaries], align="ll", rule=True,
                 footer=FOOTER).text()
