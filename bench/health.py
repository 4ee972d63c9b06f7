"""`commscope health`: how often it names the fault it should, and what it costs.

cluster (needs root): 8 namespace hosts (commscope.system.cluster), one rank each, every link
shaped to 400 Mbit/s by tbf; per trial one of
  none  nothing slowed: any suspect is a false alarm;
  node  one random host's link slowed to --slow (default 100 Mbit/s): found when that host,
        and nothing else, is named;
  link  one random pair slowed, by an htb class and a u32 filter on the first host for the
        second's address: found when that pair is named as a link and no node is;
then, for each --slowdowns factor, a random node at that fraction of the rate. Prints per
scenario the trials found out of those run, the false suspects, the check's wall time and
its rounds; --screen checks with `health --screen`.

predict (needs root): a screen's and the full matrix's wall time at 64, 1024 and 4096
nodes, from a launch's and a round's cost measured on the 8-host cluster and the rounds
each takes (predict's docstring).

threshold: simulated checks of known truth (tests/screensim.py's check_of: 3% node-by-launch
and 5% pair noise, the default 10 launches and 20% threshold), per N of 4, 8, 16 and 64
and per launch effect (none; each launch a lognormal factor of its own, sd 5%): a node
exactly at the threshold (0.80), where "cleared" (a JUnit pass) and "named" are each false
claims a test at 5% makes in at most 5% of checks, and a node at 0.75, named alone (the
power) or cleared; seeded (seed = the check's number), --trials checks a row.

scale: a synthetic --nodes matrix, the fake runner's records (tests/fakempi) of --launches
launches streamed through ingest into a store, one node at a quarter of the rate; then
the analysis (matrices and attribution) and the report, timed, with the peak memory.

usage: python bench/health.py cluster [--mpi PREFIX ...] [--trials 10] [--scenarios none,node,link]
                                     [--slowdowns 0.7,...] [--screen]
       python bench/health.py predict [--mpi PREFIX ...] [--trials 20]
       python bench/health.py threshold [--trials 400] [--nodes 4,8,16,64] [--smoke]
       python bench/health.py scale [--nodes 1024] [--launches 3] [--smoke]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from commscope.stats.verdict.health import tournament_rounds  # noqa: E402

RATE_BPS = 400e6
SIZES = "8,256KiB"  # a shaped link's window of 256 KiB messages lasts ~40 ms


@contextlib.contextmanager
def eight_hosts():
    """The 8-host namespace cluster, every link shaped to RATE_BPS; down at the end."""
    from commscope.system.cluster import ClusterUnavailable, shaped

    try:
        with shaped(8, RATE_BPS) as cluster:
            yield cluster
    except ClusterUnavailable as exc:
        raise SystemExit(f"cluster: {exc}")


def check(cluster, mpi: str, db: Path, extra: tuple[str, ...] = ()) -> tuple[dict, float]:
    started = time.monotonic()
    done = cluster.run(cluster.hosts[0], [sys.executable, "-m", "commscope.cli", "health",
                                          "--hosts", ",".join(cluster.hosts), "--mpi", mpi,
                                          "--sizes", SIZES, "--db", str(db), "--json", *extra],
                       env=cluster.mpi_env(), timeout=900)
    took = time.monotonic() - started
    if done.returncode not in (0, 1, 3):  # 3: a node or link undetermined
        raise SystemExit(f"health failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout), took


def named(result: dict) -> set[tuple]:
    return {(s["kind"], tuple(sorted(s.get("hosts", []))), s.get("distance"))
            for s in result["suspects"]}


def trial(cluster, mpi: str, db: Path, scenario: str, rng: random.Random,
          factor: float, extra: tuple[str, ...] = ()) -> tuple[bool, int, float, int]:
    """(found, false suspects, seconds, rounds) of one check with `scenario`'s fault in
    place (the full matrix's rounds: its launches' tournaments)."""
    for host in cluster.hosts:
        cluster.shape(host, RATE_BPS)  # tbf again: whatever the last trial put there goes
    want: set[tuple] = set()
    if scenario == "node":
        host = rng.choice(cluster.hosts)
        cluster.shape(host, RATE_BPS * factor)
        want = {("node", (host,), None)}
    elif scenario == "link":
        a, b = rng.sample(cluster.hosts, 2)
        cluster.shape_to(a, b, RATE_BPS * factor, RATE_BPS)
        want = {("link", tuple(sorted((a, b))), None)}
    result, took = check(cluster, mpi, db, extra)
    got = named(result)
    return got == want, len(got - want), took, result["rounds"]


def cluster_bench(args) -> None:
    rng = random.Random(args.seed)
    rows, extra = [], ("--screen",) if args.screen else ()
    with eight_hosts() as cluster, tempfile.TemporaryDirectory() as tmp:
        for mpi in args.mpi:
            db = Path(tmp) / f"{Path(mpi).name}.db"
            plan = [(s, 1.0 if s == "none" else args.slow / RATE_BPS) for s in args.scenarios]
            plan += [("node", f) for f in args.slowdowns]
            for scenario, factor in plan:
                runs = [trial(cluster, mpi, db, scenario, rng, factor, extra)
                        for _ in range(args.trials)]
                rows.append((Path(mpi).name, scenario, factor, sum(r[0] for r in runs),
                             len(runs), sum(r[1] for r in runs),
                             statistics.median(r[2] for r in runs),
                             max(r[2] for r in runs), statistics.median(r[3] for r in runs),
                             max(r[3] for r in runs)))
                print("%-8s %-5s at %.2f of the rate: found %d of %d, %d false suspects, "
                      "median %.1f s (most %.1f s), rounds median %d (most %d)" % rows[-1],
                      flush=True)


def predict(mpis: list[str], trials: int) -> None:
    """The wall time of a screen and of the full matrix at 64, 1024 and 4096 nodes: a
    launch's own cost L and a round's cost c measured on the 8-host cluster (a screen of
    nothing slowed, a launch a round: L + c per round; the full matrix at 3 launches of 7
    rounds: 3 L + 21 c), times the rounds each takes (the full matrix at its default of
    10 launches of N-1; the screen the median of `trials` simulated screens, nothing
    slowed and one node at 0.75). L is the 8-host figure: mpirun's start-up on N hosts
    grows with N, so the screen's, a launch a round, is the lower bound."""
    import numpy as np
    from screensim import screen_of

    rounds = {}
    for nodes in (8, 64, 1024, 4096):
        for ratio in (1.0, 0.75):
            effects = np.zeros(nodes)
            effects[1] = np.log(ratio)
            rounds[nodes, ratio] = float(np.median(
                [screen_of(effects, 0.2, seed).rounds for seed in range(trials)]))
    with eight_hosts() as cluster, tempfile.TemporaryDirectory() as tmp:
        for mpi in mpis:
            db = Path(tmp) / f"{Path(mpi).name}.db"
            screens = [check(cluster, mpi, db, ("--screen",)) for _ in range(2)]
            per_round = statistics.median(t / r["rounds"] for r, t in screens)
            _, full = check(cluster, mpi, db, ("--launches", "3"))
            c = max((full - 3 * per_round) / 18, 0.0)  # 3 L + 21 c, L = per_round - c
            launch = per_round - c
            print(f"{Path(mpi).name}: measured on 8 hosts a launch L = {launch:.2f} s, a "
                  f"round c = {c:.2f} s (screens {per_round:.2f} s a round, the full "
                  f"matrix at 3 launches {full:.1f} s)")
            print(f"{'nodes':>6} {'full matrix (10 launches)':>26} "
                  f"{'screen, none slow':>18} {'screen, one at 0.75':>20}")
            for nodes in (8, 64, 1024, 4096):
                whole = 10 * (launch + tournament_rounds(nodes) * c)
                quiet, slow = (rounds[nodes, r] * (launch + c) for r in (1.0, 0.75))
                print(f"{nodes:>6} {whole / 60:>22.1f} min {quiet / 60:>14.1f} min "
                      f"{slow / 60:>16.1f} min  (screen rounds {rounds[nodes, 1.0]:.0f}, "
                      f"{rounds[nodes, 0.75]:.0f})", flush=True)


