"""`commscope health --screen` (src/commscope/health/screen.py): what it names and in how many
rounds, on simulated screens of known truth, and what its analysis costs at scale.

sim: N nodes, one at a bandwidth ratio r of the typical node (r 1.00: none; 0.80: at the
threshold, where naming it is a false claim the design holds to 5%), 3% node-by-launch
and 5% pair noise (tests/screensim.py), the default 20% threshold. Per row: the share of
screens that named the slow node, that named it within 16 rounds, that named any other
node, and the rounds in all (median and 90th percentile; the cap is 4 + 2 log2 N, the
full matrix N-1 a launch).

launches: the same screens with a factor each second-stage launch shares (the small
targeted launches faster or slower than the first stage's full ones, or each its own):
none, 1.20x the bandwidth (20% faster), 1.05x, 0.95x (5% slower), 0.90x, a lognormal
factor of sd 5% for each second-stage launch, and one for every launch. Per N of 4, 8, 16
and 64 and per effect: a node at 0.80 (the threshold: named and cleared are each false
claims, at most 5% by design) and at 0.75 (named: the power; cleared). Seeded (seed = the
screen's number), --trials screens a row.

scale: a screen of --nodes nodes (one at 0.8 of the rate, the threshold: undecided, it
keeps the screen to its cap of rounds, the most analysis a screen does) measured by the fake
runner's records (tests/fakempi) streamed through ingest into a store as `health
--screen` stores them, a launch a round, the launches chosen by the screen itself; then,
in a fresh process, the analysis of every launch (reading the pairs back, the fit and
the tests) timed, with its peak memory. Targets: 10 s and 1 GiB at 4096 nodes.

usage: python bench/screen.py sim [--nodes 8,64,1024] [--trials 200] [--smoke]
       python bench/screen.py launches [--nodes 4,8,16,64] [--trials 400] [--smoke]
       python bench/screen.py scale [--nodes 4096] [--ratio 0.8] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from screensim import random_launches, screen_of, second_stage  # noqa: E402

from commscope.health.screen import max_rounds  # noqa: E402

RATIOS = (1.0, 0.8, 0.75, 0.7, 0.5)
SLOW = 1  # the slow node's index


def sim(args) -> None:
    print("simulated screens, 3% node-by-launch and 5% pair noise, threshold 20%: named "
          "(the slow node), in 16 (named within 16 rounds), others (any other node named), "
          "rounds (median, 90th percentile)")
    print(f"{'nodes':>6} {'cap':>4} {'ratio':>6} {'screens':>8} {'named':>7} {'in 16':>7} "
          f"{'others':>7} {'rounds':>7} {'p90':>5}")
    for nodes in args.nodes:
        trials = max(2, args.trials if nodes <= 64 else args.trials // 4)
        for ratio in RATIOS:
            named = early = others = 0
            rounds = []
            for seed in range(trials):
                effects = np.zeros(nodes)
                effects[SLOW] = math.log(ratio)
                s = screen_of(effects, 0.2, seed)
                named += SLOW in s.named and ratio < 1
                early += s.named.get(SLOW, 99) <= 16 and ratio < 1
                others += bool(set(s.named) - {SLOW})
                rounds.append(s.rounds)
            print(f"{nodes:>6} {max_rounds(nodes):>4} {ratio:>6.2f} {trials:>8} "
                  f"{named / trials:>7.1%} {early / trials:>7.1%} {others / trials:>7.1%} "
                  f"{np.median(rounds):>7.0f} "
                  f"{np.percentile(rounds, 90):>5.0f}", flush=True)


# (label, each node's group, a group's uplink log factor, the groups a screen should name)
GROUPED = (("2 switches of 16, between them 0.62", np.repeat([0, 1], 16), {0: math.log(0.62)},
            (0, 1)),
           ("4 switches of 8, one uplink 0.62", np.repeat([0, 1, 2, 3], 8),
            {2: math.log(0.62)}, (2,)),
           ("4 switches of 8, nothing slow", np.repeat([0, 1, 2, 3], 8), {}, None))


def grouped(trials: int) -> None:
    """--groups: the share of screens naming the slow groups as they should (one uplink
    as that group), any group, and any node."""
    print(f"\nswitch groups (--groups), 32 nodes, {trials} screens a row: as it should "
          "(the pair of switches, or the one switch's uplink), any group, any node")
    for label, groups, uplink, want in GROUPED:
        right = anything = nodes = 0
        for seed in range(trials):
            s = screen_of(np.zeros(groups.size), 0.2, seed, groups=groups, uplink=uplink)
            found = [g["groups"] for g in s.suspects()]
            right += want is not None and found == [want]
            anything += bool(found)
            nodes += bool(s.named)
        print(f"{label:<36} {right / trials:>7.1%} {anything / trials:>7.1%} "
              f"{nodes / trials:>7.1%}", flush=True)


# (label, the factor each launch shares)
EFFECTS = (("none", None), ("1.20x (20% faster)", second_stage(1.20)),
           ("1.05x (5% faster)", second_stage(1.05)), ("0.95x (5% slower)", second_stage(0.95)),
           ("0.90x (10% slower)", second_stage(0.90)),
           ("random 5% (2nd stage)", random_launches(0.05)),
           ("random 5% (every one)", random_launches(0.05, first_stage=True)))


def launches(args) -> None:
    """The rows of docs/health.md's "Launch-wide effects": each a seeded simulation."""
    print("\nsimulated screens under launch-wide effects, 3% node-by-launch and 5% pair "
          "noise, threshold 20%: a node at 0.80 (named, cleared: false claims, each at most "
          "5% by design) and at 0.75 (named: the power; cleared)")
    print(f"{'nodes':>5} {'launch effect':<22} {'screens':>7} {'named@0.80':>10} "
          f"{'cleared@0.80':>12} {'named@0.75':>10} {'cleared@0.75':>12}")
    for nodes in args.nodes:
        for label, effect in EFFECTS:
            counts = []
            for ratio in (0.8, 0.75):
                effects = np.zeros(nodes)
                effects[SLOW] = math.log(ratio)
                screens = [screen_of(effects, 0.2, seed, launch=effect)
                           for seed in range(args.trials)]
                counts += [sum(SLOW in s.named for s in screens),
                           sum(SLOW in s.cleared for s in screens)]
            print(f"{nodes:>5} {label:<22} {args.trials:>7} " + " ".join(
                f"{c / args.trials:>{w}.1%}" for c, w in zip(counts, (10, 12, 10, 12))),
                flush=True)


