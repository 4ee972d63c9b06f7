"""Intel MPI Benchmarks, IMB-MPI1: a banner '#    Intel(R) MPI Benchmarks <version>, MPI-1
part', then per benchmark and process count a block '# Benchmarking <name>' /
'# #processes = <p>' with one table; the output ends with '# All processes entering
MPI_Finalize'. One run per block (with -multi 1, per group); IMB-EXT, -RMA,
-NBC and -IO blocks are refused."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from . import ImportedRun, bad, row
from .figures import checked

# "Intel(R) MPI Benchmarks 2021.11, MPI-1 part"; IMB 4.x and 2018 print "Intel (R)". Its
# part names the program (src_c/IMB_g_info.c): "MPI-2 part" IMB-EXT, "MPI-RMA part" IMB-RMA.
BANNER = re.compile(r"^#\s+Intel ?\(R\) MPI Benchmarks (.+?),\s+(.*?)\s*$")
MPI1 = "MPI-1 part"
# -multi (src_c/IMB_output.c, IMB_print_header and IMB_show_procids): 'Multi-' before the
# name, a groups line for '# #processes', and with -multi 1 a Group column before #bytes
BLOCK = re.compile(r"^# Benchmarking (\S+)\s*$")
PROCESSES = re.compile(r"^# #processes = (\d+)")
GROUPS = re.compile(r"^# \( (\d+) groups of (\d+) processes")
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
    version, part, header, blocks = "", MPI1, {}, []
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        banner, titles = BANNER.match(line), line.split()
        if line.startswith(END):
            break  # a log's text after the output is not IMB's
        if banner:
            version, part = banner.groups()
        elif BLOCK.match(line):
            blocks.append(_block(path, number, BLOCK.match(line).group(1), part))
        elif not blocks:
            if line.startswith("# ") and " : " in line:
                key, _, value = line[2:].partition(" : ")
                header[key.strip()] = value.strip()
        elif PROCESSES.match(line):
            blocks[-1]["ranks"] = int(PROCESSES.match(line).group(1))
        elif GROUPS.match(line):
            groups, blocks[-1]["ranks"] = map(int, GROUPS.match(line).groups())
            blocks[-1]["header"]["groups"] = str(groups)
        elif titles[:1] in (["#repetitions"], ["#bytes"], ["Group"]):
            grouped = titles[0] == "Group"  # -multi 1: a row per group and size
            sized = titles[grouped] == "#bytes"
            names = [COLUMNS.get(t) for t in titles[grouped + sized:]]
            if None in names:
                raise bad(path, number, f"unknown IMB column in {line.strip()!r}")
            blocks[-1].update(names=names, sized=sized, grouped=grouped)
        elif titles and titles[0][:1].isdigit() and blocks[-1]["names"] is not None:
            # a row; a line of other text among them (an MPI library's warning, a closing
            # markdown fence) is not IMB's
            b = blocks[-1]
            group = checked(f"{path}:{number}", "Group", titles.pop(0), "whole") \
                if b["grouped"] else None
            b["rows"].append((group, row(path, number, b["names"], titles,
                                         0 if b["sized"] else None)))
    if blocks and not any(line.startswith(END) for line in lines):
        raise bad(path, len(lines), f"IMB output without its last line {END!r} (truncated?)")
    return [run for b in blocks for run in _runs(path, version.strip(), header, b)]


def _block(path: Path, number: int, name: str, part: str) -> dict:
    """A '# Benchmarking NAME' block, refused at once where it is no IMB-MPI1 benchmark."""
    if not part.startswith(MPI1):
        raise bad(path, number, f"IMB benchmark {name} of the {part!r} (IMB-EXT, IMB-RMA, "
                                "IMB-NBC or IMB-IO): not read", f"IMB-MPI1 output ({MPI1!r})")
    if name.removeprefix("Multi-") not in KERNELS:
        raise bad(path, number, f"an IMB benchmark commscope does not know: {name}")
    return {"name": name, "line": number, "rows": [], "ranks": None, "names": None,
            "header": {}}


def _runs(path: Path, version: str, header: dict, b: dict) -> list[ImportedRun]:
    """The block's run, or with -multi 1 one run per group, in the groups' order."""
    if not b["rows"]:
        raise bad(path, b["line"], f"IMB block {b['name']} without a table row (truncated?)",
                  "a row of figures for each size under the block's column titles")
    groups = dict.fromkeys(group for group, _ in b["rows"])
    return [_run(version, {**header, **b["header"], **({} if g is None else {"group": f"{g:g}"})},
                 b, [r for group, r in b["rows"] if group == g]) for g in groups]


def _run(version: str, header: dict, b: dict, rows: list) -> ImportedRun:
    metric = next(m for m in ("t_max_us", "t_us", "bandwidth_MBps") if m in b["names"])
    factor, note = _units(version)
    rows = tuple(replace(r, figures={k: v * factor if k == "bandwidth_MBps" else v
                                     for k, v in r.figures.items()}) for r in rows)
    known = "bandwidth_MBps" in b["names"] and note
    kernel = KERNELS[b["name"].removeprefix("Multi-")]
    return ImportedRun("imb", version, b["name"], kernel, b["ranks"], metric,
                       DEFINITIONS[metric], rows,
                       {**header, **({"units": note} if known and factor != 1 else {})},
                       note if known and factor == 1 else None)
