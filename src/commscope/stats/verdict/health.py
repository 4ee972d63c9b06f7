"""What health says (health/), in the verdict core's shape (claim.py), here so that its
views read it where health writes it: its words, the family each kind of claim is judged
and written in (a JUnit testcase's classname), the remedy each fits, how a fault is
written, and the claim of a fault traced (health/preflight.diagnose). Health's ratios are
bandwidths, measured over what the rest predicts: below 1 is slower."""

from __future__ import annotations

from .claim import VERB_WORDS, Claim, failed

WORDS = VERB_WORDS["health"]
# The family of each kind judged: nodes, links, steps and switch groups are each tested
# as one family (links would swamp nodes); a traced fault is written with the kind it
# stops (a hung node with the nodes, a pair that cannot talk with the links)
FAMILY = {"node": "health.node", "link": "health.link", "step": "health.step",
          "group": "health.group", "hung": "health.node", "unreachable": "health.link",
          "stalled": "health.stall"}
REMEDY = {
    "node": "drain it and test it alone (its NIC, cable, firmware, CPU frequency, memory); "
            "then run `commscope health` again without it",
    "link": "check the cable, ports and switch path between them (error counters, link "
            "speed); neither node is slow with the others",
    "step": "every node is slow at this distance: routing or contention in the fabric, not "
            "a node; ask who runs the switches",
    # what stopped a launch, traced (preflight.diagnose), in the full matrix and the screen
    "unreachable": "check the route and firewall between the two (ip route, ping between "
                   "their addresses) and the link itself: each talks to other nodes",
    "hung": "drain it: its rank answered no partner within the deadline (a hung process, a "
            "dead NIC); check it (dmesg, its NIC's link) before it rejoins",
    "stalled": "run the screen again; if a rank of this host stalls again, check what "
               "stopped it (a debugger or job control, dmesg, its load, its NIC's link) "
               "before trusting the host",
    "group": "check the switch's uplink (its ports, cables, routing and counters): its "
             "nodes are fine with each other, slow with the others",
}
# How each fault is written in a table and a JUnit testcase: a stall that ran clean when
# launched again (the only stall kept as a fault) is transient
FAULTS = {"unreachable": "unreachable", "hung": "hung", "stalled": "stalled (transient)"}
FAULT_ORDER = ("unreachable", "hung", "stalled")  # the order they are shown in
TRANSIENT_OK = "passes: --transient ok"


def tournament_rounds(nodes: int) -> int:
    """The rounds of one launch of the full matrix's pairs (native/kernels/pairs.c's
    tournament): N-1, N when N is odd (one node sits out each round)."""
    return nodes - 1 + nodes % 2


def fault_where(hosts: list[str], ranks: list[int] = ()) -> str:
    """`a -> b` for a pair, `a rank 3` for a node's rank, `host unknown` for none."""
    where = " -> ".join(hosts) or "host unknown"
    return where + (f" rank{'s' * (len(ranks) > 1)} {','.join(map(str, ranks))}"
                    if ranks else "")


def fault_claim(kind: str, subject: str, seen: str, passes: bool = False) -> Claim:
    """A traced fault's claim: nothing measured, what was seen, its word; failing, unless
    `passes` (a transient stall under --transient ok)."""
    return failed(FAMILY[kind], subject, FAULTS[kind], seen,
                  REMEDY[kind] + (f"; {TRANSIENT_OK}" if passes else ""), not passes)
