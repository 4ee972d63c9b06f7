"""How a case and a configuration are named, in every table, title, legend and message."""

from __future__ import annotations

from ..system import owner, units
from ..system.sizes import format_bytes
from .rows import RunRow


def library(version_text: str | None) -> str:
    """MPI_Get_library_version's first phrase: "Open MPI v5.0.11", "MPICH Version: 5.0.2"."""
    if not version_text:
        return "MPI unknown"
    return " ".join(version_text.splitlines()[0].split(",")[0].split())


def ranks(n: int | None) -> str:
    """"1 rank", "4 ranks"; "? ranks" where a tool printed no count."""
    return "? ranks" if not n else f"{n} rank{'s' * (n != 1)}"


def case(kernel: str, send_mode: str | None, nbytes: int) -> str:
    """One measured case: "pingpong standard 8 KiB", "allreduce 1 KiB"."""
    return " ".join(filter(None, (kernel, send_mode, format_bytes(nbytes))))


def _ranks(ident: dict) -> str:
    np_, ranks = ident.get("np"), ident.get("ranks")
    if np_ is None:
        return ""
    text = f"{np_} ranks" if ranks in (None, np_) else f"{ranks} of {np_} ranks"
    return text + (", oversubscribed" if ident.get("oversubscribed") else "")


def identity(ident: dict) -> str:
    """A case identity (cases.identity) in words, compactly, for a comparison's rows:
    "pingpong standard 8 B np2 window=64 op=sum transport=tcp ..."."""
    words = [ident["kernel"], ident.get("send_mode") or ""]
    words += [format_bytes(ident["bytes"])] if "bytes" in ident else []
    words += [f"np{ident['np']}"] if "np" in ident else []
    words += ["oversubscribed"] if ident.get("oversubscribed") else []
    words += [f"window={ident['window']}"] if ident.get("window") is not None else []
    words += [f"{k}={v}" for k, v in ident["params"].items()]
    words += [f"transport={ident['transport']}"] if ident["transport"] != "auto" else []
    words += [f"map-by={ident['map_by']}"] if ident["map_by"] else []
    words += [f"bind-to={ident['bind_to']}"] if ident["bind_to"] else []
    words += [f"sync={ident['sync']}"] if ident["sync"] != "barrier" else []
    words += ["validated"] if ident.get("validated") else []
    words += ["cold-cache"] if ident.get("cold_cache") else []
    words += ["per-call"] if ident.get("sample") == "call" else []
    words += [f"hosts={ident['hosts']}"] if ident.get("hosts") else []
    words += [f"{k}={v}" for k, v in (ident.get("labels") or {}).items()]
    return " ".join(w for w in words if w)


def what(ident: dict) -> str:
    """What was measured, for legends: kernel, send mode, parameters, window and ranks."""
    parts = [ident["kernel"]]
    if ident.get("send_mode"):
        parts.append(ident["send_mode"])
    parts += [f"{k}={v}" for k, v in sorted(ident.get("params", {}).items())]
    if "window" in ident:
        parts.append(f"window={ident['window']}")
    if ident.get("cold_cache"):
        parts.append("cold cache")
    ranks = _ranks(ident)
    return " ".join(parts) + (f", {ranks}" if ranks else "")


def configuration(ident: dict) -> str:
    """A configuration (a fit's group, a figure's panel) in words, for titles; fields the
    grouping left out are skipped."""
    words = [what(ident), f"transport {ident['transport']}",
             f"map-by {ident['map_by'] or 'default'}, bind-to {ident['bind_to'] or 'default'}",
             f"sync {ident['sync']}"]
    if ident.get("hosts"):
        words.append(f"hosts {ident['hosts']}")
    if "mpi" in ident:
        words.append(library(ident["mpi"]))
    words += [f"{k}={v}" for k, v in (ident.get("labels") or {}).items()]
    return ", ".join(words)


# The timer's facts in the context record (native/timer.c), as each is named when shown.
TIMER_FACTS = (("resolution_s", "resolution"), ("overhead_s", "overhead"),
               ("wtick_s", "MPI_Wtick"), ("barrier_s", "barrier"))


def timer(facts: dict) -> str:
    """The timer and what it costs, from the context record's `timer`: "MPI_Wtime:
    resolution 2e-08 s, overhead 2.59e-08 s, MPI_Wtick 1e-09 s, barrier 4.36e-07 s";
    a fact a record lacks is left out."""
    shown = ", ".join(f"{name} {units.seconds(facts[key])} s" for key, name in TIMER_FACTS
                      if facts.get(key) is not None)
    return f"{facts.get('name', 'timer unknown')}: {shown}"


def ranges(ids: list[int], sep: str = ", ") -> str:
    """Run ids as a reader writes them: 1-4, 7, 9-10 (sep ",": as RUNS takes them)."""
    spans: list[list[int]] = []
    for i in sorted(ids):
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return sep.join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)


GONE = "process gone"  # a run's message starts so when its command died without ending it


def status(row: RunRow) -> str:
    """A run's status as shown: `interrupted (process gone)` for a run whose command died,
    whether a later writing command has ended it yet (recovery.py) or not."""
    if row.status == "running" and owner.gone(row.owner):
        return f"interrupted ({GONE})"
    gone = row.message and row.message.startswith(GONE)
    return f"{row.status} ({GONE})" if gone else row.status
