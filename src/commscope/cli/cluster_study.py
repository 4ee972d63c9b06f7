"""A many-rank study on a namespace cluster of this machine (commscope.system.cluster).

On one host, P > 2 ranks share the 2 cores and every message is a memory copy:
the ring and collectives studies then measure time-slicing, not a network. As
root, `commscope study` makes one namespace host per rank, shapes every link
to LINK_MBIT, and runs the same study inside the first host with `--hosts`
naming them all, so each message crosses two links, as across machines.
"""

from __future__ import annotations

import os
import subprocess
import sys

from ..system.cluster import CPUS, Cluster, ClusterUnavailable, down, unavailable, up
from ..system.errors import UserError
from ..system.launcher.placement import cores

LINK_MBIT = 1000  # Gigabit Ethernet: the links most clusters' hosts have at least


def choose(on: str, counts: list[int]) -> int | None:
    """The hosts to make for --on (auto, local, cluster), or None: run on this host."""
    if on == "local":
        return None
    why = unavailable()
    if why:
        if on == "cluster":
            raise UserError(f"--on cluster: {why}; use --on local, or --hosts on real hosts")
        if max(counts) > 2:
            print(f"study: on this host, {max(counts)} ranks on {cores()} cores "
                  f"(--on cluster needs what this lacks: {why})", file=sys.stderr)
        return None
    return max(2, max(counts))


def run_on(hosts: int, argv: list[str]) -> int:
    """The study of argv, run on the first of `hosts` namespace hosts; its exit code."""
    try:
        cluster = up(hosts)
    except ClusterUnavailable as exc:
        raise UserError(f"--on cluster: {exc}; use --on local") from None
    try:
        for host in cluster.hosts:
            cluster.shape(host, LINK_MBIT * 1e6)
        spec = ",".join(f"{h}:1" for h in cluster.hosts)
        print(f"study: on a namespace cluster of {hosts} hosts on this machine, one rank per "
              f"host, links shaped to {LINK_MBIT} Mbit/s (--on local: on this host)",
              file=sys.stderr)
        return _inside(cluster, [*argv, "--on", "local", "--hosts", spec])
    finally:
        down(cluster)


def _inside(cluster: Cluster, argv: list[str]) -> int:
    """commscope argv on the cluster's first host, each host on a CPU of its own (the
    ranks of two hosts trading cores made launches differ); output passes through.
    Ctrl-C reaches it as well (one process group): it stores what it finished."""
    env = cluster.mpi_env({**os.environ, CPUS: "own"})
    command = cluster.command(cluster.hosts[0], [sys.executable, "-m", "commscope.cli", *argv],
                              cpus="own")
    proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        return proc.wait()
