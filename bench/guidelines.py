"""`commscope check`: how often it calls a violation where none can be, and how long the
whole catalogue takes.

False alarms: a kernel checked against itself, a test-only guideline of the bench's own
catalogue (`check --catalogue`): allreduce with --param persistent=no, which is the plain
call, against the plain call, both sides in the same launches. Repeated as separate
commands over 8 B to 1 MiB (--repeats, default 20), each command's verdicts one family
(Benjamini-Hochberg). Prints the share of commands with any violation (goal <= 5%) and
of all verdicts.

Time: `commscope check --all --np 4` at its defaults (8 B to 1 MiB), wall seconds against
the goal of 180 s, as a ratio, and the violations it found.

usage: python bench/guidelines.py [--mpi PREFIX] [--repeats N] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ITSELF = {"sources": {"bench": "bench/guidelines.py: a kernel against itself"},
          "guidelines": [{"id": "allreduce itself", "kind": "semantics", "kernel": "allreduce",
                          "vary": "persistent", "left": "no", "right": None,
                          "source": ["bench"]}]}
GOAL_S = 180.0


def check(*args: str) -> tuple[int, dict, float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "commscope.cli", "check", *args, "--json"],
                          capture_output=True, text=True)
    took = time.monotonic() - started
    if done.returncode not in (0, 1, 3):  # 3: some verdict undetermined
        sys.exit(f"guidelines: check failed: {done.stderr.strip()[-400:]}")
    return done.returncode, json.loads(done.stdout), took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--smoke", action="store_true",
                    help="2 repeats over 2 sizes, and 2 guidelines at np 2: the same path, "
                         "for tests/test_bench.py")
    args = ap.parse_args()
    mpi = ["--mpi", args.mpi] if args.mpi else []
    repeats, sizes = (2, "8:16") if args.smoke else (args.repeats, "8:1MiB")
    with tempfile.TemporaryDirectory() as tmp:
        itself = Path(tmp) / "itself.json"
        itself.write_text(json.dumps(ITSELF))
        families = violated = verdicts = 0
        for i in range(repeats):
            code, out, _ = check("allreduce itself", "--catalogue", str(itself), "--sizes",
                                 sizes, "--db", f"{tmp}/itself.db", *mpi)
            families += code == 1
            verdicts += len(out["verdicts"])
            violated += sum(v["verdict"] == "violated" for v in out["verdicts"])
        print(f"false alarms: {families} of {repeats} commands ({families / repeats:.1%}, "
              f"goal <= 5%) with a violation; {violated} of {verdicts} verdicts "
              f"({violated / verdicts:.2%})")
        whole = ["allreduce<=reduce+bcast", "monotony:bcast", "--np", "2", "--sizes", "8:16"] \
            if args.smoke else ["--all", "--np", "4"]
        code, out, took = check(*whole, "--db", f"{tmp}/all.db", *mpi)
        found = [v for v in out["verdicts"] if v["verdict"] == "violated"]
        print(f"catalogue: {' '.join(whole)}: {took:.1f} s, {took / GOAL_S:.2f} of the "
              f"{GOAL_S:.0f} s goal; {len(out['verdicts'])} verdicts, {len(found)} violated")
        for v in found:
            print(f"  violated: {v['id']} {v['case']} {v['bytes']} B: ratio {v['ratio']:.2f} "
                  f"({v['ci'][0]:.2f} to {v['ci'][1]:.2f}), p {v['p_value']:.2g}")


if __name__ == "__main__":
    main()
