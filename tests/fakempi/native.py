"""The fake native binary: the records the real one writes (docs/native.md, "Records"),
with samples from a Hockney line t(n) = alpha + n/B and seeded noise instead of MPI.

`records(...)` is also the generator bench/scale.py feeds through ingest at scale.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import zlib
from pathlib import Path

import numpy as np

ALPHA_S, BANDWIDTH_BPS = 1e-6, 5e9
COPY_BPS, LLC_BYTES = 2e10, 32 << 20  # one core's copy rate: the ceiling; the cache
LAUNCH_CV = 0.02  # launches differ by a log-normal factor of this spread
HOST = "fakehost"


def description() -> dict:
    return json.loads((Path(os.environ["COMMSCOPE_FAKE_PREFIX"]) / "describe.json").read_text())


def _args(argv: list[str]) -> dict:
    out: dict = {"param": []}
    i = 0
    while i < len(argv):
        name = argv[i][2:]
        if name in ("validate", "info", "describe", "cold-cache", "late-placebo"):
            out[name] = True
            i += 1
            continue
        value = argv[i + 1]
        if name == "param":
            out["param"].append(value)
        else:
            out[name] = value
        i += 2
    return out


def context(ranks: int, argv: list[str], kernel: str | None, schema: int = 1,
            hosts: list[str] | None = None) -> dict:
    """`hosts`: each rank's host (all on HOST when None)."""
    hosts = hosts or [HOST] * ranks
    return {"type": "context", "schema": schema, "commscope_version": "fake",
            "mpi_library": "Open MPI", "mpi_library_version": "Open MPI v5.0.0 (fake)",
            "mpi_standard": "3.1", "large_count": False, "ranks": ranks,
            "hosts": list(dict.fromkeys(hosts)),
            "placement": [{"rank": r, "host": hosts[r], "cpu": r % 2, "binding": "0-1",
                           "shm_node": list(dict.fromkeys(hosts)).index(hosts[r])}
                          for r in range(ranks)],
            "library_transport": {"btl": "^ofi", "pml": ""},
            "library_protocols": {"btl_sm_eager_limit": 4096, "btl_sm_rndv_eager_limit": 32768,
                                  "btl_sm_max_send_size": 32768},
            "timer": {"name": "MPI_Wtime", "wtick_s": 1e-9, "resolution_s": 2e-8,
                      "overhead_s": 2.5e-8, "barrier_s": 5e-7},
            "compiler": "fake", "argv": argv, "utc": "2026-01-01T00:00:00Z", "kernel": kernel}


