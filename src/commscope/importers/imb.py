"""Intel MPI Benchmarks, IMB-MPI1: a banner '#    Intel(R) MPI Benchmarks <version>, MPI-1
part', then per benchmark and process count a block '# Benchmarking <name>' /
'# #processes = <p>' with one table; the output ends with '# All processes entering
MPI_Finalize'. One run per block."""

from __future__ import annotations

import re
from pathlib import Path

from . import ImportedRun, bad, row

BANNER = re.compile(r"^#\s+Intel\(R\) MPI Benchmarks (\S+?),?\s")
BLOCK = re.compile(r"^# Benchmarking (\S+)\s*$")
PROCESSES = re.compile(r"^# #processes = (\d+)")
END = "# All processes entering MPI_Finalize"
# IMB's column titles, as commscope names them. Mbytes/sec: MB = 10^6 bytes
# (src_c/IMB_output.c: MEGA = 1/1e6).
COLUMNS = {"#repetitions": "repetitions", "t[usec]": "t_us", "t_min[usec]": "t_min_us",
           "t_max[usec]": "t_max_us", "t_avg[usec]": "t_avg_us", "Mbytes/sec": "bandwidth_MBps",
           "Msg/sec": "messages_per_s", "defects": "defects"}
KERNELS = {"PingPong": "pingpong", "PingPing": "pingping", "Sendrecv": "sendrecv",
           "Exchange": "exchange", "Uniband": "bw", "Biband": "bibw", "Allreduce": "allreduce",
           "Bcast": "bcast", "Allgather": "allgather", "Allgatherv": "allgatherv",
           "Alltoall": "alltoall", "Alltoallv": "alltoallv", "Reduce": "reduce",
           "Reduce_scatter": "reduce_scatter", "Reduce_scatter_block": "reduce_scatter_block",
           "Gather": "gather", "Gatherv": "gatherv", "Scatter": "scatter",
           "Scatterv": "scatterv", "Barrier": "barrier", "Reduce_local": "reduce_local"}
DEFINITIONS = {
    "t_us": "one timed loop of n repetitions divided by n (PingPong: and by 2, half the "
            "round trip)",
    "t_max_us": "each rank's mean over one timed loop of repetitions; t_min, t_max and t_avg "
                "over ranks",
    "bandwidth_MBps": "message bytes over the slowest rank's time per message; "
                      "MB = 10^6 bytes"}


def recognizes(text: str) -> bool:
    return any(BLOCK.match(line) for line in text.splitlines())


def parse(path: Path, text: str) -> list[ImportedRun]:
    version, header, blocks = "", {}, []
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        banner = BANNER.match(line)
        if banner:
            version = banner.group(1)
        elif BLOCK.match(line):
            blocks.append({"name": BLOCK.match(line).group(1), "line": number, "rows": [],
                           "ranks": None, "names": None})
        elif not blocks:
            if line.startswith("# ") and " : " in line:
                key, _, value = line[2:].partition(" : ")
                header[key.strip()] = value.strip()
        elif PROCESSES.match(line):
            blocks[-1]["ranks"] = int(PROCESSES.match(line).group(1))
        elif line.strip().startswith("#repetitions") or line.strip().startswith("#bytes"):
            titles = line.split()
            sized = titles[0] == "#bytes"
            names = [COLUMNS.get(t) for t in titles[1:] if sized] if sized \
                else [COLUMNS.get(t) for t in titles]
            if None in names:
                raise bad(path, number, f"unknown IMB column in {line.strip()!r}")
            blocks[-1]["names"], blocks[-1]["sized"] = names, sized
        elif line.strip() and not line.startswith("#") and blocks[-1]["names"] is not None:
            b = blocks[-1]
            b["rows"].append(row(path, number, b["names"], line.split(),
                                 0 if b["sized"] else None))
    if blocks and not any(line.startswith(END) for line in lines):
        raise bad(path, len(lines), f"IMB output without its last line {END!r} (truncated?)")
    return [_run(path, version, header, b) for b in blocks]


def _run(path: Path, version: str, header: dict, b: dict) -> ImportedRun:
    if not b["rows"]:
        raise bad(path, b["line"], f"IMB block {b['name']} without a table row (truncated?)",
                  "a row of figures for each size under the block's column titles")
    if b["name"] not in KERNELS:
        raise bad(path, b["line"], f"an IMB benchmark commscope does not know: {b['name']}")
    metric = next(m for m in ("t_max_us", "t_us", "bandwidth_MBps") if m in b["names"])
    return ImportedRun("imb", version, b["name"], KERNELS[b["name"]], b["ranks"], metric,
                       DEFINITIONS[metric], tuple(b["rows"]), dict(header))
