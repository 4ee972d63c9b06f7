"""Record a corpus of real launch medians on this machine, for the simulated noise of
tests/noisesim.py ("corpus:<condition>") and the benches that use it (docs/statistics.md,
"Under the noise machines really have").

For each condition, `--commands` commands of each kernel, the kernels alternating:

  commscope run allreduce --np 2 --sizes 8,1KiB,64KiB,256KiB --launches 5
  commscope run pingpong --np 2 --sizes 8,4KiB,64KiB,1MiB --launches 5

each into a scratch results file, then `results show --json` for every case's
launch_medians_s. The conditions:

  quiet        the machine to itself (run this under the MPI lock, as below);
  busy         beside one CPU-burning process, unpinned, as a neighbour's job;
  busy_both    beside two, one a core's worth each: every rank shares its core;
  second_job   beside a second MPI job: a loop of 2-rank `commscope run pingpong` commands
               with pauses of 0-1.5 s between them, so some launches overlap it and some not;
  comes_and_goes  beside two CPU-burning processes that come and go: each burns for 0.5-2 s,
               then sleeps 0.5-2 s (uniform, at random), so the state changes within a command;
  cluster      on the namespace cluster (commscope.system.cluster.shaped: 2 hosts, unshaped
               links, one rank a host via --hosts); needs root, else left out with why.

Written (JSON, a few tens of KB):
  {"date", "machine": {cores, cpu, kernel, mpi}, "how": {argv per kernel, launches},
   "descriptions": {condition: words},
   "conditions": {condition: {kernel: {"sizes": [bytes...],
                                        "commands": [[[median_s per case] per launch]
                                                     per command],
                                        "wall_s": [per command]}}}}
A launch that lacks a case (a failed launch) holds null there.

usage: flock /tmp/commscope-mpi.lock python bench/noise_corpus.py [-o bench/data/noise.json]
           [--commands N]
           [--conditions quiet,busy,busy_both,second_job,comes_and_goes,cluster]
(the lock keeps the other MPI jobs of a shared machine off it; the deliberate second job
runs inside it.) About 13 minutes at 20 commands here. The commscope it drives is whichever
`python -m commscope.cli` imports (PYTHONPATH may point at another checkout's src/).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAUNCHES = 5
KERNELS = {"allreduce": ["--np", "2", "--sizes", "8,1KiB,64KiB,256KiB"],
           "pingpong": ["--np", "2", "--sizes", "8,4KiB,64KiB,1MiB"]}
CONDITIONS = ("quiet", "busy", "busy_both", "second_job", "comes_and_goes", "cluster")
DESCRIPTIONS = {
    "quiet": "nothing else running but the recording itself",
    "busy": "one CPU-burning process (a Python busy loop), unpinned, for the whole condition",
    "busy_both": "two CPU-burning processes (Python busy loops), unpinned",
    "second_job": "a loop of 2-rank `commscope run pingpong --sizes 8:64KiB --launches 3` "
                  "commands, 0-1.5 s apart, on the same 2 cores",
    "comes_and_goes": "two CPU-burning processes (Python loops) that each burn 0.5-2 s, then "
                      "sleep 0.5-2 s, at random: the state changes within a command",
    "cluster": "2 namespace hosts on one bridge (unshaped veth), one rank each via --hosts",
}
CLI = [sys.executable, "-m", "commscope.cli"]
TIMEOUT_S = 180  # a command beside a neighbour took up to ~20 s here; this is its cap


def machine() -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mpi = subprocess.run([str(Path(sys.prefix) / "bin" / "mpirun"), "--version"],
                         capture_output=True, text=True).stdout.splitlines()[:1]
    return {"cores": os.cpu_count(), "cpu": cpu, "kernel": platform.release(),
            "mpi": mpi[0] if mpi else "unknown", "load_average": os.getloadavg()[0]}


def medians(db: Path, run: int) -> tuple[list[int], list[list[float | None]]]:
    """The run's sizes and its [launch][case] launch medians (null where one is missing)."""
    out = subprocess.run([*CLI, "results", "show", str(run), "--json", "--db", str(db)],
                         capture_output=True, text=True, check=True).stdout
    cases = json.loads(out)["cases"]
    cases.sort(key=lambda c: c["bytes"])
    launches = max(len(c["launch_medians_s"]) for c in cases)
    table = [[(c["launch_medians_s"][k] if k < len(c["launch_medians_s"]) else None)
              for c in cases] for k in range(launches)]
    return [c["bytes"] for c in cases], [[None if m is None else float(f"{m:.6g}") for m in row]
                                         for row in table]


