"""A late rank's cost (`run --late`, skew.py) in the terminal and the report: per size and
delay, the skew sensitivity S with its interval over launches, and each punctual rank's
propagated delay P_i."""

from __future__ import annotations

from ..system import units
from ..system.sizes import format_bytes
from ..stats.skew import Skew
from .tables import Table

MAX_RANK_COLUMNS = 16  # beyond this many ranks, the most delayed one stands for them
# A delay under this many times the call's own time on time is partly absorbed by the call
# itself: S = 1 - (t on time - t after the last arrival) / d for a call that waits for all.
OWN_TIME_FACTOR = 20
LEGEND = ("S: the mean over punctual ranks of P = (exit with the delay - exit on time) / "
          "delay, the delay as waited; 0: absorbed, 1: everyone waits it, above 1: it grows "
          "(docs/under-load.md)")


def _ci(ci: tuple[float, float] | None) -> str:
    return "-" if ci is None else f"{ci[0]:.3f} to {ci[1]:.3f}"


def table(kernel: str, ranks: int, found: list[tuple[int, list[Skew]]],
          own_s: dict[int, float | None]) -> Table:
    """found: (size, its delays' Skews) per case of one run; own_s: each size's call time
    with every rank on time (the case's median), which marks the delays near it."""
    first = found[0][1][0]
    who = "a rank drawn per sample" if first.late_rank == "random" else f"rank {first.late_rank}"
    how = "waits after its call (placebo)" if first.placebo else "is late"
    per_rank = ranks <= MAX_RANK_COLUMNS
    header = ("size", "delay ms", "waited ms", "S", "95% CI", "most delayed", "samples") + (
        tuple(f"P{r}" for r in range(ranks)) if per_rank else ())
    rows, near = [], []
    for nbytes, skews in found:
        own = own_s.get(nbytes)
        for s in skews:
            rank, p = s.most
            mark = "*" if own and s.waited_s < OWN_TIME_FACTOR * own else ""
            if mark:
                near.append(f"{format_bytes(nbytes)} takes {units.us(own)} us on time")
            rows.append((format_bytes(nbytes), units.ms(s.delay_s), units.ms(s.waited_s),
                         f"{s.sensitivity:.3f}{mark}", _ci(s.sensitivity_ci),
                         "-" if rank is None else f"rank {rank}: {p:.3f}", s.samples)
                        + (tuple(f"{s.propagated[r]:.3f}" if r in s.propagated else "late"
                                 for r in range(ranks)) if per_rank else ()))
    footer = LEGEND + ("" if not near else
                       f"\n* a delay under {OWN_TIME_FACTOR}x the call's own time on time "
                       f"({'; '.join(dict.fromkeys(near))}): the call absorbs part of it, "
                       "so S reads below what a longer delay shows")
    return Table(header, rows, align="ll", rule=True, footer=footer,
                 title=f"skew: {kernel} on {ranks} ranks, {who} {how}, "
                       f"{first.launches} launches")


def render_skews(kernel: str, ranks: int, found: list[tuple[dict, list[Skew]]]) -> str:
    """found: each case's summary and its delays' Skews (results.skews)."""
    return table(kernel, ranks, [(s["bytes"], f) for s, f in found],
                 {s["bytes"]: s["median_s"] for s, _ in found}).text()


def render_absorbing(points: list[dict], run_ids: list[int], db: str) -> str:
    """tune --late: per point and delay the default's S, the algorithm that absorbs the
    late rank best beyond doubt (or none), and its S."""
    rows = []
    for p in points:
        chosen = next((a for a in p["algorithms"] if a["chosen"]), None)
        lowest = min(p["algorithms"], key=lambda a: a["sensitivity"], default=None)
        shown = chosen or lowest
        rows.append((p["kernel"], p["ranks"], format_bytes(p["bytes"]), units.ms(p["delay_s"]),
                     f"{p['default']:.3f}", shown["algorithm"] if shown else "-",
                     f"{shown['sensitivity']:.3f}" if shown else "-",
                     _ci(tuple(shown["less_ci"])) if shown and shown["less_ci"] else "-",
                     chosen["algorithm"] if chosen else "default"))
    return Table(("kernel", "np", "size", "delay ms", "default S", "lowest S", "its S",
                  "default - its (95%)", "choice"), rows, align="l", rule=True,
                 title=f"tune --late: runs {', '.join(map(str, run_ids))} in {db}",
                 footer="choice: the algorithm with the lowest S among those below the "
                        "default's beyond doubt (the launch-paired difference's interval "
                        "above 0, Bonferroni over the algorithms); default: none is").text()
