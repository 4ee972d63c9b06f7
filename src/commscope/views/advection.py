"""The advection2d table: one row per solve case, time and accuracy side by side."""

from __future__ import annotations

HEADER = ("method", "comm", "n", "grid", "steps", "CFL", "samples", "solve ms", "95% CI ms",
          "compute ms", "communicate ms", "L2 error", "max error")
FOOTER = ("solve: one whole solve from the initial condition, slowest rank; compute and "
          "communicate: its median split (the slowest rank per sample); errors against the "
          "exact solution at the final time, RMS and maximum over all n^2 points")


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def _error(x: float | None) -> str:
    return "-" if x is None else f"{x:.3e}"


def _row(s: dict) -> tuple[str, ...]:
    ci = "n<6" if s["ci_low_s"] is None else f"{_ms(s['ci_low_s'])}-{_ms(s['ci_high_s'])}"
    phases = s.get("phase_median_s") or {}
    grid = s.get("process_grid")
    return (s["params"]["method"], s["params"]["comm"], str(s["points_per_side"]),
            "-" if not grid else f"{grid[0]}x{grid[1]}", s["params"]["steps"],
            "-" if s.get("cfl") is None else f"{s['cfl']:.3f}", str(s["n"]),
            _ms(s["median_s"]), ci, _ms(phases.get("compute")), _ms(phases.get("communicate")),
            _error(s.get("l2_error")), _error(s.get("max_error")))


def render(summaries: list[dict]) -> str:
    rows = [HEADER] + [_row(s) for s in summaries]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    left = {0, 1}
    lines = ["  ".join(c.ljust(w) if i in left else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines + [FOOTER])
