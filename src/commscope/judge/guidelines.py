"""Self-consistent performance guidelines: the catalogue (guidelines.json, one entry per
guideline with its source) and what `commscope check` measures for each.

A guideline says its left side is no slower than its right (Traff, Gropp and Thakur,
IEEE TPDS 21(5), 2010). Every one in the catalogue compares two forms of one kernel,
differing in one thing (`vary`): a send mode, or one kernel parameter, a mock-up (`as`)
or `persistent`, where None is the parameter not given. So both sides are measured in
the same launches: the send modes of one plan, or the values of native --each.
monotony:KERNEL and split:KERNEL compare a kernel's sizes with each other instead
(docs/guidelines.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..system.errors import UserError, to_run

SIZE_KINDS = ("monotony", "split")  # guidelines over a kernel's sizes: KIND:KERNEL


@dataclass(frozen=True)
class Guideline:
    id: str
    kind: str  # pattern, specialised, semantics, monotony, split
    kernel: str
    vary: str | None = None  # "send_mode" or a kernel parameter; None: sizes (monotony, split)
    left: str | None = None
    right: str | None = None
    source: tuple[str, ...] = ()
    k: int = 2  # split: one message against k of a k-th of its size
    # MPI family -> its own algorithm that does what `right` does
    algorithm: dict = field(default_factory=dict, compare=False)

    def label(self, which: str) -> str:
        """A side in words: its send mode or mock-up, persistent or plain, or the kernel."""
        value = self.left if which == "left" else self.right
        if self.vary == "persistent":
            return "persistent" if value == "yes" else "plain"
        return value or self.kernel


@dataclass(frozen=True)
class Catalogue:
    guidelines: tuple[Guideline, ...]  # the two-sided ones
    templates: dict = field(default_factory=dict)  # kind -> entry, for monotony and split
    extra: list | None = None  # the entries of --catalogue, stored with a check's runs

    @property
    def ids(self) -> list[str]:
        return [g.id for g in self.guidelines] + [f"{kind}:KERNEL" for kind in self.templates]

    def find(self, ids: list[str], kernels) -> list[Guideline]:
        """The guidelines named; `kernels` are the ones the binary has. An unknown id is a
        UserError that lists the ids."""
        by_id = {g.id: g for g in self.guidelines}
        found = []
        for name in ids:
            kind, _, kernel = name.partition(":")
            if name in by_id:
                found.append(by_id[name])
            elif kind in self.templates and kernel in kernels:
                found.append(self.sized(kind, kernel))
            else:
                raise UserError(f"check: no guideline '{name}'; the ids are "
                                f"{', '.join(self.ids)} (KERNEL: a kernel of "
                                f"{to_run('run', '--help')})")
        return list(dict.fromkeys(found))

    def sized(self, kind: str, kernel: str) -> Guideline:
        t = self.templates[kind]
        return Guideline(f"{kind}:{kernel}", kind, kernel, source=tuple(t["source"]),
                         k=t.get("k", 2))

    def on(self, kernels) -> list[Guideline]:
        """Every two-sided guideline on these kernels, then monotony and split of each."""
        return [g for g in self.guidelines if g.kernel in kernels] + \
            [self.sized(kind, k) for k in kernels for kind in self.templates]

    def everything(self) -> list[Guideline]:
        """--all: every guideline on the kernels the two-sided ones name."""
        return self.on(list(dict.fromkeys(g.kernel for g in self.guidelines)))


def _entries(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
        for e in data["guidelines"]:
            needs = ("id", "kind") if e["kind"] in SIZE_KINDS else \
                ("id", "kind", "kernel", "vary", "left", "right")
            missing = [k for k in needs if k not in e]
            if missing:
                raise ValueError(f"{e.get('id', 'an entry')} lacks {', '.join(missing)}")
        return data
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UserError(f"--catalogue {path}: not a catalogue in guidelines.json's format "
                        f"({e}); see docs/guidelines.md") from None


def catalogue(extra: Path | None = None, entries: list | None = None) -> Catalogue:
    """The catalogue, with the guidelines of `extra` (a file in the same format) after it,
    or the `entries` a check stored from one."""
    data = _entries(Path(__file__).with_name("guidelines.json"))
    if extra is not None:
        entries = _entries(Path(extra))["guidelines"]
    data["guidelines"] += entries or []
    two_sided, templates = [], {}
    for entry in data["guidelines"]:
        if entry["kind"] in SIZE_KINDS:
            templates[entry["kind"]] = entry
        else:
            two_sided.append(Guideline(entry["id"], entry["kind"], entry["kernel"],
                                       entry["vary"], entry["left"], entry["right"],
                                       tuple(entry.get("source", ())),
                                       algorithm=entry.get("algorithm", {})))
    return Catalogue(tuple(two_sided), templates, entries)


@dataclass(frozen=True)
class Measure:
    """What one plan of `check` measures: a kernel with one thing varied over values (both
    sides of every guideline on it), in the same launches."""
    kernel: str
    vary: str | None
    values: tuple = (None,)


def measures(guidelines: list[Guideline]) -> list[Measure]:
    """The plans' outlines, one per (kernel, what varies): the values of every guideline on
    it, the kernel itself (None, or its first send mode) first where sizes are judged."""
    found: dict[tuple, list] = {}
    for g in guidelines:
        if g.kind in SIZE_KINDS:
            continue
        values = found.setdefault((g.kernel, g.vary), [])
        values += [v for v in (g.left, g.right) if v not in values]
    for g in guidelines:
        if g.kind not in SIZE_KINDS:
            continue
        same = [key for key in found if key[0] == g.kernel and key[1] != "send_mode"]
        if same:  # judged on the kernel itself, measured with the other side
            values = found[same[0]]
            if None not in values:
                values.insert(0, None)
        elif not any(key[0] == g.kernel for key in found):
            found[(g.kernel, None)] = [None]
    return [Measure(kernel, vary, tuple(values)) for (kernel, vary), values in found.items()]


def impossible(g: Guideline, np: int, min_ranks: int) -> str | None:
    """Why a guideline cannot be checked at np processes, or None."""
    if np < min_ranks:
        return f"{g.id} needs at least {min_ranks} processes; --np {np} has fewer"
    return None


def sides(m: Measure, guidelines: list[Guideline], cat: Catalogue) -> dict:
    """The plan builder's keywords for a Measure's sides: its send modes, or native --each
    over the parameter, whose values a refusal says came from the guidelines on it."""
    if m.vary == "send_mode":
        return {"modes": ",".join(m.values)}
    if m.vary is None:
        return {}
    ids = [g.id for g in guidelines if (g.kernel, g.vary) == (m.kernel, m.vary)]
    theirs = any(e.get("id") in ids for e in cat.extra or [])
    return {"each": (m.vary, m.values), "each_from": f"check: guideline {', '.join(ids)}"
            + (" of --catalogue" if theirs else "")}


def _setting(g: Guideline, family: str) -> str:
    """The library's own setting that selects the collective's algorithm, with the value
    that does what the mock-up does where it has one."""
    name = g.algorithm.get(family)
    if family == "openmpi":
        value = name or "NAME"
        return (f"--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_{g.kernel}_algorithm "
                f"{value}")
    value = name or "NAME"
    return f"MPIR_CVAR_{g.kernel.upper()}_INTRA_ALGORITHM={value}"


def _tuned(g: Guideline, calls: str, tuned: dict[str, str | None]) -> str:
    """What `commscope tune` chose where it measured the violated sizes (`tuned`: size ->
    its choice, None where it kept the default), so check's remedy and tune's choice come
    from the same comparisons of the library's algorithms."""
    chose: dict[str, list[str]] = {}
    for size, name in tuned.items():
        chose.setdefault(name or "", []).append(size)
    said = [f"select {name} at {', '.join(sizes)} (its -o writes the rules)"
            for name, sizes in chose.items() if name]
    if "" in chose:
        said.append(f"call {calls} at {', '.join(chose[''])}, where none of the library's "
                    "algorithms beat its default by the least gain")
    return f"`commscope tune {g.kernel}` measured these sizes here: " + "; ".join(said)


