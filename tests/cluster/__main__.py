"""`python -m tests.cluster up [N] [--rate MBIT] | down`: the test cluster by hand.

A cluster made here stays up after this command ends (nothing then holds its
lock): `down` removes it, and so does the next `up` or test run.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from commscope.cluster import SUBNET, ClusterUnavailable, down, up


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.cluster")
    sub = p.add_subparsers(dest="verb", required=True)
    u = sub.add_parser("up", help="make the hosts (removes a stale cluster first)")
    u.add_argument("hosts", type=int, nargs="?", default=2)
    u.add_argument("--rate", type=float, metavar="MBIT", help="shape every host's link to MBIT Mbit/s")
    sub.add_parser("down", help="remove every namespace, link, qdisc and file of the cluster")
    args = p.parse_args(argv)
    if args.verb == "down":
        for item in down():
            print(f"removed {item}")
        return 0
    try:
        cluster = up(args.hosts)
    except ClusterUnavailable as exc:
        print(f"cluster: {exc}", file=sys.stderr)
        return 2
    if args.rate:
        for host in cluster.hosts:
            cluster.shape(host, args.rate * 1e6)
    cluster.detach()  # the cluster outlives this command; see the module's docstring
    for host, address in cluster.addresses.items():
        print(f"{host} {address}")
    slots = ",".join(f"{h}:1" for h in cluster.hosts)
    print(f"\nrun on the first host, e.g.:\n  {shlex.join(cluster.command(cluster.hosts[0], []))} "
          f"env PRTE_MCA_plm_ssh_agent={cluster.agent} PRTE_MCA_oob_tcp_if_include={SUBNET} "
          f"OMPI_MCA_btl_tcp_if_include={SUBNET} commscope run bw --hosts {slots}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
