"""`commscope congestion`: canaries measured alone and beside aggressor traffic in
alternating phases of the same launches; the congestion impact factor of each, for the
median and the p99, with its interval, and the aggressors' own load (docs/under-load.md)."""

from __future__ import annotations

import argparse

from ..judge import congestion
from ..system.errors import UserError
from ..system.kernels import catalog
from ..system.launcher import hosts_from
from ..measure.launches import measure_runs
from ..system.mpi import find_mpi
from ..measure.plan import plans, sampling
from ..system.sizes import parse_sizes
from ..stats.verdict import DEFAULTS, VerdictSpec, parse_threshold
from ..views.congestion import as_json, render
from .common import add_db, add_mpi, print_json, say_oversubscribed, writing_store

DEFAULT_CANARY = "pingpong:8,bw:128KiB,allreduce:8"
LAUNCHES = DEFAULTS["congestion"].launches  # each launch one replicate of every CIF
# Samples per phase and launch, a fixed count: every sample starts with a barrier of all
# the ranks, aggressors too, which crosses the congested path, so a --min-time budget
# (which counts the samples, not the barriers) ran 20 s where it asked for 0.5. Each
# canary takes the p99's P99_SAMPLES (100): fewer give no p99 (30 bw samples gave one
# near their largest, whose interval missed the truth in 14-54% of simulated checks),
# more leave the estimate further from it (bench/congestion.py). A bw canary's sample is
# a window of BW_WINDOW messages (256 KiB of 128 KiB ones: 21 ms at 100 Mbit/s alone, so
# 2 s a phase alone); an idle canary's iteration sleeps 10 ms, so the aggressors alone run
# for half a second at least (a 1 MiB message of 3 pairs on 100 Mbit/s takes 0.25 s).
SAMPLES = {"pingpong": congestion.P99_SAMPLES, "allreduce": congestion.P99_SAMPLES,
           "bw": congestion.P99_SAMPLES, "idle": 50}
BW_WINDOW = 2
THRESHOLD = DEFAULTS["congestion"].threshold


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("congestion", help=summary,
                       description="Measure canaries (pairs or a group of ranks) alone and "
                                   "beside K groups of aggressor ranks, in alternating phases "
                                   "of the same launches: the congestion impact factor of "
                                   "each canary (GPCNeT's: beside over alone), for the median "
                                   "and the p99, and the aggressors' own load. List the "
                                   "hosts in network order, a rack after another: the "
                                   "canaries are the first and the last, the aggressors "
                                   "pair the rest's first half with its second.")
    p.add_argument("--hosts", required=True, metavar="LIST",
                   help="the hosts, in network order (a rack after another)")
    p.add_argument("--canary", default=DEFAULT_CANARY, metavar="KIND:SIZE,...",
                   help="what the canaries measure, each KIND:SIZE with KIND pingpong, bw "
                        "or allreduce (default %(default)s)")
    p.add_argument("--canary-hosts", metavar="A,B",
                   help="the canaries' two hosts (default the first and the last of --hosts)")
    p.add_argument("--aggressors-near", metavar="LIST",
                   help="the aggressor hosts on the canary sender's side (default the first "
                        "half of the hosts that are not the canaries')")
    p.add_argument("--aggressors-far", metavar="LIST",
                   help="and on its receiver's side (default the second half)")
    p.add_argument("--aggressor", choices=congestion.PATTERNS, default="bw",
                   help="the aggressors' traffic: bw (each pair streams), incast (to one), "
                        "alltoall, bcast (from one) (default %(default)s)")
    p.add_argument("--aggressors", type=int, default=1, metavar="K",
                   help="aggressor groups running at once (default %(default)s)")
    p.add_argument("--group", type=int, default=2, metavar="G",
                   help="ranks in each aggressor group (default %(default)s)")
    p.add_argument("--aggressor-bytes", default="256KiB", metavar="SIZE",
                   help="each aggressor message (default %(default)s)")
    p.add_argument("--placebo", action="store_true",
                   help="the same aggressor processes with their traffic kept among the "
                        "first half's hosts, off the canaries' path: tells CPU contention "
                        "from the network's")
    p.add_argument("--launches", default=str(LAUNCHES), metavar="K",
                   help="launches, each one replicate of every phase (default %(default)s)")
    p.add_argument("--threshold", default=THRESHOLD, metavar="T",
                   help="a CIF beyond this, beyond doubt, is congested; within it both "
                        "ways, no slowdown (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print JSON (docs/schemas.md)")
    add_mpi(p)
    add_db(p)
    p.set_defaults(func=run)


