"""Concurrent starts on new results files: PAIRS pairs of processes open the same new
file at the same moment (released together by a barrier file), as two `commscope run`
would; each then writes one run. Prints failures (goal 0) and how long opening took.

usage: python bench/concurrent_create.py [--pairs N] [--smoke]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
import time
from pathlib import Path

from commscope.store.store import Store

from stored_run import store_run

SMOKE_PAIRS = 3
EMPTY_RUN = ['{"type": "end"}\n']  # a run's records, none of them a case


def _open_and_write(path: str, start: float, out) -> None:
    while time.time() < start:  # every process released at the same instant
        pass
    try:
        t = time.perf_counter()
        store = Store(path)
        opened = time.perf_counter() - t
        store_run(store, EMPTY_RUN, "pingpong", 2)
        out.put(("ok", opened))
    except Exception as exc:  # the bench counts every failure, whatever its kind
        out.put(("failed", f"{type(exc).__name__}: {exc}"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--smoke", action="store_true",
                    help=f"--pairs {SMOKE_PAIRS}: the same path, for tests/test_bench.py")
    args = ap.parse_args()
    if args.smoke:
        args.pairs = SMOKE_PAIRS
    out = mp.Queue()
    failures, opened = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.pairs):
            path = str(Path(tmp) / f"new{i}.db")
            start = time.time() + 0.2
            procs = [mp.Process(target=_open_and_write, args=(path, start, out)) for _ in range(2)]
            for p in procs:
                p.start()
            for p in procs:
                p.join()
            for _ in procs:
                kind, value = out.get()
                (opened if kind == "ok" else failures).append(value)
            runs = len(Store(path).runs())
            if runs != 2:
                failures.append(f"{path}: {runs} runs stored, 2 expected")
    print(f"{2 * args.pairs} concurrent starts on {args.pairs} new files: "
          f"{len(failures)} failures")
    for f in failures[:5]:
        print(f"  {f}")
    print(f"opening took median {sorted(opened)[len(opened) // 2] * 1e3:.1f} ms, "
          f"max {max(opened) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
