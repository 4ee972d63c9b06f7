"""`commscope fit [RUN...]`: Hockney and segmented fits of stored runs, per configuration."""

from __future__ import annotations

import argparse

from ..store import selection
from ..system.errors import UserError
from ..models.groups import MAX_SEGMENTS, fit_runs
from ..models.loggp import fit_loggp
from ..models.maxrate import across_ranks, fit_maxrate
from ..views.message_models import loggp_json, maxrate_json, render_loggp, render_maxrate
from ..views.models import fit_json, render_fits
from .common import add_db, existing_store, print_json


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("fit", help=summary,
                       description="Fit t(n) = alpha + n/B (and piecewise lines at protocol "
                                   "switches) to the per-size medians of stored runs, with "
                                   "bootstrap CIs; see docs/models.md.")
    p.add_argument("runs", nargs="*", metavar="RUNS",
                   help=f"runs to fit: {selection.SYNTAX} (default: of each kernel in the "
                        "file, its latest command's runs: a sweep's, or a `commscope run`'s)")
    p.add_argument("--kernel", metavar="K", help="fit only this kernel's cases")
    p.add_argument("--max-segments", type=int, default=MAX_SEGMENTS, metavar="K",
                   help=f"most segments the BIC may choose (default {MAX_SEGMENTS})")
    p.add_argument("--json", action="store_true",
                   help="print JSON: a fit per group (docs/schemas.md)")
    add_db(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    if args.max_segments < 1:
        raise UserError(f"--max-segments {args.max_segments}: give at least 1")
    store = existing_store(args.db)
    run_ids = selection.runs(args.runs, store, each_kernel=True)
    found = fit_runs(store, run_ids, args.kernel, args.max_segments)
    # loggp's samples are whole iterations of its parts: its model is LogGP, not a line;
    # mbw_mr's, at several rank counts together, give the max-rate model besides its lines
    loggp = [(g.group, fit_loggp(g.group.cases)) for g in found
             if g.group.config["kernel"] == "loggp"]
    found = [g for g in found if g.group.config["kernel"] != "loggp"]
    rates = [(cases, fit_maxrate(cases)) for cases in across_ranks(
        [g.group for g in found if g.group.config["kernel"] == "mbw_mr"])]
    if not loggp and all(g.fit is None for g in found) and len(found) == 1:
        raise UserError(f"run {', '.join(map(str, run_ids))}: {found[0].note}")
    if args.json:
        print_json("fit", {"fits": [fit_json(g) for g in found] + [loggp_json(*m) for m in loggp]
                                    + [maxrate_json(*m) for m in rates]})
    else:
        print("\n\n".join([render_fits(found)] * bool(found) + [render_loggp(*m) for m in loggp]
                           + [render_maxrate(*m) for m in rates]))
    return 0

