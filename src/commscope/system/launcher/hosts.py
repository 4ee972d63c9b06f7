"""Hosts to launch on: `--hosts a:2,b:2`, `--hostfile FILE`, `--ppn N`, checked before launching.

A host is a name and a number of slots (ranks it may take). Ranks fill the
hosts in the order given, each up to its slots, unless mapped round-robin
(`--map-by node`). Names are checked so that nothing a user types can be
taken for an option by a launcher: every launcher gets them as argv items.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError

# RFC 1123 host names and IPv4 addresses; no leading '-' (it would read as an option).
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,252})")


@dataclass(frozen=True)
class Hosts:
    names: tuple[str, ...]
    slots: tuple[int, ...]
    ppn: int | None = None  # --ppn as given; already folded into slots
    stated: tuple[bool, ...] = ()  # per host: its slots were written (a:2), not --ppn's or 1

    def spec(self) -> str:
        """The `--hosts` form, `a:2,b:2`: what is recorded with the run."""
        return ",".join(f"{n}:{s}" for n, s in zip(self.names, self.slots))

    @property
    def total(self) -> int:
        return sum(self.slots)

    def ranks_per_host(self, ranks: int, round_robin: bool = False) -> dict[str, int]:
        """How many ranks each host gets: hosts filled in order, or dealt one at a time."""
        taken = dict.fromkeys(self.names, 0)
        left = ranks
        if round_robin:
            while left:
                for name, slots in zip(self.names, self.slots):
                    if left and taken[name] < slots:
                        taken[name] += 1
                        left -= 1
        else:
            for name, slots in zip(self.names, self.slots):
                taken[name] = min(slots, left)
                left -= taken[name]
        return {name: n for name, n in taken.items() if n}


def _count(text: str, where: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise UserError(f"{where}: '{text}' is not a number of slots; give a whole number from 1")
    return int(text)


def _checked_name(name: str, where: str) -> str:
    if not _NAME.fullmatch(name):
        raise UserError(f"{where}: '{name}' is not a host name; use letters, digits, '.', "
                        "'-' and '_', starting with a letter or digit")
    return name


def _check_ppn(ppn: int | None, flag: str) -> None:
    if ppn is not None and (not isinstance(ppn, int) or ppn < 1):
        raise UserError(f"{flag} {ppn}: give at least 1 rank per host")


def _hosts(entries: list[tuple[str, int | None, str]], ppn: int | None,
           ppn_flag: str = "--ppn") -> Hosts:
    """Hosts from (name, slots or None, where) entries; --ppn gives the slots not given."""
    _check_ppn(ppn, ppn_flag)
    names, slots, stated = [], [], []
    for name, count, where in entries:
        if name in names:
            raise UserError(f"{where}: host {name} is listed twice; "
                            "give it once with all its slots")
        if count is not None and ppn is not None and count != ppn:
            raise UserError(f"{where}: {name}:{count} disagrees with {ppn_flag} {ppn}; "
                            f"give slots per host or {ppn_flag}, not both")
        names.append(name)
        slots.append(count or ppn or 1)
        stated.append(count is not None)
    return Hosts(tuple(names), tuple(slots), ppn, tuple(stated))


def parse_hosts(spec: str, ppn: int | None = None, flag: str = "--hosts",
                ppn_flag: str = "--ppn") -> Hosts:
    """`a:2,b:2` (slots after the colon, 1 or --ppn when left out)."""
    if not isinstance(spec, str) or not spec.strip():
        raise UserError(f"{flag}: no hosts given; list them as a:2,b:2")
    entries = []
    for item in (i.strip() for i in spec.split(",")):
        if not item:
            raise UserError(f"{flag} {spec}: empty host name; list hosts as a:2,b:2")
        name, colon, count = item.partition(":")
        where = f"{flag} {spec}"
        entries.append((_checked_name(name, where), _count(count, where) if colon else None,
                        where))
    return _hosts(entries, ppn, ppn_flag)


def read_hostfile(path: str, ppn: int | None = None, flag: str = "--hostfile",
                  ppn_flag: str = "--ppn") -> Hosts:
    """One host per line: `name`, `name:N` (MPICH's) or `name slots=N` (Open MPI's); # comments."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as exc:
        raise UserError(f"{flag} {path}: cannot read it ({exc.strerror})") from None
    entries = []
    for number, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        where = f"{flag} {path} line {number}"
        name, colon, count = words[0].partition(":")
        slots = _count(count, where) if colon else None
        for word in words[1:]:
            key, eq, value = word.partition("=")
            if key != "slots" or not eq or colon:
                raise UserError(f"{where}: '{word}' not understood; "
                                "write `name slots=N` or `name:N`")
            slots = _count(value, where)
        entries.append((_checked_name(name, where), slots, where))
    if not entries:
        raise UserError(f"{flag} {path}: no hosts in it; one host per line, e.g. `node1 slots=2`")
    return _hosts(entries, ppn, ppn_flag)


def hosts_from(spec: str | None, hostfile: str | None, ppn: int | None,
               flags: tuple[str, str, str] = ("--hosts", "--hostfile", "--ppn")) -> Hosts | None:
    """The hosts the three flags describe (named `flags` in messages), or None for the
    launcher's own choice."""
    hosts_flag, file_flag, ppn_flag = flags
    if spec is not None and hostfile is not None:
        raise UserError(f"{file_flag}: give the hosts once, with {hosts_flag} or {file_flag}")
    if spec is not None:
        return parse_hosts(spec, ppn, hosts_flag, ppn_flag)
    if hostfile is not None:
        return read_hostfile(hostfile, ppn, file_flag, ppn_flag)
    _check_ppn(ppn, ppn_flag)
    return None
