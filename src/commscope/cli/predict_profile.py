"""`commscope predict --profile RUN`: a profiled program's communication priced on this
cluster's measurements (profiles/price.py), with what-ifs; the predict verb's second
form (cli/predict.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..store import selection
from ..system.errors import UserError
from ..profiles import stored
from ..profiles.price import Prices, commands, price, stored_prices
from ..profiles.whatif import Lines, scaled, under_rules
from ..store.store import Store
from ..views.profile import predict_json, render_prediction
from .common import existing_store, print_json


def prices_of(store: Store, spec: str | None) -> Prices:
    """The measured cases of --on: another results file, runs of this one, or (None)
    every measured run of this one."""
    if spec and (spec.endswith(".db") or Path(spec).is_file()):
        return stored_prices(existing_store(spec))
    if not spec:
        return stored_prices(store)
    ids = selection.parse(spec, store, "--on")
    return stored_prices(store, run_ids=ids, label=f"runs {spec} of {store.path}")


def run(args: argparse.Namespace) -> int:
    if args.kernel or args.source:
        raise UserError("predict --profile: give the profile alone (no KERNEL, no --from); "
                        "the profile says which calls to price")
    if args.scale_bandwidth is not None and args.scale_bandwidth <= 0:
        raise UserError(f"--scale-bandwidth {args.scale_bandwidth}: give a factor > 0, "
                        "e.g. 2 for twice the bandwidth")
    store = existing_store(args.db)
    run_id = selection.parse(args.profile, store, "--profile")
    if len(run_id) != 1:
        raise UserError(f"--profile {args.profile}: give one profile run")
    profile = stored.load(store, run_id[0])
    hosts = stored.hosts_of(store, run_id[0])
    sources = args.on or [None]
    base = prices_of(store, sources[0])
    lines = Lines(base)
    priced = price(profile, base, hosts, lines)
    if all(p.cost_s is None for p in priced):
        todo = commands([p.need for p in priced if p.need is not None], hosts, args.db)
        remedy = (f"; measure them: {'; '.join(f'`{c}`' for c in todo)}, or profile the "
                  "program again with --measure" if todo else
                  "; none of its calls is one commscope measures")
        raise UserError(f"predict --profile {run_id[0]}: no row of the profile can be priced "
                        f"from {base.label}{remedy}")
    what_ifs = []
    for spec in sources[1:]:
        other = prices_of(store, spec)
        what_ifs.append((f"on {other.label}", price(profile, other, hosts, Lines(other))))
    if args.rules:
        path = Path(args.rules).resolve()
        if not path.is_file():
            raise UserError(f"--rules {args.rules}: no such file; give a rules file that "
                            "commscope tune wrote")
        what_ifs.append((f"under {args.rules}", under_rules(
            priced, stored_prices(store, str(path)), args.rules)))
    if args.scale_bandwidth is not None:
        what_ifs.append((f"bandwidth x{args.scale_bandwidth:g}",
                         scaled(priced, lines, args.scale_bandwidth)))
    if args.json:
        print_json("predict-profile", predict_json(run_id[0], profile, base.label, priced,
                                                   what_ifs, hosts, args.db))
    else:
        print(render_prediction(run_id[0], profile, base.label, priced, what_ifs, hosts,
                                args.db))
    return 0

