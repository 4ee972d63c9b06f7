"""nccl-tests (and rccl-tests, the same format): the text table with out-of-place and
in-place columns, ended by '# Avg bus bandwidth', or the JSON that `-J FILE` writes
(field names from NVIDIA/nccl-tests src/util.cu, JSON file version 3). Times in us,
bandwidths in GB/s (10^9 bytes). One run per test in the file."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..system.errors import UserError
from . import ImportedRow, ImportedRun, bad, row
from .figures import checked, kind_of, label_of

STARTING = re.compile(r"^# Collective test starting: (\S+)")
VERSION = re.compile(r"^# nccl-tests version (\S+)|^rccl-tests: Version (\S+)")
RANK = re.compile(r"^#\s+Rank\s+\d+\s+Group")
# The header's first line (src/common.cu prints it first): older outputs, and those with a
# job's or a prompt's lines before them, start the test here, without a version line
THREADS = re.compile(r"^# nThread \d+")
TABLE = re.compile(r"^#\s+size\s+count\s+type\s+redop\s+root\s+(?:cpu)?time\s+algbw\s+busbw")
TRAILER = "# Avg bus bandwidth"
# Each side's column titles (src/util.cu, writeResultHeader), as commscope names them; the
# per-iteration ones (-I 1, per_iter_timing) after #wrong; out-of-place first, then in-place.
SIDE = {"time": "time_us", "algbw": "algbw_GBps", "busbw": "busbw_GBps", "#wrong": "wrong",
        "i_min": "iter_min_us", "i_max": "iter_max_us", "i_p99": "iter_p99_us",
        "i_cv%": "iter_cv_percent"}
# The columns after size: count, type, redop and root are kept in the header, not figures.
FIRST = ["count", "", "", "root"]
KERNELS = {"all_reduce_perf": "allreduce", "all_gather_perf": "allgather",
           "reduce_scatter_perf": "reduce_scatter_block", "alltoall_perf": "alltoall",
           "broadcast_perf": "bcast", "reduce_perf": "reduce", "gather_perf": "gather",
           "scatter_perf": "scatter", "sendrecv_perf": "sendrecv", "hypercube_perf": "hypercube"}
DEFINITION = ("out-of-place time: mean over iterations of one timed loop, until every rank's "
              "stream is done; algbw = S/t, busbw = algbw times the collective's bus factor "
              "(doc/PERFORMANCE.md); GB = 10^9 bytes")


def recognizes(text: str) -> bool:
    stripped = text.lstrip()
    return stripped.startswith("{") and '"results"' in text or \
        any(TABLE.match(line) for line in text.splitlines())


def parse(path: Path, text: str) -> list[ImportedRun]:
    if text.lstrip().startswith("{"):
        return [_json(path, text)]
    runs, current, said = [], None, None
    for number, line in enumerate(text.splitlines(), 1):
        # A test's header starts a run; src/util.cu prints its version line before
        # '# Collective test starting', rccl-tests after it
        fresh = current is None or current["done"]
        if fresh and any(p.match(line) for p in (STARTING, VERSION, THREADS, RANK, TABLE)) \
                or STARTING.match(line) and current["table"]:
            current = {"name": said, "version": "", "ranks": 0, "rows": [], "line": number,
                       "table": False, "done": False, "header": {}}
            runs.append(current)
        if STARTING.match(line):
            current["name"] = STARTING.match(line).group(1)
        elif VERSION.match(line):
            current["version"] = next(v for v in VERSION.match(line).groups() if v)
        elif RANK.match(line):
            current["ranks"] += 1
        elif TABLE.match(line):
            current["table"], current["names"] = True, _names(path, number, line)
        elif current is None or current["done"]:
            # text before the output: a job's header, a prompt, and mpirun's line, which
            # names the test where older outputs do not
            said = said if line.startswith("#") else next(
                (k for k in KERNELS if re.search(rf"\b{k}\b", line)), said)
        elif line.startswith(TRAILER):
            current["done"] = True
            # "%g %s": OK or FAILED after it where NCCL_TESTS_MIN_BW was set (src/util.cu)
            average, _, verdict = line.partition(":")[2].strip().partition(" ")
            checked(f"{path}:{number}", "Avg bus bandwidth", average, "bandwidth")
            current["header"]["avg_busbw_GBps"] = average
            if verdict:
                current["header"]["avg_busbw_check"] = verdict.strip()
        elif current["table"] and not current["done"] and line.strip() \
                and not line.startswith("#"):
            tokens = line.split()  # a timestamp (-Z 1: date and time) ends the line
            current["rows"].append(row(path, number, current["names"],
                                       tokens[:1 + len(current["names"])]))
    return [_run(path, r) for r in runs]


def _names(path: Path, number: int, line: str) -> list[str]:
    """The table's columns after size, from its header line."""
    titles = line.lstrip("#").split()[5:]
    if "cputime" in titles:
        raise bad(path, number, "nccl-tests run with -C 1: its 'cputime' columns are the "
                                "host's CPU time, not the collective's: not read",
                  "a run without -C (time, algbw and busbw columns)")
    titles = titles[:-1] if titles[-1:] == ["timestamp"] else titles
    half = len(titles) // 2
    return FIRST + [SIDE[t] if i < half else f"inplace_{SIDE[t]}" for i, t in enumerate(titles)]


