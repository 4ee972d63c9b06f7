"""`commscope congestion` in the terminal, in JSON and in the report: each canary's
congestion impact factor for the median and the p99 with its interval, its verdict, and
the aggressors' load beside them (congestion.py)."""

from __future__ import annotations

from ..system import units
from ..system.sizes import format_bytes
from .tables import Table


def legend(found) -> str:
    low, high = found.margin
    text = ("CIF: the canary's time beside the aggressors over its time alone (a bandwidth "
            "canary's: its bandwidth alone over beside them), each launch one replicate; "
            "p99: each phase's Harrell-Davis p99; the verdict is the median's: "
            f"{found.no_bottleneck}: the median CIF within {units.ratio(low)}-"
            f"{units.ratio(high)}x by two one-sided tests and the aggressors at their own rate "
            "(docs/under-load.md)")
    short = [c for c in found.canaries if not c.p99_estimable]
    if short:
        text += (f"\nCIF p99 -: not estimable from {min(c.p99_samples for c in short)} "
                 f"samples a phase; the p99 needs {found.p99_min_samples}, or it is the largest "
                 "sample and reads low")
    return text


def p99_cells(c) -> tuple[str, str]:
    if not c.p99_estimable:
        return units.ratio(None), units.ratio(None)
    return units.ratio(c.p99.ratio), c.p99.interval_text()


def table(found, title: str) -> Table:
    rows = [(f"{c.kind} {format_bytes(c.bytes)}", units.ratio(c.median.ratio),
             c.median.interval_text(), *p99_cells(c), c.verdict) for c in found.canaries]
    return Table(("canary", "CIF median", "95% CI", "CIF p99", "95% CI", "verdict"), rows,
                 align="l", rule=True, title=title,
                 footer=load_line(found) + "\n" + legend(found))


def load_line(found) -> str:
    held = found.load
    return (f"aggressors: {units.rate(units.mb_per_s(found.alone_Bps), 1)} MB/s delivered "
            f"alone, {units.rate(units.mb_per_s(found.beside_Bps), 1)} MB/s beside the "
            f"canaries: alone over beside {units.ratio(held.ratio)} ({held.interval_text()}), "
            f"{held.word}")


def _title(where, args) -> str:
    placebo = ", placebo: their traffic kept among " + ", ".join(where.near + where.far) \
        if args.placebo else ""
    return (f"congestion: canaries {where.canaries[0]} -> {where.canaries[1]}, "
            f"{args.aggressors} {args.aggressor} aggressor group(s) of {args.group}"
            f"{placebo}")


def render(found, where, args, run_ids: list[int], db: str) -> str:
    head = f"runs {', '.join(map(str, run_ids))} in {db}, {found.launches} launches"
    return head + "\n" + table(found, _title(where, args)).text()


def as_json(found, where, args) -> dict:
    held = found.load
    load = {"alone_Bps": found.alone_Bps, "beside_Bps": found.beside_Bps, "ratio": held.ratio,
            "ci": list(held.interval) if held.interval else None, "verdict": held.word}
    return {"aggressor": args.aggressor, "aggressors": args.aggressors, "group": args.group,
            "placebo": args.placebo, "hosts": where.spec,
            "canary_hosts": list(where.canaries), "launches": found.launches,
            "margin": list(found.margin), "load": load,
            "canaries": [{"canary": c.kind, "bytes": c.bytes,
                          "cif_median": c.median.ratio,
                          "cif_median_ci": list(c.median.interval) if c.median.interval
                          else None,
                          "cif_p99": c.p99.ratio if c.p99_estimable else None,
                          "cif_p99_ci": list(c.p99.interval) if c.p99.interval else None,
                          "cif_p99_verdict": c.p99.word, "p99_samples": c.p99_samples,
                          "p_value": c.median.p, "load": load,
                          "verdict": c.verdict, "launches": c.launches}
                         for c in found.canaries]}
