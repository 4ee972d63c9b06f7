"""A profile (`commscope profile`, profiles/) in the terminal and as JSON: per (call,
communicator size, size bucket, peer), the calls and the time in them over all ranks,
the most time first."""

from __future__ import annotations

from ..store import names
from ..system import units
from ..profiles import Profile, Row
from ..profiles.price import (HIGH_EFFICIENCY, LOW_EFFICIENCY, OVERPRICED, UNEXPLAINED, Priced,
                              commands, total)
from ..system.sizes import format_bytes
from .tables import Table


def bucket_label(nbytes: int) -> str:
    """A power-of-two bucket as the sizes it holds: 0, 1 KiB-2 KiB."""
    return "0" if nbytes == 0 else f"{format_bytes(nbytes)}-{format_bytes(2 * nbytes)}"


def row_label(r: Row) -> tuple[str, str, str, str]:
    return (r.call, str(r.comm_size) if r.comm_size else "-", bucket_label(r.bytes),
            r.peer or "")


def render_profile(run_id: int, p: Profile, problem: str | None = None) -> str:
    wall = max(p.wall_s, default=0.0)
    mpi = p.mpi_s()
    head = (f"run {run_id}: {' '.join(p.program) or p.source.get('file', '')}, "
            f"{names.ranks(p.ranks)}, wall {units.seconds(wall)} s (the slowest rank), in MPI "
            f"{units.seconds(mpi)} s a rank ({units.percent(mpi / wall if wall else None)})")
    rows = [(*row_label(r), r.count, units.ms(r.time_s), units.us(r.time_s / r.count),
             units.percent(r.time_s / (mpi * p.ranks) if mpi else None))
            for r in p.summed()]
    table = Table(("call", "comm", "size", "peer", "calls", "ms", "µs a call", "of MPI"),
                  rows, align="llll", rule=True, title=head,
                  footer="calls and ms: over all ranks; a nonblocking call's time includes "
                         "its share of the Wait or Test that completed it")
    return table.text() + (f"\ncommscope: warning: {problem}" if problem else "")


def profile_json(run_id: int, p: Profile, hosts=()) -> dict:
    by_key: dict[tuple, dict[int, Row]] = {}
    for r in p.rows:
        by_key.setdefault(r.key, {})[r.rank] = r
    rows = []
    for r in p.summed():
        ranks = by_key[r.key]
        rows.append({"call": r.call, "comm_size": r.comm_size, "bytes": r.bytes,
                     "peer": r.peer, "count": r.count, "time_s": r.time_s,
                     "mean_bytes": r.mean_bytes if r.bytes_sum is not None else None,
                     "overlap_s": r.overlap_s,
                     "per_rank": {"count": [ranks[k].count if k in ranks else 0
                                            for k in range(p.ranks)],
                                  "time_s": [ranks[k].time_s if k in ranks else 0.0
                                             for k in range(p.ranks)]}})
    return {"run": run_id, "program": list(p.program), "source": p.source, "ranks": p.ranks,
            "wall_s": list(p.wall_s), "hosts": list(hosts), "mpi_s": p.mpi_s(), "rows": rows}


FLAG = {UNEXPLAINED: " !", OVERPRICED: " ^"}


def _ci(ci, scale=units.ms) -> str:
    return "-" if ci is None else f"{scale(ci[0])} to {scale(ci[1])}"


def _per_rank(p: Profile, seconds: float | None) -> str:
    return units.seconds(None if seconds is None else seconds / p.ranks)


def prediction_table(done: list[Priced], predicted: float) -> Table:
    """The dominance table: the priced rows, the most predicted time first; `predicted`
    their total."""
    rows = []
    for x in sorted(done, key=lambda x: -x.predicted_s):
        e = x.efficiency
        eff = "-" if e is None else f"{e.ratio:.2f}" + FLAG.get(e.word, "")
        rows.append((*row_label(x.row), x.row.count, units.ms(x.row.time_s),
                     units.ms(x.predicted_s), _ci(x.predicted_ci_s),
                     units.percent(x.predicted_s / predicted if predicted else None), eff,
                     x.source + (f", less {units.us_short(x.overlap_s)} µs overlap a call"
                                 if x.overlap_s else "")))
    return Table(("call", "comm", "size", "peer", "calls", "profiled ms", "predicted ms",
                  "95% CI", "share", "efficiency", "source"), rows, align="llll", rule=True,
                 footer="ms: over all ranks; efficiency: predicted / profiled (! its interval "
                        f"below {LOW_EFFICIENCY}: time the network does not explain, such as "
                        f"waits for late ranks or imbalance; ^ above {HIGH_EFFICIENCY:g}: "
                        "priced beyond what the program spent, a price to check: its case's "
                        "launches, `commscope results show RUN --wide`)")