def threshold_bench(args) -> None:
    """The rows of docs/health.md's "At the threshold": each a seeded simulation."""
    import math

    import numpy as np
    from screensim import NODE_LAUNCH, PAIR, check_of

    from commscope.cli.health import LAUNCHES

    print(f"simulated checks, {NODE_LAUNCH:.0%} node-by-launch and {PAIR:.0%} pair noise, "
          f"{LAUNCHES} launches, threshold 20%: a node at 0.80 (cleared, named: false "
          "claims, each at most 5% by design) and at 0.75 (named alone: the power; cleared)")
    print(f"{'nodes':>5} {'launch effect':>14} {'checks':>6} {'cleared@0.80':>12} "
          f"{'named@0.80':>10} {'named@0.75':>10} {'cleared@0.75':>12}")
    for nodes in args.nodes:
        for launch_sd in (0.0, 0.05):
            counts = []
            for ratio in (0.8, 0.75):
                effects = np.zeros(nodes)
                effects[0] = math.log(ratio)
                checks = [check_of(effects, 0.2, LAUNCHES, seed, launch_sd=launch_sd)
                          for seed in range(args.trials)]
                counts += [sum("n0" in h.cleared for h in checks),
                           sum(("n0" in h.drain) if ratio == 0.8 else h.drain == ["n0"]
                               for h in checks)]
            label = "none" if not launch_sd else f"random {launch_sd:.0%}"
            share = [c / args.trials for c in counts]
            print(f"{nodes:>5} {label:>14} {args.trials:>6} {share[0]:>12.1%} {share[1]:>10.1%} "
                  f"{share[3]:>10.1%} {share[2]:>12.1%}", flush=True)


