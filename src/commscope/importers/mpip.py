"""An mpiP report (github LLNL/mpiP 3.5: doc/UserGuide.md, "mpiP Output"; the layout is
report.c's) read into a Profile. mpiP's verbose report, its default, holds:

    "@ mpiP", "@ Command : ...", "@ Version : 3.5.0", one "@ MPI Task Assignment : R host"
        per rank                                                  (the header)
    @--- MPI Time (seconds)          Task AppTime MPITime MPI%, a line per task and "*"
    @--- Callsite Time statistics (all, milliseconds): N
                                     Name Site Rank Count Max Mean Min App% MPI%
    @--- Callsite Message Sent statistics (all, sent bytes)
                                     Name Site Rank Count Max Mean Min Sum
    @--- Aggregate Collective Time (top twenty, descending)       (MPIP=-y)
    @--- Aggregate Point-To-Point Sent (top twenty, descending)   (MPIP=-p)
                                     Call, MPI Time % or MPI Sent %, Comm Size, Data Size
    @--- End of Report

mpiP 3.4.1 prints the same sections (its "Aggregate Time" lacks the Count column); MPIP -e
prints %f for %g (report.c, mpiP_Report_Formats), -l ("Report generation : Collective")
the same sections task by task, -k 0 no "Callsites" section. -c prints a concise report
and -d leaves the callsite sections out (util.c, mpiPi_getenv): both are refused.

A rank of "*" is mpiP's aggregate of a call site over ranks: left out, the ranks' own
lines are the rows. The "Aggregate Time (top twenty...)" section is left out too: it
holds the same times summed over ranks, for twenty sites at most.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path

from .figures import checked
from ..profiles import Profile, Row, bucket
from .reading import merged, mpi_call, refused

BANNER = "@ mpiP"
EXPECTED = "an mpiP report (verbose, with its callsite sections: MPIP without -c or -d)"
HEADING = re.compile(r"^@--- (.*?) -*$")
INTRO = re.compile(r"^@ (\S.*?)\s*: ?(.*)$")
TIME = "Callsite Time statistics (all, milliseconds)"
SENT = "Callsite Message Sent statistics (all, sent bytes)"
CONCISE = "Callsite Time statistics (all callsites, milliseconds)"
HISTOGRAMS = ("Aggregate Collective Time (top twenty, descending)",
              "Aggregate Point-To-Point Sent (top twenty, descending)")
COLUMN_HEADS = {"Task", "Name", "Call", "ID"}
# %g and %d as printed ("-nan" where mpiP divides by a zero time); "*": all ranks
FIGURE = re.compile(r"-?([\d.]+(e[+-]?\d+)?|nan|inf)|\*|-")


def recognizes(text: str) -> bool:
    return text.lstrip().split("\n", 1)[0].rstrip() == BANNER


def parse(path: Path, text: str) -> Profile:
    try:
        return _profile(path, text)
    except ValueError as exc:  # a count or size that is not one
        raise refused(path, f"a figure that is not a number ({exc})", EXPECTED) from None


def _profile(path: Path, text: str) -> Profile:
    header, sections = _split(text)
    if "End of Report" not in sections:
        raise refused(path, "no '@--- End of Report' heading: the report is cut short",
                      EXPECTED)
    if CONCISE in sections:
        raise refused(path, f"a concise report (MPIP -c): its '{CONCISE}' holds no rank's "
                            "lines (record again without -c; -v writes a verbose file too)",
                      EXPECTED)
    if TIME not in sections:
        raise refused(path, f"no '{TIME}' section (MPIP -d leaves it out: record again "
                            "without -d)", EXPECTED)
    numbered = [(n, t) for n, t in _table(path, sections, "MPI Time (seconds)", 4)
                if t[0] != "*"]
    tasks = [t for _, t in numbered]
    ranks = len(header.get("MPI Task Assignment", ())) or len(tasks)
    wrong = next((i for i, t in enumerate(tasks) if t[0] != str(i)), None)
    if not tasks or len(tasks) != ranks or wrong is not None:
        where = "" if wrong is None else f", task {tasks[wrong][0]} where {wrong} belongs"
        raise refused(path, f"'MPI Time (seconds)' lists {len(tasks)} tasks for {ranks} "
                            f"ranks{where}", EXPECTED)
    sent = {(t[0], t[1], t[2]): (_printed(_figure(path, n, "Mean", t[5], "bytes"), t[5]),
                                 _figure(path, n, "Sum", t[7], "bytes"))
            for n, t in _table(path, sections, SENT, 8)
            if t[2] != "*"}  # (mean, sum) of the bytes a site sent, per rank
    comm_sizes = _comm_sizes(path, sections, ranks)
    rows = []
    for number, (name, site, rank, count, _, mean_ms, *_) in _table(path, sections, TIME, 9):
        if rank == "*":
            continue
        if not 0 <= int(rank) < ranks:
            raise refused(f"{path}:{number}", f"rank {rank} outside the {ranks} tasks",
                          EXPECTED)
        # mpiP keeps a site's bytes per rank as a mean and a sum only: the mean's bucket
        # stands for all its calls. A site without a line sent nothing mpiP counts (a
        # receive's bytes it does not record): its bytes are unknown.
        mean, total = sent.get((name, site, rank), (0, None))
        count = int(_figure(path, number, "Count", count, "whole"))
        mean_ms = _figure(path, number, "Mean", mean_ms, "time spent")
        rows.append(Row(mpi_call(name), comm_sizes.get(name, ranks), bucket(mean),
                        None, count, count * mean_ms / 1e3, int(rank),
                        None if total is None else round(total)))
    if not rows:
        raise refused(path, f"'{TIME}' has no line of a rank", EXPECTED)
    program = tuple(header.get("Command", [""])[0].split()) or (str(path),)
    wall = tuple(_figure(path, n, "AppTime", t[1], "time") for n, t in numbered)
    return Profile(program, ranks, wall, merged(rows),
                   {"tool": "mpip", "version": header.get("Version", [""])[0],
                    "file": str(path)})


def _figure(path: Path, number: int, column: str, token: str, kind: str) -> float:
    """A figure the profile keeps, checked as every imported figure is (figures.py); the
    percentages, which mpiP prints as -nan where a time is zero, are not kept."""
    return checked(f"{path}:{number}", column, token, kind)


def _printed(value: float, token: str) -> int:
    """The bytes of a mean as mpiP printed it, read as the largest value that prints so,
    so that a power of two keeps its bucket: %9.4g keeps 4 significant digits (16384 as
    1.638e+04), MPIP -e's %9.4f 4 decimals (4095.5 as 4095.5000, not 4096). %g drops
    trailing zeros, so the finer of the two places is the last one printed."""
    if value <= 0:
        return 0
    mantissa, _, exponent = token.lower().partition("e")
    last = min(math.floor(math.log10(value)) - 3,
               int(exponent or 0) - len(mantissa.partition(".")[2]))
    return int(value + 0.5 * 10 ** last)


def _split(text: str) -> tuple[dict[str, list[str]], dict[str, list[tuple[int, str]]]]:
    """The header's "@ Key : value" lines, and each section's numbered lines by its title
    (without a count such as ": 807")."""
    header: dict[str, list[str]] = defaultdict(list)
    sections: dict[str, list[tuple[int, str]]] = {}
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        heading = HEADING.match(line)
        if heading:
            current = sections.setdefault(re.sub(r": \d+$", "", heading.group(1)), [])
        elif current is None and INTRO.match(line):
            key, value = INTRO.match(line).groups()
            header[key].append(value.strip())
        elif current is not None and line.strip() and set(line.strip()) != {"-"}:
            current.append((number, line))
    return header, sections


def _table(path: Path, sections: dict, title: str, width: int):
    """The data lines of a section, each (line number, its `width` tokens); a line of
    another width is a cut or foreign file."""
    for number, line in sections.get(title, ()):
        tokens = line.split()
        if tokens[0] in COLUMN_HEADS or line.startswith("No "):
            continue
        if len(tokens) != width:
            raise refused(f"{path}:{number}", f"'{title}' has {len(tokens)} columns here, "
                          f"not {width}: {line.strip()!r} (truncated?)", EXPECTED)
        if not all(FIGURE.fullmatch(t) for t in tokens[1:]):
            raise refused(f"{path}:{number}", f"'{title}' has a figure that is not a "
                          f"number: {line.strip()!r}", EXPECTED)
        yield number, tokens


def _comm_sizes(path: Path, sections: dict, ranks: int) -> dict[str, int]:
    """mpiP does not say which communicator a call site used, so a call is taken over all
    `ranks` unless a histogram puts most of the call's share in a bin of communicator
    sizes (mpiP's bins: 0-7, 8-15, 16-31...: mpiP-stats.c) that does not hold the task
    count; then the bin's largest power of two stands for its size."""
    share: dict[tuple, float] = defaultdict(float)
    for title in HISTOGRAMS:
        for _, (call, percent, low, _, high, *_) in _table(path, sections, title, 8):
            share[(call, int(low), int(high))] += float(percent)
    most: dict[str, tuple[int, int]] = {}
    for (call, low, high), _ in sorted(share.items(), key=lambda kv: (kv[1], kv[0])):
        most[call] = (low, high)  # the largest share last
    return {call: ranks if low <= ranks <= high else bucket(high)
            for call, (low, high) in most.items()}
