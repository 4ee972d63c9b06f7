"""Open MPI's coll/tuned dynamic rules file, as Open MPI 5.0 reads it
(ompi/mca/coll/tuned/coll_tuned_dynamic_file.c) with coll_tuned_use_dynamic_rules 1
and coll_tuned_dynamic_rules_filename FILE.

The file is whitespace-separated numbers; '#' starts a comment to the end of the line.
A first line `rule-file-version-2` lets a rule carry a fifth number, max_requests.
Then: the number of collectives; per collective its id (the COLLTYPE enumeration of
ompi/mca/coll/base/coll_base_functions.h) and the number of communicator sizes; per
size the size and its number of rules; per rule `msgsize algorithm faninout segsize
[max_requests]`, msgsize ascending from 0. A call takes the last communicator size at
or below its own (the first when none is) and, there, the last rule at or below its
message size; algorithm 0 is the library's own fixed rules. The message size is the
datatype's size times the count, times the communicator size for allgather and alltoall
(coll_tuned_decision_dynamic.c).
"""

from __future__ import annotations

import re
from pathlib import Path

from ...system.errors import UserError
from ..tune import Range
from . import Rules

# COLLTYPE values (coll_base_functions.h, Open MPI 5.0).
IDS = {"allgather": 0, "allgatherv": 1, "allreduce": 2, "alltoall": 3, "alltoallv": 4,
       "barrier": 6, "bcast": 7, "exscan": 8, "gather": 9, "gatherv": 10, "reduce": 11,
       "reduce_scatter": 12, "reduce_scatter_block": 13, "scan": 14, "scatter": 15,
       "scatterv": 16}
PER_PEER = ("allgather", "alltoall")  # message size: a rank's block times the ranks
VERSION = "rule-file-version-2"


def message_size(kernel: str, nbytes: int, np: int) -> int:
    """The message size coll/tuned looks rules up by, for commscope's size of `kernel`."""
    return nbytes * np if kernel in PER_PEER else nbytes


SUFFIX = ".rules"


def settings(path: Path) -> list[tuple[str, str]]:
    """The MCA settings that make a launch use the file (mpirun --mca, or OMPI_MCA_*)."""
    return [("coll_tuned_use_dynamic_rules", "1"),
            ("coll_tuned_dynamic_rules_filename", str(path))]


def writable(binary: Path) -> None:
    """Every algorithm can be named in a rule (None: no restriction)."""
    return None


def use(path: Path) -> str:
    return "mpirun " + " ".join(f"--mca {n} {v}" for n, v in settings(path)) + " ..."


def files(path: Path, ranges: list[Range], kernels: dict, binary: Path) -> dict:
    """What to write where: {path: text}."""
    return {path: write(ranges, kernels)}


def _how(kernel, param) -> list[int]:
    """faninout, segsize [, max_requests] as the forced algorithms were measured with."""
    c = param.companions
    if c.get("tree_fanout") != c.get("chain_fanout"):
        raise UserError(f"{param.setting}_tree_fanout ({c.get('tree_fanout')}) and _chain_fanout "
                        f"({c.get('chain_fanout')}) differ, and a rule holds one fan-out; "
                        "set them equal and tune again")
    extra = [c["max_requests"]] if "max_requests" in c else []
    return [c.get("tree_fanout", 0), c.get("segmentsize", 0), *extra]


def write(ranges: list[Range], kernels: dict) -> str:
    """The rules file of `ranges`, for kernels (name -> catalog Kernel) of this MPI."""
    lines = [VERSION, "# commscope tune: measured choices of coll/tuned's algorithms",
             "# fields: msgsize algorithm faninout segsize [max_requests]"]
    chosen = sorted({r.kernel for r in ranges}, key=IDS.__getitem__)
    lines.append(f"{len(chosen)}  # collectives")
    for kernel in chosen:
        param = kernels[kernel].params["algorithm"]
        how = " ".join(map(str, _how(kernel, param)))
        mine = [r for r in ranges if r.kernel == kernel]
        sizes = sorted({r.np for r in mine})
        lines += [f"{IDS[kernel]}  # {kernel}", f"{len(sizes) + 1}  # communicator sizes",
                  "1 1  # below the sizes tuned: the library's own rules", "0 0 0 0"]
        for np_ in sizes:
            rules = [r for r in mine if r.np == np_]
            lines.append(f"{np_} {len(rules)}  # {np_} ranks")
            for i, r in enumerate(rules):
                value = param.values[param.choices.index(r.choice)] if r.choice else 0
                low = message_size(kernel, r.low, np_) if i else 0
                what = r.choice or "the library's own choice"
                lines.append(f"{low} {value} {how}  # from {r.low} B: {what}")
    return "\n".join(lines) + "\n"


def _tokens(text: str) -> list[tuple[int, int]]:
    """(number, line) of every number outside comments."""
    found = []
    for line_no, line in enumerate(text.splitlines(), 1):
        for word in line.split("#", 1)[0].split():
            if not re.fullmatch(r"-?\d+", word):
                raise ValueError(f"line {line_no}: '{word}' is not a number")
            found.append((int(word), line_no))
    return found


def read(text: str, name: str) -> Rules:
    """The collectives and communicator sizes a rules file covers; UserError naming the
    file and line where Open MPI would reject it."""
    v2 = text.startswith(VERSION)
    try:
        tokens = _tokens(text.split("\n", 1)[1] if v2 and "\n" in text else
                         "" if v2 else text)
    except ValueError as e:
        raise UserError(f"--verify {name}: {e}; give an Open MPI rules file as "
                        "commscope tune writes it (docs/tune.md)") from None
    at = 0

    def take(what: str) -> int:
        nonlocal at
        if at >= len(tokens):
            raise UserError(f"--verify {name}: the file ends before {what}; give an Open MPI "
                            "rules file as commscope tune writes it (docs/tune.md)")
        value, line = tokens[at]
        if value < 0:
            raise UserError(f"--verify {name}: line {line}: {what} is {value}; it must not "
                            "be negative")
        at += 1
        return value

    names = {v: k for k, v in IDS.items()}
    covered, boundaries = {}, {}
    for _ in range(take("the number of collectives")):
        ident = take("a collective id")
        if ident not in names:
            raise UserError(f"--verify {name}: line {tokens[at - 1][1]}: collective id {ident} "
                            f"is none commscope measures; ids: "
                            f"{', '.join(f'{v} {k}' for k, v in IDS.items())}")
        sizes = []
        for _ in range(take(f"{names[ident]}'s number of communicator sizes")):
            sizes.append(take(f"{names[ident]}'s communicator size"))
            starts = []
            for i in range(take(f"{names[ident]}'s number of rules")):
                starts.append(take("a message size"))
                if starts[-1] != 0 and i == 0:
                    raise UserError(f"--verify {name}: line {tokens[at - 1][1]}: "
                                    f"{names[ident]}'s first rule at {sizes[-1]} ranks must be "
                                    "for message size 0")
                for what in ("an algorithm", "a fan-in/out", "a segment size"):
                    take(what)
                if v2 and at < len(tokens) and tokens[at][1] == tokens[at - 1][1]:
                    take("max_requests")
            per = sizes[-1] if names[ident] in PER_PEER else 1  # message_size() undone
            if sizes[-1] > 1:
                boundaries[names[ident], sizes[-1]] = tuple(s // per for s in starts[1:])
        covered[names[ident]] = tuple(s for s in sizes if s > 1)
    if at != len(tokens):
        raise UserError(f"--verify {name}: line {tokens[at][1]}: numbers after the last "
                        "collective; the count of collectives is wrong")
    return Rules(covered, boundaries)
