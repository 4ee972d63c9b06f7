"""`commscope health`: every pair of nodes measured in each of K launches (a round-robin
tournament, or mpiGraph's shift), the bad nodes, links and steps named with launch-level
intervals, and a drain list (docs/health.md)."""

from __future__ import annotations

import argparse
import re

from ..stats.verdict import DEFAULTS, VerdictSpec, parse_threshold
from ..system.errors import UserError
from ..health.health import PATTERNS, health_of
from ..stats.verdict.health import tournament_rounds
from ..system.kernels import catalog
from ..system.launcher import LAUNCHERS, hosts_from, resolve_launcher, slurm
from ..system.launcher.job import context_of
from ..system.launcher.placement import one_rank_each
from ..measure.launches import measure_runs
from ..system.mpi import find_mpi
from ..measure.plan import plans, sampling
from ..health.preflight import check_hosts, screen_hosts
from ..health.topology import read_groups, slurm_groups
from ..watch.history import measured_against
from ..views.health import as_json, expected_json, junit, prometheus, render, testcases
from ..views.screen import (junit as screen_junit, render as render_screen, screen_json,
                            testcases as screen_testcases)
from .common import (add_db, add_expect, add_fail_on, add_mpi, check_output, emit, expect_from,
                     say_oversubscribed, writing_store)

DEFAULT_SIZES = "8,1MiB"  # latency at the smallest, bandwidth at the largest
# Launches: enough to name a node at 0.75 of the bandwidth in at least 90% of checks of
# 8 nodes (5% pair noise, 3% node-by-launch noise; bench/verdicts.py health --nodes 8
# --launches 3,5,8,10): 3 named it in 39%, 5 in 68%, 8 in 88.5-91.5% (four runs), 10 in
# 97.1% (1000 checks).
LAUNCHES = DEFAULTS["health"].launches
# Samples per case: each pair is one case's ranks, and the launches are the replicates.
SAMPLES = 3
REACH_TIMEOUT_S = 120.0
MIN_SCREEN = 3  # nodes: with two, a slow pair cannot be told from a slow node
LAUNCHER_TAG = re.compile(r"\[[\w.-]+@[\w.-]+\]")


def add_parser(sub, summary: str) -> None:
    p = sub.add_parser("health", help=summary,
                       description="Measure every pair of nodes (one rank per node unless "
                                   "--ppn) in each of K launches, fit each node's and link's "
                                   "share of the bandwidth, and name the nodes, links and "
                                   "distances slower than the rest beyond doubt. Exit 1 when "
                                   "any is named; else 3 when a node or link is neither "
                                   "named nor cleared. A pair that cannot connect, or a "
                                   "node that answers none, is traced and named, and the "
                                   "rest judged without it.")
    p.add_argument("--pattern", choices=PATTERNS, default="pairs",
                   help="pairs: a round-robin tournament, N/2 disjoint pairs at once; shift: "
                        "every node to the one d after it at once, d = 1..N-1, the fabric "
                        "under full load (default pairs)")
    p.add_argument("--screen", action="store_true",
                   help="judge nodes in rounds of random pairs, then the undecided with "
                        "cleared nodes, until every node is named or cleared: rounds grow "
                        "as log N, where the full matrix takes N-1 a launch; it judges "
                        "nodes, not single links (docs/health.md)")
    p.add_argument("--groups", metavar="FILE",
                   help="with --screen: the nodes under each leaf switch, Slurm's "
                        "topology.conf or `NAME: host,host` lines (inside an allocation, "
                        "default: `scontrol show topology`); a group whose pairs with "
                        "another are slow beyond its nodes is named as a group")
    p.add_argument("--deadline", type=float, metavar="SECONDS",
                   help="a launch that shows no progress this long is traced to the pair or "
                        "node behind it (--screen's default: 5 times the slowest round so "
                        "far, at least 10 s, 60 s before one has finished; the full matrix's: "
                        "its cases' timeouts, and the start-up check's 120 s)")
    p.add_argument("--transient", choices=("fail", "ok"), default=None,
                   help="with --screen: a launch that stalled, then ran clean (stalled "
                        "(transient)), fails the gate like any fault (fail, the default), or "
                        "is reported and passes (ok)")
    p.add_argument("--sizes", default=DEFAULT_SIZES, metavar="SPEC",
                   help="latency at the smallest, bandwidth at the largest (default "
                        "%(default)s)")
    p.add_argument("--window", type=int, metavar="W",
                   help="messages in flight each way per iteration (default the kernel's, 8)")
    p.add_argument("--hosts", metavar="LIST", help="the nodes to check: a,b,c (a:2 gives a "
                                                   "host's slots, which --ppn must not exceed)")
    p.add_argument("--hostfile", metavar="FILE",
                   help="the nodes one per line: `name slots=N` or `name:N`")
    p.add_argument("--ppn", type=int, default=1, metavar="N",
                   help="ranks per node; rank l of one node talks to rank l of the other "
                        "(default 1)")
    p.add_argument("--launcher", choices=LAUNCHERS, default="auto",
                   help="srun inside a Slurm allocation (one task per node), else the "
                        "MPI's own (default auto)")
    p.add_argument("--launches", default=str(LAUNCHES), metavar="K|auto",
                   help="launches, each measuring the whole matrix (default %(default)s)")
    p.add_argument("--threshold", default=DEFAULTS["health"].threshold, metavar="T",
                   help="how far below the bandwidth the model predicts, beyond doubt, a "
                        "node, link or distance must be to be named (default %(default)s)")
    p.add_argument("--json", action="store_true", help="the matrices and suspects as JSON")
    p.add_argument("--junit", metavar="FILE", help="also write one testcase per node and link")
    add_fail_on(p)
    p.add_argument("--prom", metavar="FILE",
                   help="also write Prometheus text format for node_exporter's textfile "
                        "collector (written whole, then renamed into place)")
    add_expect(p)
    add_mpi(p)
    add_db(p)
    p.set_defaults(func=run)