def record(condition: str, commands: int, folder: Path, run_on=None) -> dict:
    """`commands` commands of each kernel, alternating; run_on(argv): how to run one
    (default: here). Each command into a scratch results file of its own, so that its run
    is run 1 whatever failed before it."""
    found = {k: {"sizes": None, "commands": [], "wall_s": []} for k in KERNELS}
    for i in range(commands):
        for kernel, args in KERNELS.items():
            db = folder / f"{condition}-{kernel}-{i}.db"
            argv = [*CLI, "run", kernel, *args, "--launches", str(LAUNCHES), "--db", str(db)]
            start = time.monotonic()
            done = (run_on or _here)(argv)
            wall = time.monotonic() - start
            if done.returncode:
                print(f"  {condition} {kernel} command {i + 1}: exit {done.returncode}: "
                      f"{done.stderr.strip()[-300:]}", flush=True)
                continue
            sizes, table = medians(db, 1)
            found[kernel]["sizes"] = sizes
            found[kernel]["commands"].append(table)
            found[kernel]["wall_s"].append(round(wall, 2))
            first = sorted(row[0] for row in table if row[0])
            print(f"  {condition} {kernel} {i + 1}/{commands}: {wall:.1f} s, median of the "
                  f"first case's launches {first[len(first) // 2]:.3g} s", flush=True)
    return found


def _here(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S,
                          stdin=subprocess.DEVNULL)


@contextlib.contextmanager
def burner(count: int = 1):
    """`count` CPU-burning neighbours, each ended by its own pid at the end."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(count)]
    try:
        yield
    finally:
        for p in burners:
            p.kill()
            p.wait()


@contextlib.contextmanager
def second_job(folder: Path):
    """A loop of 2-rank commscope commands beside the recording, with random pauses so
    that some launches overlap it and some do not (a neighbour's job starts and ends).
    It stops at a file's word, after its command in flight, so no rank is left behind."""
    stop = folder / "neighbour.stop"
    loop = ("import pathlib, random, subprocess, time\n"
            f"while not pathlib.Path({str(stop)!r}).exists():\n"
            f"    subprocess.run({CLI!r} + ['run', 'pingpong', '--sizes', '8:64KiB',"
            f" '--launches', '3', '--db', {str(folder / 'neighbour.db')!r}],"
            " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "    time.sleep(random.uniform(0, 1.5))\n")
    p = subprocess.Popen([sys.executable, "-c", loop])
    try:
        time.sleep(1.0)  # let its first launch start
        yield
    finally:
        stop.touch()
        p.wait(timeout=TIMEOUT_S)


@contextlib.contextmanager
def comes_and_goes(folder: Path, count: int = 2):
    """`count` neighbours that each burn a core for 0.5-2 s, then sleep 0.5-2 s, until a file
    says stop: another job that comes and goes while a command runs."""
    stop = folder / "comes_and_goes.stop"
    loop = ("import pathlib, random, time\n"
            f"while not pathlib.Path({str(stop)!r}).exists():\n"
            "    end = time.monotonic() + random.uniform(0.5, 2)\n"
            "    while time.monotonic() < end:\n"
            "        pass\n"
            "    time.sleep(random.uniform(0.5, 2))\n")
    neighbours = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(count)]
    try:
        yield
    finally:
        stop.touch()
        for p in neighbours:
            p.wait(timeout=30)


def on_cluster(commands: int, folder: Path) -> dict | str:
    try:
        from commscope.system.cluster import ClusterUnavailable, shaped
    except ImportError as exc:
        return f"no cluster module: {exc}"
    try:
        with shaped(2, None) as c:
            hosts = ["--hosts", ",".join(c.hosts)]

            def run_on(argv):
                return c.run(c.hosts[0], [*argv, *hosts], env=c.mpi_env(), timeout=TIMEOUT_S)
            return record("cluster", commands, folder, run_on)
    except ClusterUnavailable as exc:
        return str(exc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", type=Path, default=Path("bench/data/noise.json"))
    ap.add_argument("--commands", type=int, default=20, help="commands of each kernel (20)")
    ap.add_argument("--conditions", default=",".join(CONDITIONS))
    args = ap.parse_args()
    wanted = args.conditions.split(",")
    unknown = set(wanted) - set(CONDITIONS)
    if unknown:
        ap.error(f"unknown conditions {sorted(unknown)}: name {', '.join(CONDITIONS)}")
    corpus = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": machine(),
              "how": {"argv": {k: ["commscope", "run", k, *a, "--launches", str(LAUNCHES)]
                               for k, a in KERNELS.items()},
                      "commands": args.commands, "launches": LAUNCHES},
              "descriptions": {c: DESCRIPTIONS[c] for c in wanted}, "conditions": {}}
    random.seed(2026)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for condition in wanted:
            start = time.monotonic()
            print(f"{condition}: {DESCRIPTIONS[condition]}", flush=True)
            if condition == "cluster":
                found = on_cluster(args.commands, folder)
                if isinstance(found, str):
                    print(f"  cluster left out: {found}", flush=True)
                    corpus["descriptions"]["cluster"] += f" (left out: {found})"
                    continue
            else:
                load = {"quiet": contextlib.nullcontext(), "busy": burner(1),
                        "busy_both": burner(2),
                        "second_job": second_job(folder),
                        "comes_and_goes": comes_and_goes(folder)}[condition]
                with load:
                    found = record(condition, args.commands, folder)
            corpus["conditions"][condition] = found
            print(f"{condition}: {time.monotonic() - start:.0f} s", flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(corpus, separators=(",", ":")) + "\n")
    print(f"wrote {args.output} ({args.output.stat().st_size / 1e3:.0f} KB)")


if __name__ == "__main__":
    main()