def _advection2d(nbytes: int, ranks: int) -> dict:
    """advection2d's own fields: a second-order error in the grid's points per side."""
    n = math.isqrt(nbytes // 8)
    return {"l2_error": 0.7 / n**2, "max_error": 1.0 / n**2, "process_grid": [ranks, 1],
            "points_per_rank": n * n // ranks, "cfl": 0.5, "final_time": 1.0}


# The fields a kernel's report hook adds to its case record (docs/kernels-*.md).
REPORTS = {"advection2d": _advection2d}


def case(kernel: dict, mode: str | None, nbytes: int, world: int, samples: int,
         window: int | None, sync: str = "barrier", launch: int = 0, cold: bool = False,
         scale: float = 1.0, spread: float = 0.02, variant: str = "", seed: int = 0) -> dict:
    """One case record: `samples` samples per rank, rank 0's the kernel's sample unless it
    is timed by the slowest rank; each launch (the --shuffle seed) a factor of its own.
    `scale` makes the host slower (a state it may be in); `spread` is the samples' own
    spread within a launch; `variant` names an --each side, whose samples draw noise of
    their own, and `seed` another command."""
    ranks = kernel["max_ranks"] or world
    drawn = f"{kernel['name']} {mode} {nbytes} {ranks} {launch}" + (f" {seed}" if seed else "")
    rng = np.random.default_rng(zlib.crc32(drawn.encode()))
    # The launch's factor is the same for every variant in it: what pairs them (check).
    per_iteration = (ALPHA_S + nbytes / BANDWIDTH_BPS) * (window or 1) * math.log2(ranks + 1) \
        * math.exp(rng.normal(0, LAUNCH_CV)) * scale
    if variant:
        rng = np.random.default_rng(zlib.crc32(f"{drawn} {variant}".encode()))
    per_rank = per_iteration * (1 + rng.exponential(spread, (ranks, samples)))
    kept = per_rank.max(axis=0) if kernel["timed_by"] == "max" else per_rank[0]
    rec = {"type": "case", "kernel": kernel["name"], "send_mode": mode, "bytes": nbytes,
           "ranks": ranks, "window": window,
           "batch": 1 if kernel.get("sample") == "call" else 10, "warmup_iterations": 100,
           "validated": False, "timed_by": kernel["timed_by"], "samples_s": kept.tolist(),
           "rank_samples_s": per_rank.tolist(), "sync": sync,
           "sample": kernel.get("sample", "batch"),
           "copy_s": nbytes / COPY_BPS if nbytes else None, "copy_ranks": min(ranks, 2),
           "cache": "cold" if cold else "warm", "llc_bytes": LLC_BYTES,
           "working_set_bytes": 2 * LLC_BYTES if cold else 2 * max(nbytes, 4096)}
    if kernel["phases"]:
        share = 1 / len(kernel["phases"])
        rec["phase_samples_s"] = {p: (per_rank * share).tolist() for p in kernel["phases"]}
    rec.update(REPORTS.get(kernel["name"], lambda n, r: {})(nbytes, ranks))
    if sync == "window":
        rec.update(window_s=4 * per_iteration, invalid=[],
                   clock_offsets_s=[0.0] * ranks, clock_rtt_s=[0.0] * ranks)
    return rec


def _opponent(node: int, nodes: int, k: int) -> int:
    """The circle method's schedule, as native/kernels/pairs.c plays it."""
    m = nodes + nodes % 2
    if node == m - 1:
        return k
    if node == k:
        return m - 1
    return (2 * k - node) % (m - 1)


def _partner(schedule: str, node: int, nodes: int, value: int) -> int:
    """Whom `node` meets (nodes: no one), by native/kernels/pairs.c's schedules."""
    if schedule == "adjacent":
        return node ^ 1 if node ^ 1 < nodes else nodes
    return _opponent(node, nodes, value - 1)


def node_level(kernel: str, params: dict, value: str, nbytes: int, ranks: int, samples: int,
               window: int, rng, rate, ids: list[int], shock: np.ndarray | None) -> dict:
    """pairs' and shift's fields (native/kernels/pairs.c, shift.c): each rank's phases and
    peer, from `rate(x, y)`, node x's bandwidth to node y in bytes/s (x, y as `ids` names
    the launch's nodes), each stream's time drawn with the launch's own factor per pair,
    each node's (`shock`, by id) and the samples' spread."""
    ppn = int(params.get("ppn", 1))
    nodes = ranks // ppn
    phases = {p: np.zeros((ranks, samples)) for p in
              (("round_trip", "sent", "received") if kernel == "pairs" else ("received", "sent"))}
    peers = [-1] * ranks

    def stream(x: int, y: int) -> np.ndarray:
        per_pair = math.exp(rng.normal(0, LAUNCH_CV))
        if shock is not None:
            per_pair *= math.exp(shock[ids[x]] + shock[ids[y]])
        return (ALPHA_S + window * nbytes / rate(ids[x], ids[y])) * per_pair \
            * (1 + rng.exponential(0.02, samples))

    for x in range(nodes):
        if kernel == "pairs":
            y = _partner(params.get("schedule", "tournament"), x, nodes,
                         int(value or params.get("round", 1)))
            if y >= nodes or y < x:
                continue
            there, back = stream(x, y), stream(y, x)
            trip = 2 * (ALPHA_S + nbytes / rate(ids[x], ids[y])) \
                * (1 + rng.exponential(0.02, samples))
            for lr in range(ppn):
                a, b = x * ppn + lr, y * ppn + lr
                peers[a], peers[b] = b, a
                for r, out, into in ((a, there, back), (b, back, there)):
                    phases["round_trip"][r] = trip
                    phases["sent"][r], phases["received"][r] = out, into
        else:
            source = (x - int(value)) % nodes
            got = stream(source, x)
            for lr in range(ppn):
                r = x * ppn + lr
                peers[r] = source * ppn + lr
                phases["received"][r] = got
                phases["sent"][r] = got * 0.9
    per_rank = sum(phases.values())
    return {"phase_samples_s": {p: t.tolist() for p, t in phases.items()}, "peers": peers,
            "rank_samples_s": per_rank.tolist(), "samples_s": per_rank.max(axis=0).tolist()}


# --late: the fake's known truth, each punctual rank's propagated delay P_i. A rooted
# one-to-all (bcast, scatter: root 0, a binomial tree) delays the late rank's subtree, a
# rooted all-to-one (reduce, gather) the ranks on its path to the root, anything else every
# rank; the placebo nothing. A sleep overshoots by OVERSHOOT_S.
OVERSHOOT_S = 60e-6


def _below(rank: int, late: int) -> bool:
    """rank is late or under it in the binomial tree from root 0 (parent: the lowest set
    bit cleared)."""
    while rank > late:
        rank &= rank - 1
    return rank == late


def propagated(kernel: str, rank: int, late: int, placebo: bool,
               algorithm: str | None = None) -> float:
    if placebo or algorithm == "basic_linear" and kernel == "bcast":
        return 0.0  # the root sends to each rank itself: a late one delays no other
    if kernel in ("bcast", "scatter", "scatterv"):
        return float(_below(rank, late))
    if kernel in ("reduce", "gather", "gatherv"):
        return float(_below(late, rank))
    return 1.0


def late_samples(rec: dict, args: dict, rng, algorithm: str | None = None) -> dict:
    """The record's --late block, its late samples' exits moved by the truth (P_i times the
    wait) with the case's own noise."""
    spec = args["late"]
    who, _, delays = spec.partition(":")
    delays = [float(d) for d in delays.split(",")]
    exits = np.asarray(rec["rank_samples_s"])
    ranks, n = exits.shape
    placebo = bool(args.get("late-placebo"))
    late_of, waited = [], []
    for i in range(n):
        slot = i % (len(delays) + 1)
        rank = (int(who) if who != "random" else int(rng.integers(ranks))) if slot else -1
        wait = delays[slot - 1] + OVERSHOOT_S * rng.exponential() if slot else 0.0
        for r in range(ranks):
            if slot and r != rank:
                exits[r, i] += propagated(rec["kernel"], r, rank, placebo, algorithm) * wait
            elif slot and not placebo:
                exits[r, i] += wait
        late_of.append(rank)
        waited.append(wait)
    return {"rank_samples_s": exits.tolist(), "samples_s": exits.max(axis=0).tolist(),
            "late": {"rank": who if who == "random" else int(who), "delays_s": delays,
                     "wait": args.get("late-wait", "sleep"), "placebo": placebo,
                     "ranks": late_of, "waited_s": waited}}


# congestion: each aggressor group slows the canary by this share (its known truth: a
# CIF of 1 + CIF_PER_GROUP x groups), and delivers AGGRESSOR_BPS whether or not a canary
# runs beside it.
CIF_PER_GROUP, AGGRESSOR_BPS = 0.5, 10e6


def congestion_case(rec: dict, params: dict, world: int, rng) -> dict:
    groups = (world - 2) // int(params.get("group", 2))
    active = params.get("aggressor", "none") != "none"
    slower = 1 + CIF_PER_GROUP * groups if active and params.get("canary") != "idle" else 1
    samples = np.asarray(rec["samples_s"]) * slower
    case_s = 0.5 * float(np.exp(rng.normal(0, 0.01)))
    return {"samples_s": samples.tolist(), "rank_samples_s": [samples.tolist()] * 2,
            "aggressor_Bps": AGGRESSOR_BPS * groups * case_s / 0.5 if active else 0.0,
            "aggressor_ranks": world - 2}


def records(argv: list[str], world: int, schema: int = 1, described: dict | None = None,
            scale: float = 1.0, spread: float = 0.02, factor=lambda variant, nbytes: 1.0,
            seed: int = 0, hosts: list[str] | None = None, rate=None,
            host_order: list[str] | None = None, node_noise: float = 0.0):
    """Every record one launch writes, in order; `described` is the real binary's
    --describe output (the fake prefix's copy when None). With --each, every case once per
    value, `factor(value, bytes)` times as slow (value None: the parameter not given).
    `hosts`: each rank's host; `rate(x, y)`: the node-level kernels' bandwidth from node x
    to node y (node_level; default the latency model's), x and y the nodes' places in
    `host_order` where given (a launch of some hosts, in an order of their own), else in
    the launch; `node_noise`: each node's own log factor in each launch."""
    args = _args(argv)
    kinds = {k["name"]: k for k in (described or description())["kernels"]}
    k = kinds.get(args.get("kernel"))
    yield context(world, argv, args.get("kernel"), schema, hosts)
    if args.get("info"):
        yield {"type": "end", "cases": 0}
        return
    modes = args["modes"].split(",") if "modes" in args else [None]
    window = int(args["window"]) if k["default_window"] and "window" in args else \
        k["default_window"]
    samples = int(args.get("iters", 0)) or 20
    name, _, values = args.get("each", "").partition("=")
    variants = [v or None for v in values.split(",")] if name else [None]
    count = 0
    ppn = int(dict(p.split("=", 1) for p in args["param"]).get("ppn", 1))
    ids = [host_order.index(h) for h in hosts[::ppn]] if host_order and hosts \
        else list(range(world))
    drawn_nodes = f"nodes {args.get('shuffle', 0)} {seed}".encode()
    shock = np.random.default_rng(zlib.crc32(drawn_nodes)).normal(0, node_noise, max(ids) + 1) \
        if node_noise else None
    for mode in modes:
        for nbytes in map(int, args["sizes"].split(",")):
            for value in variants:
                start = {"kernel": k["name"], "send_mode": mode, "bytes": nbytes}
                if name:
                    start["variant"] = {name: value}
                yield {"type": "case_start", **start}
                rec = case(k, mode, nbytes, world, samples, window,
                           args.get("sync", "barrier"), int(args.get("shuffle", 0)),
                           bool(args.get("cold-cache")), scale * factor(value, nbytes),
                           spread, value or "", seed)
                if "late" in args:
                    drawn = f"late {k['name']} {nbytes} {value} {args.get('shuffle', 0)} {seed}"
                    rec.update(late_samples(rec, args, np.random.default_rng(
                        zlib.crc32(drawn.encode())), value if name == "algorithm" else None))
                if k["name"] == "congestion":
                    drawn = f"congestion {nbytes} {value} {args.get('shuffle', 0)} {seed}"
                    params = dict(p.split("=", 1) for p in args["param"])
                    rec.update(congestion_case(rec, {**params, name: value}, world,
                                               np.random.default_rng(zlib.crc32(
                                                   drawn.encode()))))
                elif k["family"] == "health":
                    drawn = f"{k['name']} {nbytes} {value} {args.get('shuffle', 0)} {seed}"
                    rec.update(node_level(
                        k["name"], dict(p.split("=", 1) for p in args["param"]), value,
                        nbytes, world, samples, window or 1,
                        np.random.default_rng(zlib.crc32(drawn.encode())),
                        rate or (lambda x, y: BANDWIDTH_BPS / scale), ids, shock))
                yield {**rec, **start}
                count += 1
    yield {"type": "end", "cases": count}


def main(argv: list[str]) -> None:
    if argv == ["--describe"]:
        print(json.dumps(description()))
        return
    args = _args(argv)
    out = open(args["output"], "a") if "output" in args else sys.stdout
    fail_after = int(os.environ.get("COMMSCOPE_FAKE_FAIL_AFTER", -1))
    hang_after = int(os.environ.get("COMMSCOPE_FAKE_HANG_AFTER", -1))
    cases = 0
    for rec in records(argv, int(os.environ.get("COMMSCOPE_FAKE_RANKS", 1)),
                       int(os.environ.get("COMMSCOPE_FAKE_SCHEMA", 1)),
                       scale=float(os.environ.get("COMMSCOPE_FAKE_SCALE", 1)),
                       spread=float(os.environ.get("COMMSCOPE_FAKE_SPREAD", 0.02))):
        if rec["type"] == "case_start" and cases == hang_after:
            out.write(json.dumps(rec) + "\n")
            out.flush()
            time.sleep(3600)
        if rec["type"] == "case_start" and cases == fail_after:
            print(json.dumps({"type": "error", "kernel": rec["kernel"],
                              "send_mode": rec["send_mode"], "bytes": rec["bytes"], "rank": 1,
                              "message": "fake failure"}), flush=True)
            sys.exit(1)
        cases += rec["type"] == "case"
        out.write(json.dumps(rec) + "\n")
        out.flush()