def _nodes(args, mpi) -> tuple[str | None, int]:
    """The --hosts spec of ppn slots each (None: Slurm's nodes) and the node count; a host
    with fewer slots than --ppn, or a single host, refused."""
    launcher = resolve_launcher(args.launcher, mpi)
    if args.ppn < 1:
        raise UserError(f"--ppn {args.ppn}: give at least 1 rank per node")
    hosts = hosts_from(args.hosts, args.hostfile, None)
    if hosts is None:
        allocation = slurm.allocation()
        if launcher != "srun" or allocation is None:
            raise UserError("health: name the nodes to check with --hosts a,b,c or --hostfile "
                            "FILE, or run inside a Slurm allocation")
        count = allocation["num_nodes"] or 0
        if count < 2:
            raise UserError(f"health: Slurm job {allocation['job_id']} has one node "
                            f"({allocation['nodes']}); ask salloc or sbatch for 2 or more")
        return None, count
    for name, slots, stated in zip(hosts.names, hosts.slots, hosts.stated):
        if stated and slots < args.ppn:
            raise UserError(f"--ppn {args.ppn}: host {name} has {slots} slot(s); give --ppn "
                            f"{slots} or fewer, or more slots to {name}")
    if len(hosts.names) < 2:
        raise UserError(f"health: one host ({hosts.names[0]}); a check compares nodes, so "
                        "give 2 or more")
    return ",".join(f"{n}:{args.ppn}" for n in hosts.names), len(hosts.names)


def _reach(mpi, plan, timeout_s: float = REACH_TIMEOUT_S) -> bool:
    """Start the native binary on every rank once (its context record) before measuring:
    a host that cannot be reached is named in one line, with nothing stored. False where
    the start failed, or did not end within `timeout_s`, with every host starting alone:
    a pair that cannot connect (MPICH's start-up waits on it; Open MPI's ends, its words
    naming the launching host), which the launches trace."""
    status, context, said = context_of(mpi, plan.ranks, plan.placement, timeout_s)
    if context and status in (0, None):  # None: every rank answered, the launcher lingered
        return True
    if status is None:
        return False
    hosts = plan.placement.hosts.names if plan.placement.hosts else ()
    words = {h: w for w in (LAUNCHER_TAG.sub("", line).strip() for line in said)  # hydra's tag
             for h in hosts if re.search(rf"(?<![\w.-]){re.escape(h)}(?![\w-])", w)}
    # The launcher's words may name a host that is only one end of a pair (Open MPI names
    # the launching host): a host is blamed where it does not start alone, else where no
    # launch holding it starts (halves of the hosts, one rank each).
    host = next((h for h in words if not _starts(mpi, plan.placement, [h])), None) or \
        _unstarted(mpi, plan.placement, hosts)
    if host is None:
        return False
    last = next((x.strip() for x in reversed(said) if x.strip()), "no message")
    raise UserError(f"health: host {host} cannot be reached ({words.get(host, last)}); fix it "
                    "or leave it out of --hosts")


