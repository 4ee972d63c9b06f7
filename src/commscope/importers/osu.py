"""OSU Micro-Benchmarks 5.x to 7.x: a banner '# OSU MPI <name> Test vX.Y', an optional
'# Datatype:' line, a header '# Size  <column>  ...', then one row per size. Several
outputs may follow each other in one file (one run each)."""

from __future__ import annotations

import re
from pathlib import Path

from . import ImportedRun, bad, row

BANNER = re.compile(r"^# OSU (?:MPI(?:-\w+)? )?(.+?) Test v(\d[\w.]*)\s*$")
# OSU's column titles, as commscope names them (MB = 10^6 bytes in OSU 5.x to 7.x).
COLUMNS = {"Latency (us)": "latency_us", "Avg Latency(us)": "latency_us",
           "Min Latency(us)": "min_latency_us", "Max Latency(us)": "max_latency_us",
           "Iterations": "iterations", "Bandwidth (MB/s)": "bandwidth_MBps",
           "Messages/s": "messages_per_s", "MB/s": "bandwidth_MBps",
           "Validation": "validation", "P50 Tail Lat(us)": "p50_latency_us",
           "P90 Tail Lat(us)": "p90_latency_us", "P99 Tail Lat(us)": "p99_latency_us"}
# The benchmark's title in the banner -> (osu program, commscope kernel).
TESTS = {"Latency": ("osu_latency", "pingpong"), "Bandwidth": ("osu_bw", "bw"),
         "Bi-Directional Bandwidth": ("osu_bibw", "bibw"),
         "Multiple Bandwidth / Message Rate": ("osu_mbw_mr", "mbw_mr"),
         "Allreduce Latency": ("osu_allreduce", "allreduce"),
         "Broadcast Latency": ("osu_bcast", "bcast"), "Reduce Latency": ("osu_reduce", "reduce"),
         "Allgather Latency": ("osu_allgather", "allgather"),
         "All-to-All Personalized Exchange Latency": ("osu_alltoall", "alltoall"),
         "All-to-All Latency": ("osu_alltoall", "alltoall"),
         "Gather Latency": ("osu_gather", "gather"), "Scatter Latency": ("osu_scatter", "scatter"),
         "Reduce_scatter Latency": ("osu_reduce_scatter", "reduce_scatter"),
         "Barrier Latency": ("osu_barrier", "barrier")}
DEFINITIONS = {
    "latency_us": "mean over iterations of each iteration's time, every iteration timed by "
                  "its own MPI_Wtime reads (osu_latency: half the round trip); collectives: "
                  "each rank's mean, then the mean over ranks",
    "bandwidth_MBps": "message bytes x window x iterations over the summed window times, each "
                      "window timed with its acknowledgement; MB = 10^6 bytes"}


def recognizes(text: str) -> bool:
    return any(BANNER.match(line) for line in text.splitlines())


def _columns(title_line: str) -> list[str]:
    """The header's column titles after '# Size' (separated by two or more spaces)."""
    titles = re.split(r"\s{2,}", title_line.lstrip("#").strip())
    return titles[1:]


def parse(path: Path, text: str) -> list[ImportedRun]:
    runs, current, lines = [], None, text.splitlines()
    for number, line in enumerate(lines, 1):
        banner = BANNER.match(line)
        if banner:
            current = _start(path, number, banner)
            runs.append(current)
        elif current is None or not line.strip():
            continue
        elif current["rows"] and not re.match(r"\s*\d", line):
            current = None  # the table ended: a log's text after it
        elif line.startswith("#"):
            if line.startswith("# Size"):
                current["names"] = [COLUMNS.get(t) for t in _columns(line)]
                if None in current["names"]:
                    raise bad(path, number, f"unknown OSU column in {line.strip()!r}")
            elif ":" in line:
                key, _, value = line.lstrip("# ").partition(":")
                current["header"][key.strip()] = value.strip().rstrip(".")
        elif "names" not in current:
            raise bad(path, number, "a row before the OSU table's '# Size' header")
        else:
            current["rows"].append(row(path, number, current["names"], line.split()))
    return [_finish(path, r) for r in runs]


def _start(path: Path, number: int, banner) -> dict:
    title, version = banner.group(1), banner.group(2)
    if title not in TESTS:
        raise bad(path, number, f"an OSU test commscope does not know: {title!r}")
    return {"title": title, "version": version, "header": {}, "rows": [], "line": number}


def _finish(path: Path, r: dict) -> ImportedRun:
    if not r["rows"]:
        raise bad(path, r["line"], f"OSU {r['title']} test without a row (truncated?)",
                  "a row of figures for each size under its '# Size' header")
    program, kernel = TESTS[r["title"]]
    metric = "bandwidth_MBps" if "bandwidth_MBps" in r["names"] else r["names"][0]
    ranks = 2 if kernel in ("pingpong", "bw", "bibw") else None  # OSU prints no count
    return ImportedRun("osu", r["version"], program, kernel, ranks, metric,
                       DEFINITIONS.get(metric, ""), tuple(r["rows"]), r["header"])
