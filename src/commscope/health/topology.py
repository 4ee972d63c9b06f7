"""Switch groups for `health --screen` (docs/health.md): the nodes under each leaf switch,
from `--groups FILE`, Slurm's topology.conf (`SwitchName=s1 Nodes=h[0-3],h7`; the lines of
upper switches, with `Switches=` and no `Nodes=`, are left out) or lines `group:
host,host`; or, inside an allocation without it, from `scontrol show topology`."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..system.errors import UserError

BRACKET = re.compile(r"^(?P<head>[^\[\]]*)\[(?P<body>[^\[\]]+)\](?P<tail>[^\[\]]*)$")


def hostlist(text: str, where: str) -> list[str]:
    """A Slurm host list, `h[0-3,5],n01` (ranges keep their zero padding)."""
    names, depth, word = [], 0, ""
    for ch in text.strip() + ",":
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            names += _expand(word.strip(), where) if word.strip() else []
            word = ""
        else:
            word += ch
    return names


def _expand(word: str, where: str) -> list[str]:
    found = BRACKET.match(word)
    if "[" not in word and "]" not in word:
        return [word]
    if not found:
        raise UserError(f"{where}: {word!r} is not a host list (h[0-3,5] or names)")
    out = []
    for part in found["body"].split(","):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            raise UserError(f"{where}: {word!r}: {part!r} is not a number or range")
        for i in range(int(low), int(high or low) + 1):
            out.append(f"{found['head']}{i:0{len(low)}d}{found['tail']}")
    return out


def read_groups(path: str, hosts: list[str]) -> tuple[list[str], np.ndarray]:
    """The groups' names and each host's group (-1: in none), from a file. One line naming
    the file and what to fix, exit 2: a file that cannot be read or holds no group, a host
    not among `hosts`, a host in two groups."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise UserError(f"--groups {path}: cannot be read ({exc.strerror})")
    return _placed(_parse(text, f"--groups {path}"), hosts, f"--groups {path}", strict=True)


def slurm_groups(hosts: list[str]) -> tuple[list[str], np.ndarray] | None:
    """Inside a Slurm allocation, the leaf switches `scontrol show topology` gives (the
    topology/tree plugin), over these hosts (switches of other nodes left out); None
    outside one, without scontrol, or where no switch holds any of the hosts."""
    import os
    import shutil
    import subprocess

    if not os.environ.get("SLURM_JOB_ID") or not shutil.which("scontrol"):
        return None
    try:
        done = subprocess.run(["scontrol", "show", "topology"], capture_output=True,
                              text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [x for x in done.stdout.splitlines() if "SwitchName=" in x]
    if done.returncode or not lines:
        return None
    names, of = _placed(_parse("\n".join(lines), "scontrol show topology"), hosts,
                        "scontrol show topology", strict=False)
    return (names, of) if (of >= 0).any() else None


def _parse(text: str, where: str) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        here = f"{where}, line {number}"
        if not line:
            continue
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        if "SwitchName" in fields:
            if "Nodes" in fields:
                groups[fields["SwitchName"]] = hostlist(fields["Nodes"], here)
        elif ":" in line:
            name, _, members = line.partition(":")
            groups[name.strip()] = hostlist(members, here)
        else:
            raise UserError(f"{here}: give `SwitchName=NAME Nodes=HOSTLIST` or "
                            "`NAME: host,host`")
    if not groups:
        raise UserError(f"{where}: no group in it; give `SwitchName=NAME Nodes=HOSTLIST` or "
                        "`NAME: host,host` lines")
    return groups


def _placed(groups: dict[str, list[str]], hosts: list[str], where: str,
            strict: bool) -> tuple[list[str], np.ndarray]:
    """Each host's group; `strict`: a member not among the hosts is an error (else left
    out, as an allocation's switches hold other jobs' nodes)."""
    place = {h: i for i, h in enumerate(hosts)}
    of = np.full(len(hosts), -1)
    for g, (name, members) in enumerate(groups.items()):
        unknown = [h for h in members if h not in place]
        if unknown and strict:
            raise UserError(f"{where}: group {name} names {', '.join(unknown[:3])}, not among "
                            "the hosts checked; fix the file or --hosts")
        for h in (h for h in members if h in place):
            if of[place[h]] >= 0:
                raise UserError(f"{where}: {h} is in two groups ({list(groups)[of[place[h]]]} "
                                f"and {name}); a node hangs under one leaf switch")
            of[place[h]] = g
    return list(groups), of