def _unstarted(mpi, placement, hosts) -> str | None:
    """A host that no launch holding it starts on: halves of the hosts, one rank each,
    tried while one fails (about log2 N launches); None where every part starts."""
    left = list(hosts)
    while len(left) > 1:
        half = left[: len(left) // 2]
        left = half if not _starts(mpi, placement, half) else left[len(left) // 2:]
    return left[0] if left and not _starts(mpi, placement, left) else None


def _starts(mpi, placement, part) -> bool:
    """Whether a launch of one rank on each host of `part` starts."""
    status, context, _ = context_of(mpi, len(part), one_rank_each(placement, part),
                                    REACH_TIMEOUT_S)
    return status == 0 and context is not None


def run(args: argparse.Namespace, argv: list[str]) -> int:
    threshold = parse_threshold(args.threshold).fraction
    check_output("--junit", args.junit)
    check_output("--prom", args.prom)
    mpi = find_mpi(args.mpi)
    spec, count = _nodes(args, mpi)
    if args.transient is not None and not args.screen:
        raise UserError("--transient is for --screen; the full matrix names what stops its "
                        "launches (drop --transient, or add --screen)")
    if args.groups is not None and not args.screen:
        raise UserError("--groups is for --screen; the full matrix shows slow distances "
                        "with --pattern shift (drop --groups, or add --screen)")
    if args.deadline is not None and not args.deadline > 0:
        raise UserError(f"--deadline {args.deadline:g}: give the seconds a round may show no "
                        "progress, above 0")
    if args.screen:
        if args.expect:
            raise UserError("--expect is for the full matrix, whose pairs repeat from check "
                            "to check; the screen picks its own (drop --expect or --screen)")
        return _screen(args, argv, mpi, spec, count, threshold)
    expect = expect_from(args.expect, args.db)
    name, values = ("round", tournament_rounds(count)) if args.pattern == "pairs" \
        else ("distance", count - 1)
    (plan,) = plans(catalog(mpi), mpi, kernel=args.pattern, np=str(count * args.ppn),
                    sizes=args.sizes, window=args.window, params={"ppn": args.ppn},
                    each=(name, tuple(str(v) for v in range(1, values + 1))),
                    sampling=sampling(iters=SAMPLES, launches=args.launches,
                                      timeout=args.deadline),
                    hosts=spec, ppn=None if spec else args.ppn, launcher=args.launcher,
                    verdict=VerdictSpec("health", f"{threshold:g}"))
    store = writing_store(args.db)  # checked before launching
    started = _reach(mpi, plan, args.deadline or REACH_TIMEOUT_S)
    run_id, failed, message = None, [], "did not start: its ranks waited on each other"
    if started:
        (measured,) = measure_runs(store, mpi, [plan], ["commscope", *argv])
        failed = [o for o in measured.outcomes if o.status != "complete"]
        run_id = measured.run_id
        message = failed[0].message if failed else "nothing was measured"
    if not started or failed or run_id is None:
        if spec is None:  # the allocation's nodes unnamed: no launch of a part can be placed
            raise UserError(f"health: run {run_id} {message}; the matrix is incomplete and "
                            "no verdict is given")
        run_id, _ = check_hosts(store, mpi, plan, _pairs_plan(args, mpi, spec, count,
                                                              str(plan.sizes[0])),
                                list(plan.placement.hosts.names), args.ppn,
                                ["commscope", *argv], run_id, message, args.deadline)
    say_oversubscribed(store, [run_id])
    health = health_of(store, run_id, threshold)
    expected = measured_against(store, run_id, expect.store, expect.fleet)
    return emit(args, "health", lambda: {"run": run_id, **as_json(health),
                                          "expected": expected_json(expected)},
                lambda: render(health, run_id, args.db, expected), testcases(health),
                lambda cases, fail_on: junit(health, cases, fail_on),
                lambda: prometheus(health))


def _pairs_plan(args, mpi, spec: str, count: int, sizes: str,
               verdict: VerdictSpec | None = None):
    """The pairs kernel over the nodes: the screen's rounds (judged by `verdict`), and the
    launches that trace what stopped the full matrix's (at its smallest size alone: they
    need only finish)."""
    (plan,) = plans(catalog(mpi), mpi, kernel="pairs", np=str(count * args.ppn), sizes=sizes,
                    window=args.window, params={"ppn": args.ppn},
                    sampling=sampling(iters=SAMPLES, launches="1"), hosts=spec,
                    launcher=args.launcher, verdict=verdict)
    return plan


def _screen(args, argv, mpi, spec: str | None, count: int, threshold: float) -> int:
    """health --screen (screen.py, preflight.py): refused where it cannot judge, before
    anything is launched or stored."""
    if args.pattern != "pairs" or args.launches != str(LAUNCHES):
        given = "--pattern" if args.pattern != "pairs" else "--launches"
        raise UserError(f"health --screen: {given} is for the full matrix; the screen picks "
                        "its own pairs and rounds (leave it out, or drop --screen)")
    if spec is None:
        raise UserError("health --screen: name the nodes with --hosts or --hostfile (inside "
                        "an allocation too: its later rounds launch some nodes in an order "
                        "of their own)")
    if count < MIN_SCREEN:
        raise UserError(f"health --screen: {count} nodes; a screen needs {MIN_SCREEN} or more "
                        "(a node is judged against the others), or drop --screen")
    plan = _pairs_plan(args, mpi, spec, count, args.sizes,
                       VerdictSpec("health", f"{threshold:g}", screen=True))
    names = list(plan.placement.hosts.names)
    group_names, groups = read_groups(args.groups, names) if args.groups else \
        slurm_groups(names) or ([], None)
    # No start-up check: a node that cannot be started, or hangs, is traced by the
    # screen's own launches and named (preflight.diagnose), and the rest judged
    store = writing_store(args.db)  # checked before launching
    found, run_id = screen_hosts(store, mpi, plan, names, args.ppn, ["commscope", *argv],
                                 threshold, args.deadline, groups, group_names)
    say_oversubscribed(store, [run_id])
    transient_ok = args.transient == "ok"
    return emit(args, "screen", lambda: {"run": run_id, **screen_json(found, names, plan)},
                lambda: render_screen(found, names, plan, run_id, args.db, transient_ok),
                screen_testcases(found, transient_ok), screen_junit)
