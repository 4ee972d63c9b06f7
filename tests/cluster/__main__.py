"""`python -m tests.cluster up [N] [--racks R] [--rate MBIT] [--trunk MBIT] | down`: the test
cluster by hand.

A cluster made here stays up after this command ends (nothing then holds its
lock): `down` removes it, and so does the next `up` or test run.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from commscope.system.cluster import ClusterUnavailable, down, up


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.cluster")
    sub = p.add_subparsers(dest="verb", required=True)
    u = sub.add_parser("up", help="make the hosts (removes a stale cluster first)")
    u.add_argument("hosts", type=int, nargs="?", default=2)
    u.add_argument("--racks", type=int, default=1,
                   help="deal the hosts in order to R racks joined by a router (default 1)")
    u.add_argument("--rate", type=float, metavar="MBIT",
                   help="shape every host's link to MBIT Mbit/s")
    u.add_argument("--trunk", type=float, metavar="MBIT",
                   help="shape the trunk between racks to MBIT Mbit/s each way")
    sub.add_parser("down", help="remove every namespace, link, qdisc and file of the cluster")
    args = p.parse_args(argv)
    if args.verb == "down":
        for item in down():
            print(f"removed {item}")
        return 0
    if args.trunk and args.racks < 2:
        p.error("--trunk: one rack has no trunk; add --racks 2")
    try:
        cluster = up(args.hosts, args.racks)
    except (ClusterUnavailable, ValueError) as exc:
        print(f"cluster: {exc}", file=sys.stderr)
        return 2
    if args.rate:
        for host in cluster.hosts:
            cluster.shape(host, args.rate * 1e6)
    if args.trunk:
        cluster.shape_trunk(args.trunk * 1e6)
    cluster.detach()  # the cluster outlives this command; see the module's docstring
    for host, address in cluster.addresses.items():
        print(f"{host} {address} rack {cluster.rack(host)}")
    slots = ",".join(f"{h}:1" for h in cluster.hosts)
    subnets = ",".join(map(str, cluster.subnets))
    print(f"\nrun on the first host, e.g.:\n  {shlex.join(cluster.command(cluster.hosts[0], []))} "
          f"env PRTE_MCA_plm_ssh_agent={cluster.agent} PRTE_MCA_oob_tcp_if_include={subnets} "
          f"OMPI_MCA_btl_tcp_if_include={subnets} commscope run bw --hosts {slots}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
