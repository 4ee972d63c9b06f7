"""How fast a watch's results file grows: issue 52's target, at most 1 MB per 1000 probes of
the default probe set (docs/watch.md, "What a watch keeps").

Two watches of the default set (`commscope watch --default`) on this host, each in its own
results file: one as `commscope watch` runs by default (the latest --keep probes whole,
older ones folded to each case's figure and launch medians), one with `--keep all` (every
probe whole, every sample). They are measured side by side, a chunk of probes of one then
of the other, so both see the same minutes of the machine. After --warm probes each, the
files are read (the log checkpointed in); then again after --probes more each.

What grows without bound in the folded file is its folded points (the watch_points and
watch_texts tables and their index, read with SQLite's dbstat: bytes in use). The probes
kept whole are a window, not growth: the latest --keep, and those a step or a flapping
launch names while it is fresh (judge.watch.FRESH probes), so their number moves with the
machine's noise (a step on a noisy host keeps 3 more whole for a while). Printed: the
folded points' growth per 1000 probes (the target's figure), the whole probes then and
now, the bytes in use and on disk; and the same for `--keep all`, whose growth is all of
it, with the ratio of the two growths.

usage: python bench/watch_store.py [--mpi .venv] [--probes 100] [--warm 20] [--chunk 10]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_BYTES = 1_000_000  # per 1000 probes of the default set (issue 52)


def commscope(mpi: str, *args: str) -> None:
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    done = subprocess.run([str(ROOT / ".venv/bin/commscope"), *args, "--mpi", mpi],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"commscope {' '.join(args)}: exit {done.returncode}\n{done.stderr}")


FOLDED = ("watch_points", "watch_texts", "watch_points_by_probe",
          "sqlite_autoindex_watch_texts_1")


def sizes(db: Path) -> dict[str, int]:
    """The folded points' bytes in use, all bytes in use, the file's bytes (its log
    checkpointed into it) and the probes kept whole."""
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages, free, page = (con.execute(f"PRAGMA {p}").fetchone()[0]
                             for p in ("page_count", "freelist_count", "page_size"))
        folded = con.execute(
            f"SELECT sum(pgsize - unused) FROM dbstat WHERE name IN "
            f"({','.join('?' * len(FOLDED))})", FOLDED).fetchone()[0]
        whole = con.execute("SELECT count(DISTINCT json_extract(settings, '$.info.probe')) "
                            "FROM runs").fetchone()[0]
    return {"folded": folded or 0, "used": (pages - free) * page,
            "disk": db.stat().st_size, "whole": whole}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mpi", default=str(ROOT / ".venv"))
    ap.add_argument("--probes", type=int, default=100)
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--chunk", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plan = Path(tmp) / "probe.toml"
        commscope(args.mpi, "watch", "--default", str(plan))
        files = {"folded (default)": (Path(tmp) / "folded.db", []),
                 "--keep all": (Path(tmp) / "whole.db", ["--keep", "all"])}
        read: dict[str, list[dict[str, int]]] = {k: [] for k in files}
        for total in (args.warm, args.probes):
            for start in range(0, total, args.chunk):
                for label, (db, extra) in files.items():
                    count = min(args.chunk, total - start)
                    commscope(args.mpi, "watch", str(plan), "--count", str(count),
                              "--every", "0.1s", "--db", str(db), *extra)
            for label, (db, _) in files.items():
                read[label].append(sizes(db))
        print(f"watch store growth: the default probe set on this host, {args.mpi}; "
              f"{args.warm} probes to warm up, then {args.probes} measured, "
              f"in chunks of {args.chunk} alternated")
        (f0, f1), (w0, w1) = read["folded (default)"], read["--keep all"]
        folded = (f1["folded"] - f0["folded"]) / args.probes * 1000
        whole = (w1["used"] - w0["used"]) / args.probes * 1000
        for label, (a, b) in read.items():
            print(f"  {label:17s} probes whole {a['whole']:4d} -> {b['whole']:4d}; in use "
                  f"{a['used'] / 1e3:8.1f} -> {b['used'] / 1e3:8.1f} kB; on disk "
                  f"{a['disk'] / 1e3:8.1f} -> {b['disk'] / 1e3:8.1f} kB")
        print(f"  folded points: {f0['folded'] / 1e3:.1f} -> {f1['folded'] / 1e3:.1f} kB, "
              f"{folded / 1e6:.3f} MB per 1000 probes (target <= 1: "
              f"{'met' if folded <= TARGET_BYTES else 'NOT met'}); every probe whole: "
              f"{whole / 1e6:.1f} MB per 1000 probes, {whole / folded:.0f}x")


if __name__ == "__main__":
    main()
