"""OSU Micro-Benchmarks 5.x to 7.x: a banner '# OSU MPI <name> Test vX.Y', an optional
'# Datatype:' line, a header '# Size  <column>  ...', then one row per size. Several
outputs may follow each other in one file (one run each)."""

from __future__ import annotations

import re
from pathlib import Path

from . import ImportedRun, bad, row

# "-CUDA", "-ROCM", "-OPENACC" after MPI: a run with device buffers (osu_util.c, print_header)
BANNER = re.compile(r"^# OSU (?:MPI(?:-(?P<accel>\w+))? )?(?P<title>.+?) "
                    r"Test v(?P<version>\d[\w.]*)\s*$")
# Where the buffers were (`osu_latency D D`): printed only with an accelerator, before '# Size'
BUFFERS = re.compile(r"^# Send Buffer on (.+?) and Receive Buffer on (.+?)\s*$")
# osu_mbw_mr's '# [ pairs: %d ] [ window size: %d ]' (osu_mbw_mr.c): half its ranks
PAIRS = re.compile(r"^# \[ pairs: (\d+) \]")
# -z (OSU 7.4, osu_util.c print_header): one column per percentile asked, 50,90,99 by default
TAIL = re.compile(r"^P(\d+) Tail (?:Lat\(us\)|BW\(MB/s\))$")
# OSU's column titles, as commscope names them (MB = 10^6 bytes in OSU 5.x to 7.x).
COLUMNS = {"Latency (us)": "latency_us", "Avg Latency(us)": "latency_us",
           "Min Latency(us)": "min_latency_us", "Max Latency(us)": "max_latency_us",
           "Iterations": "iterations", "Bandwidth (MB/s)": "bandwidth_MBps",
           "Messages/s": "messages_per_s", "MB/s": "bandwidth_MBps",
           "Validation": "validation"}
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


def _columns(title_line: str) -> list[str | None]:
    """commscope's names of the header's column titles after '# Size' (separated by two or
    more spaces); None for a title it does not know. A tail column is p<N>_latency_us or
    p<N>_bandwidth_MBps."""
    names = []
    for title in re.split(r"\s{2,}", title_line.lstrip("#").strip())[1:]:
        tail = TAIL.match(title)
        unit = "bandwidth_MBps" if "BW" in title else "latency_us"
        names.append(f"p{tail.group(1)}_{unit}" if tail else COLUMNS.get(title))
    return names


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
                current["names"] = _columns(line)
                if None in current["names"]:
                    raise bad(path, number, f"unknown OSU column in {line.strip()!r}")
            elif PAIRS.match(line):
                current["header"]["pairs"] = PAIRS.match(line).group(1)
            elif BUFFERS.match(line):
                current["header"].update(zip(("Send Buffer", "Receive Buffer"),
                                             BUFFERS.match(line).groups()))
            elif ":" in line:
                key, _, value = line.lstrip("# ").partition(":")
                current["header"][key.strip()] = value.strip().rstrip(".")
        elif "names" not in current:
            raise bad(path, number, "a row before the OSU table's '# Size' header")
        else:
            current["rows"].append(_row(path, number, current, line.split()))
    return [_finish(path, r) for r in runs]


def _row(path: Path, number: int, current: dict, tokens: list[str]):
    """A table line; with -c, its Validation token (osu_util.h: VALIDATION_STATUS, "Pass"
    or "Fail") is checked, not stored as a figure: a size that failed is refused."""
    names = current["names"]
    if "validation" in names:
        at = names.index("validation") + 1  # after the size
        if len(tokens) > at and tokens[at] != "Pass":
            raise bad(path, number, f"OSU's validation of {tokens[0]} B reads "
                                    f"{tokens[at]!r}: its figures are of a wrong transfer",
                      "a run whose Validation column reads Pass (check the MPI and its "
                      "buffers, then run the benchmark again)")
        current["header"]["Validation"] = "Pass"
        names, tokens = names[:at - 1] + names[at:], tokens[:at] + tokens[at + 1:]
    return row(path, number, names, tokens)


def _start(path: Path, number: int, banner) -> dict:
    title, accel = banner.group("title"), banner.group("accel")
    if title not in TESTS:
        raise bad(path, number, f"an OSU test commscope does not know: {title!r}")
    return {"title": title, "version": banner.group("version"), "rows": [], "line": number,
            "header": {"Accelerator": accel} if accel else {}}


def _finish(path: Path, r: dict) -> ImportedRun:
    if not r["rows"]:
        raise bad(path, r["line"], f"OSU {r['title']} test without a row (truncated?)",
                  "a row of figures for each size under its '# Size' header")
    program, kernel = TESTS[r["title"]]
    metric = "bandwidth_MBps" if "bandwidth_MBps" in r["names"] else r["names"][0]
    # OSU prints no count but osu_mbw_mr's pairs
    ranks = 2 if kernel in ("pingpong", "bw", "bibw") else \
        2 * int(r["header"]["pairs"]) if "pairs" in r["header"] else None
    return ImportedRun("osu", r["version"], program, kernel, ranks, metric,
                       DEFINITIONS.get(metric, ""), tuple(r["rows"]), r["header"])
