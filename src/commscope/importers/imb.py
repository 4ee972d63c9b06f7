"""Intel MPI Benchmarks, IMB-MPI1: a banner '#    Intel(R) MPI Benchmarks <version>, MPI-1
part', then per benchmark and process count a block '# Benchmarking <name>' /
'# #processes = <p>' with one table; the output ends with '# All processes entering
MPI_Finalize'. One run per block."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from . import ImportedRun, bad, row

# "Intel(R) MPI Benchmarks 2021.11, MPI-1 part"; IMB 4.x and 2018 print "Intel (R)"
BANNER = re.compile(r"^#\s+Intel ?\(R\) MPI Benchmarks (.+?),\s")
BLOCK = re.compile(r"^# Benchmarking (\S+)\s*$")
PROCESSES = re.compile(r"^# #processes = (\d+)")
END = "# All processes entering MPI_Finalize"
# IMB's column titles, as commscope names them. Mbytes/sec: MB = 10^6 bytes from IMB 2018
# (src_c/IMB_output.c: MEGA = 1.0 / 1e6), 2^20 bytes before (IMB 4.1: 4194304 B in
# 2967.49 us printed 1347.94), converted to 10^6 here.
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


MEBI = 2**20 / 1e6  # an IMB 4.x MB/s in 10^6 bytes a second
FIRST_DECIMAL = 2018  # the first IMB whose MB is 10^6 bytes


def _units(version: str) -> tuple[float, str | None]:
    """The factor from the printed Mbytes/sec to 10^6 bytes a second, and the note that
    says so (None: printed so already)."""
    year = re.match(r"\d+", version)
    if year is None:
        return 1.0, ("IMB's version not printed (no banner): Mbytes/sec read as 10^6 bytes "
                     "a second, as IMB 2018 and later print it (IMB 4.x printed 2^20)")
    if int(year.group()) < FIRST_DECIMAL:
        return MEBI, (f"Mbytes/sec of IMB {version} is 2^20 bytes a second: stored as 10^6 "
                      f"(x{MEBI:g})")
    return 1.0, None


def recognizes(text: str) -> bool:
    return any(BLOCK.match(line) for line in text.splitlines())


def parse(path: Path, text: str) -> list[ImportedRun]:
    version, header, blocks = "", {}, []
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        banner = BANNER.match(line)
        if line.startswith(END):
            break  # a log's text after the output is not IMB's
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
    return [_run(path, version.strip(), header, b) for b in blocks]


def _run(path: Path, version: str, header: dict, b: dict) -> ImportedRun:
    if not b["rows"]:
        raise bad(path, b["line"], f"IMB block {b['name']} without a table row (truncated?)",
                  "a row of figures for each size under the block's column titles")
    if b["name"] not in KERNELS:
        raise bad(path, b["line"], f"an IMB benchmark commscope does not know: {b['name']}")
    metric = next(m for m in ("t_max_us", "t_us", "bandwidth_MBps") if m in b["names"])
    factor, note = _units(version)
    rows = tuple(replace(r, figures={k: v * factor if k == "bandwidth_MBps" else v
                                     for k, v in r.figures.items()}) for r in b["rows"])
    known = "bandwidth_MBps" in b["names"] and note
    return ImportedRun("imb", version, b["name"], KERNELS[b["name"]], b["ranks"], metric,
                       DEFINITIONS[metric], rows,
                       {**header, **({"units": note} if known and factor != 1 else {})},
                       note if known and factor == 1 else None)