def render_prediction(run_id: int, p: Profile, on: str, priced: list[Priced], what_ifs,
                      hosts=(), db=None) -> str:
    """Unpriced rows first (with the one command that prices each), then the dominance
    table, the total against the profile, and each what-if's total."""
    lines = [f"profile {run_id}: {' '.join(p.program) or p.source.get('file', '')}, "
             f"{names.ranks(p.ranks)}; priced on {on}"]
    unpriced = [x for x in priced if x.cost_s is None]
    if unpriced:
        share = sum(x.row.time_s for x in unpriced) / sum(x.row.time_s for x in priced)
        lines.append(f"not priced: {len(unpriced)} rows, {units.percent(share)} of the "
                     "profiled MPI time")
        for x in unpriced:
            lines.append(f"  {' '.join(row_label(x.row)).strip()}: {x.why_not}")
        todo = commands([x.need for x in unpriced if x.need], hosts, db)
        if todo:
            lines.append("  to price them: " + "; ".join(todo) + "  (or commscope profile "
                         "--measure with the program)")
    done = [x for x in priced if x.cost_s is not None]
    predicted, ci = total(done)
    lines.append(prediction_table(done, predicted).text())
    profiled = sum(x.row.time_s for x in done)
    lines.append(f"predicted communication {_per_rank(p, predicted)} s a rank "
                 f"(95% CI {_ci(ci and (ci[0] / p.ranks, ci[1] / p.ranks), units.seconds)}), "
                 f"profiled {_per_rank(p, profiled)} s in the same rows: "
                 f"{units.ratio(predicted / profiled if profiled else None)}x")
    lines += [what_if_line(p, label, other, predicted) for label, other in what_ifs]
    return "\n".join(lines)


def what_if_line(p: Profile, label: str, other: list[Priced], now: float) -> str:
    then = total([x for x in other if x.cost_s is not None])[0]
    left = [x for x in other if x.cost_s is None and x.row.time_s]
    return (f"what if {label}: {_per_rank(p, then)} s a rank "
            f"({units.ratio(then / now if now else None)}x of now)"
            + (f"; {len(left)} rows not priced there ({left[0].why_not})" if left else ""))


def _priced_json(x: Priced, predicted_total: float) -> dict:
    e = x.efficiency
    return {"call": x.row.call, "comm_size": x.row.comm_size, "bytes": x.row.bytes,
            "peer": x.row.peer, "count": x.row.count, "profiled_s": x.row.time_s,
            "predicted_s": x.predicted_s, "predicted_ci_s": _pair(x.predicted_ci_s),
            "source": x.source, "evidence": x.evidence, "overlap_s": x.overlap_s,
            "efficiency": None if e is None else e.ratio,
            "efficiency_ci": None if e is None else _pair(e.interval),
            "unexplained": e is not None and e.word == UNEXPLAINED,
            "overpriced": e is not None and e.word == OVERPRICED,
            "share": x.predicted_s / predicted_total if predicted_total else None}


def _pair(ci):
    return None if ci is None else list(ci)


def predict_json(run_id: int, p: Profile, on: str, priced: list[Priced], what_ifs,
                 hosts=(), db=None) -> dict:
    done = [x for x in priced if x.cost_s is not None]
    predicted, ci = total(done)
    return {
        "profile": run_id, "priced_on": on, "ranks": p.ranks,
        "rows": [_priced_json(x, predicted) for x in sorted(done, key=lambda x: -x.predicted_s)],
        "unpriced": [{"call": x.row.call, "comm_size": x.row.comm_size, "bytes": x.row.bytes,
                      "peer": x.row.peer, "count": x.row.count, "profiled_s": x.row.time_s,
                      "why": x.why_not,
                      "command": commands([x.need], hosts, db)[0] if x.need else None}
                     for x in priced if x.cost_s is None],
        "predicted_s": predicted, "predicted_ci_s": _pair(ci),
        "profiled_s": sum(x.row.time_s for x in done),
        "what_if": [{"label": label, "predicted_s": total(
            [x for x in other if x.cost_s is not None])[0],
            "unpriced": sum(1 for x in other if x.cost_s is None)} for label, other in what_ifs]}
