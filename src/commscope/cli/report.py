"""`commscope report [RUN...] [--sweep N] -o FILE`: one self-contained HTML page of stored runs."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from ..figures.read import quality, summaries
from ..health.health import PATTERNS as HEALTH, health_of
from ..health.preflight import replay
from ..judge import congestion
from ..watch import history as watch
from ..judge.checks import check
from ..judge.guidelines import catalogue
from ..judge.tune import judged
from ..models.groups import kept
from ..profiles import stored
from ..profiles.price import price, stored_prices
from ..profiles.whatif import Lines, scaled
from ..stats.verdict import VerdictSpec
from ..stats.verdict.spec import by_spec
from ..store import selection
from ..watch.points import WATCH
from ..system.errors import UserError, to_run
from .common import add_db, check_output, existing_store

LOADS = ("congestion", "profile")  # runs a section reads whole, not as a kernel's cases


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("report", help=summary,
                       description="Write one HTML file (figures embedded, no network needed) "
                                   "with latency, bandwidth, fits, distributions, per-rank "
                                   "times, scaling, provenance and warnings; see docs/report.md.")
    p.add_argument("runs", nargs="*", metavar="RUNS",
                   help=f"{selection.SYNTAX} (default: every run in the file)")
    p.add_argument("--sweep", type=int, metavar="N", help="add every run of sweep N")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the HTML file to write")
    add_db(p)
    p.set_defaults(func=run)


def chosen_runs(store, given: list[str], sweep: int | None) -> tuple[list[int], str]:
    """The runs to report and how they were chosen, in words for the page."""
    runs: list[int] = []
    for item in given:
        runs += [r for r in selection.parse(item, store, "RUN") if r not in runs]
    if sweep is not None:
        found = store.sweep_runs(sweep)
        if not found:
            raise UserError(f"--sweep {sweep}: no runs of sweep {sweep} in {store.path}; "
                            f"{to_run('results', 'list', db=store.path)} shows the runs")
        runs += [r for r in found if r not in runs]
    if runs:
        return runs, "as given"
    return [r.id for r in store.runs()], "every run in the file"


def write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"-o {path}: cannot write ({exc.strerror}); choose another path") \
            from None


def build(store, run_ids: list[int], chosen: str, first=()) -> str:
    """The report of `run_ids` (views/report): every result it shows worked out here, as
    the verb that made the runs works it out, then drawn; `chosen` says how the runs were
    chosen, `first`: sections to put before everything (a study's own figure)."""
    from ..views.report import page  # matplotlib: imported only by the verbs that draw

    return page(report_data(store, run_ids), store.path, chosen, first)


def report_data(store, run_ids: list[int]):
    """What the report shows of these runs: their cases and figures (views.report.data),
    each check, tune, congestion, health and screen command's result, each watch's
    history, each profile priced, the fits against size and the quality block."""
    from ..views.report import data as report
    from ..views.report.size import fits, size_cases

    data = report.load(store, run_ids, HEALTH)
    checks = [r.id for r in data.runs if r.row.kernel in HEALTH]
    screened = [r for r in checks if store.run(r).settings.get("screen")]
    rows = [r.row for r in data.runs]
    shown = [r.id for r in data.runs if r.id not in checks and r.row.kernel not in LOADS]
    against_size = {c.id for c in size_cases(data)}
    fitted = [c for c in kept(report.shown(data)) if c.id in against_size]
    return dataclasses.replace(
        data, fits=fits(fitted, data.history),
        healths={r: health_of(store, r) for r in checks if r not in screened},
        screens={r: replay(store, r) for r in screened},
        checks=_checks(store, data), tunes=judged(store, [
            (given, [r.id for r in runs]) for given, runs in report.by_verdict(data, "tune")]),
        congestion=_congestion(store, rows), watches=_watches(store, rows),
        profiles=_profiles(store, rows),
        quality=quality(store, [r.id for r in data.runs],
                        {r: summaries(store, [r]) for r in shown}))


def _checks(store, data) -> list:
    """Per check command (its runs share what it stored of how it judges: threshold and
    catalogue), its threshold and its claims, judged as the command judged them
    (checks.check)."""
    out = []
    for given, runs in by_spec(data.runs, "check"):
        cat = catalogue(entries=given.catalogue)
        kernels = {r.row.kernel for r in runs}
        chosen = cat.find(given.guidelines, {g.kernel for g in cat.guidelines} | kernels) \
            if given.guidelines else cat.on(sorted(kernels))
        found = check(store, [r.id for r in runs], chosen, given.limit)
        if found:
            out.append((given.limit, found))
    return out


def _congestion(store, rows) -> list:
    """Each `congestion` command (its runs: a canary, its aggressors alone), by its command
    line: (command, run ids, its verdict parameters, pattern, the judged canaries)."""
    commands: dict[tuple, list[int]] = {}
    for row in rows:
        spec = VerdictSpec.of(row.settings.get("verdict"))
        if spec and spec.verb == "congestion":
            commands.setdefault(tuple(row.command), []).append(row.id)
    out = []
    for command, run_ids in commands.items():
        settings = store.run(run_ids[0]).settings
        pattern = next(v for v in settings["each"]["aggressor"] if v != "none")
        given = VerdictSpec.of(settings["verdict"])
        out.append((command, run_ids, given, pattern,
                    congestion.judge(store, run_ids, pattern, given.limit)))
    return out


def _watches(store, rows) -> list:
    """Each watch the runs belong to, its history judged (watch.history.history)."""
    named = dict.fromkeys((r.settings.get("info") or {}).get(WATCH) for r in rows)
    return [s for w in named if w is not None for s in watch.history(store, w)]


def _profiles(store, rows) -> list:
    """Each profile run priced on every measured run of the file, as `predict --profile`
    prices it: (row, the profile, its priced rows, the what-if of twice the bandwidth, and
    the line said where it recorded no call)."""
    runs = [row for row in rows if row.kernel == stored.KERNEL]
    if not runs:
        return []
    prices = stored_prices(store)
    lines = Lines(prices)
    out = []
    for row in runs:
        p = stored.recorded(store, row.id)
        priced = price(p, prices, stored.hosts_of(store, row.id), lines) if p.rows else []
        out.append((row, p, priced, scaled(priced, lines, 2.0) if priced else [],
                    None if p.rows else stored.no_calls(row.id, row, p)))
    return out


def run(args: argparse.Namespace, argv: list[str]) -> int:
    output = Path(args.output)
    check_output("-o", args.output)
    store = existing_store(args.db)
    run_ids, how = chosen_runs(store, args.runs, args.sweep)
    write(output, build(store, run_ids, how))
    print(f"report of run {', '.join(map(str, run_ids))} written to {output}")
    return 0