def canaries(spec: str) -> list[tuple[str, int]]:
    """KIND:SIZE,... as (kind, bytes), each kind once."""
    found = []
    for item in (i.strip() for i in spec.split(",")):
        kind, colon, size = item.partition(":")
        if kind not in congestion.CANARIES or not colon:
            raise UserError(f"--canary {item}: write KIND:SIZE, KIND one of "
                            f"{', '.join(congestion.CANARIES)} (e.g. bw:128KiB)")
        (nbytes,) = parse_sizes(size, "--canary")
        found.append((kind, nbytes))
    if len({k for k, _ in found}) < len(found):
        raise UserError(f"--canary {spec}: each kind once")
    return found


def roles(args) -> congestion.Layout:
    """The hosts' roles and the launch's rank order; refused before anything runs where
    the roles cannot be filled."""
    hosts = hosts_from(args.hosts, None, None).names
    pair = tuple(args.canary_hosts.split(",")) if args.canary_hosts else (hosts[0], hosts[-1])
    if len(pair) != 2 or pair[0] == pair[1] or not set(pair) <= set(hosts):
        raise UserError(f"--canary-hosts {args.canary_hosts}: two different hosts of --hosts")
    rest = [h for h in hosts if h not in pair]
    near = _listed(args.aggressors_near, "--aggressors-near", hosts) or rest[:len(rest) // 2]
    far = _listed(args.aggressors_far, "--aggressors-far", hosts) or rest[len(rest) // 2:]
    both = set(pair) & set(near + far) or set(near) & set(far)
    if both:
        raise UserError(f"congestion: {sorted(both)[0]} would hold a canary and an aggressor, "
                        "or both sides of the aggressors; give each host one role")
    if not near or not far or (args.placebo and len(near) < 2):
        need = "2 on the near side (the placebo keeps both sides there)" if args.placebo \
            else "1 on each side"
        raise UserError(f"congestion: {len(hosts)} hosts; the canaries take 2 and the "
                        f"aggressors at least {need}: give more in --hosts")
    if args.aggressors < 1 or args.group < 2:
        raise UserError(f"--aggressors {args.aggressors} --group {args.group}: give at least "
                        "1 group of at least 2 ranks")
    if args.aggressor == "bw" and args.group % 2:
        raise UserError(f"--group {args.group}: bw aggressors stream in pairs; give an even "
                        "number")
    return congestion.layout(pair, near, far, args.aggressor, args.aggressors, args.group,
                             args.placebo)


def _listed(text: str | None, flag: str, hosts: tuple[str, ...]) -> list[str]:
    names = [h.strip() for h in text.split(",")] if text else []
    unknown = [h for h in names if h not in hosts]
    if unknown:
        raise UserError(f"{flag}: {unknown[0]} is not one of --hosts")
    return names


def run(args: argparse.Namespace, argv: list[str]) -> int:
    threshold = parse_threshold(args.threshold)
    kinds = canaries(args.canary)
    where = roles(args)
    (aggressor_bytes,) = parse_sizes(args.aggressor_bytes, "--aggressor-bytes")
    if aggressor_bytes < 1:
        raise UserError(f"--aggressor-bytes {args.aggressor_bytes}: give at least 1 byte")
    mpi = find_mpi(args.mpi)
    known = catalog(mpi)
    common = dict(group=str(args.group), aggressor_bytes=str(aggressor_bytes),
                  canaries="2")
    planned = []
    # one run per canary, its phases --each aggressor=none,PATTERN; and the aggressors
    # alone (the canaries idle): their own rate
    for kind, nbytes in [*kinds, ("idle", 8)]:
        phases = ("none", args.aggressor) if kind != "idle" else (args.aggressor,)
        planned += plans(known, mpi, kernel="congestion", np=str(where.ranks),
                         sizes=str(nbytes), params={**common, "canary": kind},
                         each=("aggressor", phases),
                         window=BW_WINDOW, hosts=where.spec,
                         sampling=sampling(iters=SAMPLES[kind], launches=args.launches),
                         verdict=VerdictSpec("congestion", str(threshold.fraction),
                                             aggressors=args.aggressors, placebo=args.placebo))
    store = writing_store(args.db)  # checked before launching
    runs = measure_runs(store, mpi, planned, ["commscope", *argv])
    failed = [o for r in runs for o in r.outcomes if o.status != "complete"]
    if failed or any(r.run_id is None for r in runs):
        raise UserError(f"congestion: {failed[0].message if failed else 'nothing measured'}; "
                        "no factor is given from part of the phases")
    say_oversubscribed(store, [r.run_id for r in runs])
    found = congestion.judge(store, [r.run_id for r in runs], args.aggressor, threshold)
    if args.json:
        print_json("congestion", as_json(found, where, args))
    else:
        print(render(found, where, args, [r.run_id for r in runs], args.db))
    return 0