def _kernel(path: Path, name: str | None, line: int) -> tuple[str, str]:
    name = name or next((k for k in KERNELS if k in path.name), None)
    if name is None:
        raise bad(path, line, "nccl-tests output that does not name its test (no '# Collective "
                              "test starting:'); put the test's name (all_reduce_perf, ...) in "
                              "the file name")
    base = name.rsplit("/", 1)[-1]
    base = next((k for k in KERNELS if base.startswith(k)), base)
    return base, KERNELS.get(base, base)


def _run(path: Path, r: dict) -> ImportedRun:
    if not r["rows"] or not r["done"]:
        missing = "rows" if not r["rows"] else repr(TRAILER)
        raise bad(path, r["line"], f"nccl-tests output without {missing} (truncated?)",
                  f"the whole output: a row for each size, then {TRAILER!r}")
    benchmark, kernel = _kernel(path, r["name"], r["line"])
    return ImportedRun("nccl-tests", r["version"], benchmark, kernel, r["ranks"] or None,
                       "time_us", DEFINITION, tuple(r["rows"]), r["header"])


def _json(path: Path, text: str) -> ImportedRun:
    try:
        doc = json.loads(text)
        results = doc["results"]
        rows = tuple(_json_row(path, i, item) for i, item in enumerate(results))
        program = doc.get("args", [None])[0]
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise UserError(f"{path}: not a complete nccl-tests -J JSON file ({exc}); expected "
                        "OSU, IMB or nccl-tests output") from None
    if not rows:
        raise bad(path, 1, "nccl-tests JSON without results (truncated?)",
                  "a 'results' list with an item for each size")
    benchmark, kernel = _kernel(path, program, 1)
    average = (doc.get("average_bus_bandwidth") or {}).get("bandwidth", "")
    if average != "":
        checked(f"{path}: average_bus_bandwidth", "bandwidth", average, "bandwidth",
                "fix or delete the value")
    header = {"nccl_version": str(doc.get("nccl_version", "")), "avg_busbw_GBps": str(average)}
    return ImportedRun("nccl-tests", f"JSON {doc.get('version', '')}", benchmark, kernel,
                       len(doc.get("devices") or []) or None, "time_us", DEFINITION, rows, header)


def _json_row(path: Path, index: int, item: dict) -> ImportedRow:
    """One result; its figures checked as a text row's are (figures.py). Python's json
    reads NaN, Infinity and 1e999 as floats: they are refused here, not stored."""
    where, figures = f"{path}: results[{index}]", {}
    for prefix, side in (("", item.get("out_of_place")), ("inplace_", item.get("in_place"))):
        for name, key in zip(("time_us", "algbw_GBps", "busbw_GBps", "wrong"),
                             ("time", "alg_bw", "bus_bw", "nwrong")):
            if side and side.get(key) is not None:
                figures[prefix + name] = checked(where, label_of(prefix + name), side[key],
                                                 kind_of(name), "fix or delete the result")
    if "time_us" not in figures:
        raise KeyError("out_of_place.time")
    size = checked(where, "size", item["size"], "size", "fix or delete the result")
    return ImportedRow(int(size), figures, {k: repr(v) for k, v in figures.items()})
