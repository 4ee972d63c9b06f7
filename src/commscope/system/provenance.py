"""Which pairs of ranks shared a host, and what the library's transport setting implies for each.

What can be known, per pair of ranks a, b:

- `same_host`: their host names (gethostname on each rank) are equal. Fact.
- `same_node`: the library put them in one MPI_COMM_TYPE_SHARED communicator,
  i.e. it counts them as able to share memory. Fact, as the library sees it
  (it can differ from host names, e.g. containers that share a name).
- `transport`: "shm" or "network", what the library's recorded transport
  setting (MPI_T control variables, `library_transport`) implies for such a
  pair; None where the setting leaves the choice to the library at run time.
  Ranks on different nodes can only use the network. On one node: MPICH's
  CH4 uses shared memory unless MPIR_CVAR_NOLOCAL=1; Open MPI's ob1 uses its
  sm BTL whenever sm is among the BTLs (it outranks tcp), and the network
  otherwise.

What cannot be known from inside the MPI library: which component actually
carried the bytes (neither library reports its per-peer choice through
MPI_T), which network interface TCP used when several qualify, and which
protocol (eager or rendezvous) a message took. When Open MPI's pml is left
to its run-time choice (the default, pml ""), UCX or an OFI MTL may take over
and route local traffic its own way: `transport` is None then for pairs on
one node. The measured latency, against these facts, is the evidence.
"""

from __future__ import annotations

MAX_PAIR_RANKS = 64  # above this the pair list (n(n-1)/2 entries) is left out of the record
_OPEN_MPI_SHM = {"sm", "vader"}  # vader is the sm BTL's name before Open MPI 5


def shm_allowed(library: dict | None) -> bool | None:
    """Whether the recorded setting lets two ranks of one node use shared memory; None: unknown."""
    if not library:
        return None
    if "MPIR_CVAR_NOLOCAL" in library:
        return library["MPIR_CVAR_NOLOCAL"] == 0
    btl, pml = library.get("btl"), library.get("pml")
    if btl is None or pml != "ob1":
        return None
    listed = {b.strip() for b in btl.lstrip("^").split(",") if b.strip()}
    if btl.startswith("^") or not btl:
        return not (listed & _OPEN_MPI_SHM)
    return bool(listed & _OPEN_MPI_SHM)


def rank_pairs(context: dict) -> list[dict] | None:
    """One entry per pair of ranks (a < b); None above MAX_PAIR_RANKS ranks."""
    placement = context.get("placement") or []
    if len(placement) > MAX_PAIR_RANKS:
        return None
    shm = shm_allowed(context.get("library_transport"))
    pairs = []
    for i, a in enumerate(placement):
        for b in placement[i + 1:]:
            node = a.get("shm_node")
            same_node = None if node is None else node == b.get("shm_node")
            if same_node is False:
                transport = "network"
            elif same_node and shm is not None:
                transport = "shm" if shm else "network"
            else:
                transport = None
            pairs.append({"ranks": [a["rank"], b["rank"]], "same_host": a["host"] == b["host"],
                          "same_node": same_node, "transport": transport})
    return pairs


def with_pairs(context: dict) -> dict:
    """The context record as stored: the native facts plus the pairs derived from them."""
    return {**context, "pairs": rank_pairs(context)}
