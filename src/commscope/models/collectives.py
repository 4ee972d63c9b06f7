"""Predicted times of seed 001's ring and of collective algorithms from a message time t(m).

`t(m)` is the fitted time of one m-byte message (models.hockney or
models.segmented): with the Hockney line t(m) = alpha + m/B every formula
below is the cost expression of Thakur, Rabenseifner & Gropp, "Optimization
of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005,
section 4, with beta = 1/B. Writing each step as t(its message size) lets a
segmented fit charge each step the protocol of its own size.

`nbytes` is commscope's `bytes` of the kernel (docs/kernels-collectives.md):
the buffer for bcast, the vector for reduce and allreduce, one rank's block
for scatter and gather. `gamma` is the reduction's compute time per byte;
P = ranks, lg the base-2 logarithm.
"""

from __future__ import annotations

from typing import Callable

from .maxrate import mbw_mr_time

MessageTime = Callable[[float], float]


def _rounds(ranks: int) -> int:
    """ceil(lg P): rounds of a binomial tree or of recursive doubling."""
    return (ranks - 1).bit_length()


def _power_of_two_below(ranks: int) -> int:
    return 1 << (ranks.bit_length() - 1)


def ring_serial(t: MessageTime, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """Seed 001's model, t(P) = 2P (alpha + n/B): P steps of two messages one after the other.

    One sample of the `ring` kernel is one iteration: P steps, each an
    exchange with both neighbours, a step forwarding what the previous one
    brought, so steps cannot overlap (docs/kernels-many-rank.md).
    """
    return 2 * ranks * t(nbytes)


def ring_concurrent(t: MessageTime, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """All four messages of a step in flight at once: P (alpha + 2n/B) = P t(2n).

    Their start-ups overlap, so a step pays alpha once, but each rank still
    sends 2n bytes (and receives 2n) through its one bandwidth B. It is below
    the serial form by P alpha: twice as fast for small n, the same for large n.
    """
    return ranks * t(2 * nbytes)


def bcast_binomial(t: MessageTime, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """ceil(lg P) (alpha + n beta): every round doubles the ranks holding the buffer."""
    return _rounds(ranks) * t(nbytes)


def bcast_linear(t: MessageTime, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """(P-1) (alpha + n beta): the root sends to each rank in turn (a flat tree); a chain
    that forwards whole, unsegmented messages costs the same."""
    return (ranks - 1) * t(nbytes)


def scatter_binomial(t: MessageTime, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """lg P alpha + (P-1)/P (P n) beta, with n one rank's block.

    The root sends, to the rank at distance 2^k, the blocks of that subtree,
    min(2^k, P - 2^k) of them, largest first; each subtree forwards in
    parallel, so the root's sends are the critical path.
    """
    return sum(t(nbytes * min(d, ranks - d)) for d in _distances(ranks))


def bcast_scatter_allgather(t: MessageTime, ranks: int, nbytes: int,
                            gamma: float = 0.0) -> float:
    """(lg P + P - 1) alpha + 2 (P-1)/P n beta: a binomial scatter of n/P blocks, then a
    ring allgather of them (van de Geijn's bcast, MPICH's for long messages)."""
    return scatter_binomial(t, ranks, nbytes / ranks) + (ranks - 1) * t(nbytes / ranks)


def gather_binomial(t: MessageTime, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """The scatter tree run backwards: the same messages, the same cost."""
    return scatter_binomial(t, ranks, nbytes)


def reduce_binomial(t: MessageTime, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """ceil(lg P) (alpha + n beta + n gamma): a binomial tree, reducing at every receive."""
    return _rounds(ranks) * (t(nbytes) + nbytes * gamma)


def reduce_rabenseifner(t: MessageTime, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """2 lg P alpha + 2 (P-1)/P n beta + (P-1)/P n gamma: a reduce-scatter by recursive
    halving, then a binomial gather of the blocks to the root (Rabenseifner's reduce,
    MPICH's for long messages); the extra ranks of a P not a power of two only hand in."""
    p = _power_of_two_below(ranks)
    return _fold(t, ranks, nbytes, gamma, back=False) + 2 * _halves(t, p, nbytes) \
        + (p - 1) / p * nbytes * gamma


def reduce_linear(t: MessageTime, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """(P-1) (alpha + n beta + n gamma): the root receives from each rank in turn (a flat
    tree), reducing each vector as it arrives."""
    return (ranks - 1) * (t(nbytes) + nbytes * gamma)


def allreduce_reduce_bcast(t: MessageTime, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """A binomial reduce to one rank, then a binomial bcast of the result:
    2 ceil(lg P) (alpha + n beta) + ceil(lg P) n gamma."""
    return reduce_binomial(t, ranks, nbytes, gamma) + bcast_binomial(t, ranks, nbytes)


def allreduce_recursive_doubling(t: MessageTime, ranks: int, nbytes: int,
                                 gamma: float = 0.0) -> float:
    """lg P (alpha + n beta + n gamma), plus the non-power-of-two steps (_fold)."""
    rounds = _power_of_two_below(ranks).bit_length() - 1
    return _fold(t, ranks, nbytes, gamma) + rounds * (t(nbytes) + nbytes * gamma)


def allreduce_rabenseifner(t: MessageTime, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """2 lg P alpha + 2 (P-1)/P n beta + (P-1)/P n gamma.

    A reduce-scatter by recursive halving (round k exchanges n/2^k bytes),
    then an allgather by recursive doubling, the same messages in reverse.
    """
    p = _power_of_two_below(ranks)
    return _fold(t, ranks, nbytes, gamma) + 2 * _halves(t, p, nbytes) \
        + (p - 1) / p * nbytes * gamma


def _halves(t: MessageTime, p: int, nbytes: int) -> float:
    """Recursive halving over p (a power of two) ranks: round k moves n/2^k bytes."""
    return sum(t(nbytes / 2 ** k) for k in range(1, p.bit_length()))


def allreduce_ring(t: MessageTime, ranks: int, nbytes: int, gamma: float = 0.0) -> float:
    """2 (P-1) alpha + 2 (P-1)/P n beta + (P-1)/P n gamma: a ring reduce-scatter, then allgather,
    each P-1 steps of one n/P block."""
    return 2 * (ranks - 1) * t(nbytes / ranks) + (ranks - 1) / ranks * nbytes * gamma


def _distances(ranks: int) -> list[int]:
    return [1 << k for k in range(_rounds(ranks))]


def _fold(t: MessageTime, ranks: int, nbytes: int, gamma: float, back: bool = True) -> float:
    """For P not a power of two: the extra ranks first hand their vectors to partners
    (alpha + n beta + n gamma) and, with `back`, get the result back at the end
    (alpha + n beta)."""
    if ranks == _power_of_two_below(ranks):
        return 0.0
    return (1 + back) * t(nbytes) + nbytes * gamma


# Each kernel's algorithms: what `commscope predict KERNEL` computes.
ALGORITHMS: dict[str, dict[str, Callable]] = {
    "ring": {"serial": ring_serial, "concurrent": ring_concurrent},
    "bcast": {"binomial": bcast_binomial, "linear": bcast_linear,
              "scatter_allgather": bcast_scatter_allgather},
    "scatter": {"binomial": scatter_binomial},
    "gather": {"binomial": gather_binomial},
    "reduce": {"binomial": reduce_binomial, "linear": reduce_linear,
               "rabenseifner": reduce_rabenseifner},
    "allreduce": {"recursive_doubling": allreduce_recursive_doubling,
                  "rabenseifner": allreduce_rabenseifner, "ring": allreduce_ring,
                  "reduce_bcast": allreduce_reduce_bcast},
    # several senders per node: t is a max-rate model's T(n, k) (models/maxrate.py)
    "mbw_mr": {"max-rate": mbw_mr_time},
}
REDUCING = {"reduce", "allreduce"}