def scale(args) -> None:
    """Made and stored through ingest (not timed), then analysed in a fresh process."""
    from commscope.system.build import native_description
    from commscope.measure.ingest import Ingest
    from commscope.system.mpi import find_mpi
    from commscope.health.screen import Screen, judge, next_launch
    from commscope.health.preflight import observations
    from commscope.store.store import Store
    from fakempi.native import records

    nodes = args.nodes
    hosts = [f"n{i}" for i in range(nodes)]
    rate = lambda x, y: 5e9 * (args.ratio if SLOW in (x, y) else 1)  # noqa: E731
    described = native_description(find_mpi(str(HERE.parent / ".venv")))
    pairs = next(k for k in described["kernels"] if k["name"] == "pairs")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "screen.db"
        store = Store(db)
        started = time.monotonic()
        run = store.begin_run(["commscope", "health", "--screen"], "pairs", nodes, False,
                              {"params": {"ppn": "1", "schedule": "adjacent"}},
                              kernel_facts=pairs)
        s, rng = Screen(nodes, 0.2), np.random.default_rng(1)
        while (launch := next_launch(s, rng)) is not None:
            number = store.begin_launch(run, launch.number, False)
            ingest = Ingest(store, run, number)
            order = [hosts[x] for x in launch.order]
            argv = ["--kernel", "pairs", "--sizes", "8,1048576", "--iters", "3", "--shuffle",
                    str(launch.number), "--param", "ppn=1", "--param", "schedule=adjacent"]
            for rec in records(argv, len(order), described=described, hosts=order, rate=rate,
                               host_order=hosts, node_noise=0.03):
                ingest.feed(json.dumps(rec) + "\n")
            store.finish_launch(number, "complete")
            s.launches.append(launch)
            s.obs = s.obs.add(observations(store, run, launch.number, 1, 1048576, hosts))
            judge(s)
        store.finish_run(run, "complete")
        store.close()
        made = time.monotonic() - started
        result = subprocess.run([sys.executable, str(Path(__file__)), "analyse", str(db),
                                 str(nodes)], capture_output=True, text=True, check=True)
    figures = json.loads(result.stdout)
    print(f"{nodes} nodes, one at {args.ratio:g} of the rate: {s.rounds} rounds, a launch each, "
          f"made and stored through ingest in {made:.1f} s (not part of the target); "
          f"drained {figures['drain']} (the slow node: n{SLOW})")
    print(f"analysis {figures['analysis_s']:.2f} s (every launch's pairs read back, fitted "
          f"and tested as the screen does after each; target 10 s); peak memory "
          f"{figures['peak_MB']:.0f} MB (target 1024 MB)")


def analyse(db: str, nodes: int) -> None:
    """In a fresh process, so that its peak memory is the analysis's own: the screen
    replayed from the store, its launches in order, judged after each as the command
    judges them."""
    from commscope.health.preflight import observations
    from commscope.health.screen import Launch, Screen, judge
    from commscope.store.store import Store

    store = Store(Path(db))
    run = store.runs()[-1].id
    hosts = [f"n{i}" for i in range(nodes)]
    started = time.perf_counter()
    s = Screen(nodes, 0.2)
    for row in store.launches(run):
        s.launches.append(Launch(row.number, ()))
        s.obs = s.obs.add(observations(store, run, row.number, 1, 1048576, hosts))
        judge(s)
    took = time.perf_counter() - started
    print(json.dumps({"analysis_s": took, "drain": [hosts[x] for x in sorted(s.named)],
                      "peak_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    s = sub.add_parser("sim")
    s.add_argument("--nodes", type=lambda v: [int(x) for x in v.split(",")],
                   default=[8, 64, 1024])
    s.add_argument("--trials", type=int, default=200)
    s.add_argument("--smoke", action="store_true")
    e = sub.add_parser("launches")
    e.add_argument("--nodes", type=lambda v: [int(x) for x in v.split(",")],
                   default=[4, 8, 16, 64])
    e.add_argument("--trials", type=int, default=400)
    e.add_argument("--smoke", action="store_true")
    c = sub.add_parser("scale")
    c.add_argument("--nodes", type=int, default=4096)
    c.add_argument("--ratio", type=float, default=0.8)
    c.add_argument("--smoke", action="store_true")
    a = sub.add_parser("analyse")
    a.add_argument("db")
    a.add_argument("nodes", type=int)
    args = p.parse_args()
    if args.what == "sim":
        if args.smoke:
            args.nodes, args.trials = [8], 2
        sim(args)
        grouped(max(2, args.trials // 4))
        if args.smoke:
            launches(args)
    elif args.what == "launches":
        if args.smoke:
            args.nodes, args.trials = [8], 2
        launches(args)
    elif args.what == "scale":
        if args.smoke:
            args.nodes = 16
        scale(args)
    else:
        analyse(args.db, args.nodes)


if __name__ == "__main__":
    main()