def scale_bench(args) -> None:
    """The fake runner's records (tests/fakempi/native.py) of every launch, streamed through
    ingest into a store as `commscope health` stores them (not timed); then the analysis
    and the report in a fresh process, timed, with its peak memory."""
    from commscope.system.build import native_description
    from commscope.measure.ingest import Ingest
    from commscope.system.mpi import find_mpi
    from commscope.store.store import Store
    from fakempi.native import records

    nodes, slow = args.nodes, args.nodes // 3
    rounds = tournament_rounds(nodes)
    rate = lambda x, y: 5e9 / (4 if slow in (x, y) else 1)  # noqa: E731
    described = native_description(find_mpi(str(HERE.parent / ".venv")))
    hosts = [f"n{i}" for i in range(nodes)]
    values = ",".join(map(str, range(1, rounds + 1)))
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(args.keep or tmp) / "scale.db"
        store = Store(db)
        started = time.monotonic()
        pairs = next(k for k in described["kernels"] if k["name"] == "pairs")
        run = store.begin_run(["commscope", "health"], "pairs", nodes, False,
                              {"params": {"ppn": "1"}, "each": {"round": values.split(",")}},
                              kernel_facts=pairs)
        for k in range(1, args.launches + 1):
            launch = store.begin_launch(run, k, False)
            ingest = Ingest(store, run, launch)
            argv = ["--kernel", "pairs", "--sizes", "8,1048576", "--iters", "3", "--shuffle",
                    str(k), "--param", "ppn=1", "--each", f"round={values}"]
            for rec in records(argv, nodes, described=described, hosts=hosts, rate=rate):
                ingest.feed(json.dumps(rec) + "\n")
            store.finish_launch(launch, "complete")
        store.finish_run(run, "complete")
        store.close()
        measured = time.monotonic() - started
        result = subprocess.run([sys.executable, str(Path(__file__)), "analyse", str(db)],
                                capture_output=True, text=True, check=True)
        size_mb = db.stat().st_size / 1e6
    figures = json.loads(result.stdout)
    print(f"{nodes} nodes, {args.launches} launches of {rounds} rounds at 2 sizes: made and "
          f"stored through ingest in {measured:.1f} s ({size_mb:.0f} MB; not part of the "
          f"target); drained {figures['drain']} (the slow node: n{slow})")
    print(f"analysis {figures['analysis_s']:.2f} s (the matrices and suspects, as `health` "
          f"makes them), report {figures['report_s']:.2f} s (its own analysis included; "
          f"target 5 s); peak memory {figures['peak_MB']:.0f} MB (target 1024 MB)")


def analyse(db: str) -> None:
    """In a fresh process, so its peak memory is the analysis's and the report's own."""
    from commscope.cli.report import build
    import commscope.views.report  # noqa: E402,F401 matplotlib: imported before any clock starts
    from commscope.health.health import health_of
    from commscope.store.store import Store

    store = Store(Path(db))
    run = store.runs()[-1].id
    started = time.perf_counter()
    health = health_of(store, run)
    analysed = time.perf_counter()
    html = build(store, [run], "bench")
    done = time.perf_counter()
    assert "heat map" in html
    print(json.dumps({"analysis_s": analysed - started, "report_s": done - analysed,
                      "drain": health.drain,
                      "peak_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    c = sub.add_parser("cluster")
    c.add_argument("--mpi", action="append", default=None)
    c.add_argument("--trials", type=int, default=10)
    c.add_argument("--slow", type=float, default=100e6, help="bits/s of a slowed link")
    c.add_argument("--slowdowns", type=lambda s: [float(x) for x in s.split(",") if x],
                   default=[0.7, 0.75])
    c.add_argument("--scenarios", type=lambda s: [x for x in s.split(",") if x],
                   default=["none", "node", "link"])
    c.add_argument("--seed", type=int, default=int(time.time()))
    c.add_argument("--screen", action="store_true", help="check with health --screen")
    w = sub.add_parser("predict")
    w.add_argument("--mpi", action="append", default=None)
    w.add_argument("--trials", type=int, default=20, help="simulated screens per node count")
    t = sub.add_parser("threshold")
    t.add_argument("--trials", type=int, default=400, help="simulated checks a row")
    t.add_argument("--nodes", type=lambda v: [int(x) for x in v.split(",")],
                   default=[4, 8, 16, 64])
    t.add_argument("--smoke", action="store_true")
    s = sub.add_parser("scale")
    s.add_argument("--nodes", type=int, default=1024)
    s.add_argument("--launches", type=int, default=3)
    s.add_argument("--smoke", action="store_true")
    s.add_argument("--keep", metavar="DIR", help="make the store in DIR and keep it")
    a = sub.add_parser("analyse")
    a.add_argument("db")
    args = p.parse_args()
    if args.what == "cluster":
        args.mpi = args.mpi or [str(HERE.parent / ".venv")]
        print(f"seed {args.seed}")
        cluster_bench(args)
    elif args.what == "predict":
        predict(args.mpi or [str(HERE.parent / ".venv")], args.trials)
    elif args.what == "threshold":
        if args.smoke:
            args.nodes, args.trials = [4], 2
        threshold_bench(args)
    elif args.what == "scale":
        if args.smoke:
            args.nodes = 6
        scale_bench(args)
    else:
        analyse(args.db)


if __name__ == "__main__":
    main()