def remedy(g: Guideline, where: str, family: str | None,
           tuned: dict[str, str | None] | None = None) -> str:
    """What to change where the guideline is violated (`where`: its sizes and np;
    `tuned`: tune's choice at those of them it measured, see _tuned)."""
    if g.kind in ("pattern", "specialised"):
        calls = " then ".join(f"MPI_{c.capitalize()}" for c in g.right.split("+"))
        if tuned:
            return f"{g.kernel} is slower than {g.right} {where}: {_tuned(g, calls, tuned)}"
        families = [family] if family in ("openmpi", "mpich") else ["openmpi", "mpich"]
        settings = "; ".join(_setting(g, f) for f in families)
        return (f"{g.kernel} is slower than {g.right} {where}: call {calls} there, or select "
                f"another algorithm: {settings} (`commscope tune {g.kernel}` measures each "
                "and writes the library's rules)")
    if g.kind == "semantics":
        return (f"{g.kernel} {g.label('left')} is slower than {g.label('right')} {where}: use "
                f"the {g.label('right')} form there")
    if g.kind == "monotony":
        return (f"{g.kernel} takes longer than at the next larger size {where}: pad the "
                "message to that size")
    return (f"{g.kernel} is slower than {g.k} messages of 1/{g.k} of the size {where}: send "
            f"it as {g.k}")
