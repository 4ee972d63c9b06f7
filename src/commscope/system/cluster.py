"""A virtual cluster on this machine: network namespaces as hosts on one bridge, or racks.

The test suite's rig (tests/cluster adds its fixture), and where `commscope study` runs
its many-rank studies as root (docs/cluster.md).

Each host is a network namespace `cscl-hK` with one veth link (`eth0` inside,
`cscl-vK` outside) to the bridge `cscl-br` in the root namespace, and the
address 10.251.0.K+1/24. The namespaces have no route but that subnet and the
bridge has no address, so cluster traffic stays among the namespaces (and
their loopback). Host names resolve inside the namespaces through
/etc/netns/HOST/hosts, which `ip netns exec` mounts over /etc/hosts there.

MPI starts ranks on the hosts the way it does over ssh, with `agent` (an
rsh/ssh stand-in written at `up`) as the remote agent: it runs the command
line in the host's namespace and UTS namespace, with the host's name. The
launching command itself runs on the first host (`Cluster.run`), as it would
on a real cluster's first node. `Cluster.shape` limits a host's link with a
token bucket (tbf) on both ends of its veth. Asked to (CPUS), a host runs in a
CPU set, its own or the first host's, which no launcher can move it out of
(`_make_cpusets`).

With racks (`up(n, racks=R)`), the hosts are dealt to R bridges in order, rack r
with the subnet 10.251.r.0/24 (rack 0 keeps a one-rack cluster's addresses), and
a router namespace `cscl-rt` joins them: a veth leg on each rack's bridge, with
the rack's address .254, forwarding between its legs. Each host routes the other
racks' subnets through its rack's router address, and nothing else. The trunk is
the router: `Cluster.shape_trunk` puts a tbf on every leg, so all flows into a rack
from the others share one bucket, as they share the uplink of a real rack switch.

Needs root. An exclusive lock (flock) is held while a cluster is up: a
cluster found at `up` without a live owner is stale (its run was killed) and
is removed first. `down` removes every namespace, link, qdisc, CPU set, mount
and file the cluster made; it also runs at exit and in the test fixture's teardown.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path


PREFIX = "cscl"  # namespaces cscl-h0.. and cscl-rt, links cscl-br.., cscl-v0.. and cscl-r0..
# RFC 1918, far from the usual 10.0/16 and 10.1/16: rack 0's subnet (a one-rack cluster's);
# rack r has the r-th /24 after it, all inside 10.251.0.0/16 (_subnet)
SUBNET = ipaddress.ip_network("10.251.0.0/24")
BRIDGE = f"{PREFIX}-br"  # rack 0's bridge; rack r's is cscl-brR
ROUTER = f"{PREFIX}-rt"  # the namespace joining the racks: the trunk
ROUTER_HOST = 254  # the router's address in each rack's subnet, 10.251.r.254
STATE = Path("/run/commscope-cluster")  # the lock, the agent and the hosts' CPU sets
NETNS_ETC = Path("/etc/netns")
# In a command's environment, where each host runs: "own", host k on CPU k mod the CPUs,
# as machines own their cores; "shared", every host on the first host's CPU, which leaves
# the others to the rest of the machine (docs/cluster.md says when that measures better).
CPUS = "CSCL_CPUS"
CPUSET = Path("/sys/fs/cgroup/cpuset")  # cgroup v1's cpuset hierarchy, where it is mounted
# The same hierarchy seen from inside a host: `ip netns exec` mounts a fresh /sys without
# /sys/fs/cgroup, and the agent runs inside the first host.
CPUSETS = STATE / "cpuset"

# ssh's calling convention: options, the host, then the command line, which the
# remote shell parses (PRRTE passes it as one word, hydra as several). Only
# this cluster's hosts are entered, so a mistaken host name can reach nothing else.
AGENT = f"""#!/bin/sh
# rsh/ssh stand-in for commscope's test cluster (tests/cluster): runs the
# command line on HOST: in its network namespace, under its host name.
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
host=$1; shift
case $host in
    {PREFIX}-h[0-9]*) ;;
    *) echo "agent: $host is not a test-cluster host" >&2; exit 255 ;;
esac
# {CPUS}: enter the host's own CPU set or the first host's, or where there are none,
# pin to its CPU, k mod the CPUs installed (Cluster.command).
case ${{{CPUS}:-}} in
    own) cpus=$host ;;
    shared) cpus={PREFIX}-h0 ;;
    *) cpus="" ;;
esac
pin="" dir={CPUSETS}/$cpus
if [ -z "$cpus" ]; then :
elif [ -d "$dir" ]; then echo $$ > "$dir/cgroup.procs"
else pin="taskset -c $(( ${{cpus##*-h}} % $(nproc --all) ))"; fi
exec $pin ip netns exec "$host" unshare --uts \\
    /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$*"' "$host" "$@"
"""


class ClusterUnavailable(Exception):
    """This machine cannot host the cluster (not root, no ip/tc, no namespaces, subnet taken)."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check,
                          stdin=subprocess.DEVNULL)


def _sbin_on_path() -> None:
    """ip and tc live in sbin, which a bare PATH (env -i, some CI runners) leaves out even
    for root; the commands run here, and the agent, find them there."""
    os.environ["PATH"] = ":".join(dict.fromkeys(
        os.environ.get("PATH", "").split(":") + ["/usr/sbin", "/sbin"]))


def unavailable(racks: int = 1) -> str | None:
    """Why a cluster (of `racks` racks) cannot be made here, or None."""
    _sbin_on_path()
    if os.geteuid() != 0:
        return "the virtual cluster needs root (network namespaces, tc)"
    for tool in ("ip", "tc", "unshare", "hostname", "taskset", "nproc"):
        if not shutil.which(tool):
            return f"the virtual cluster needs `{tool}`, which is not on PATH"
    subnets = [_subnet(r) for r in range(racks)]

    def taken(network: str) -> ipaddress.IPv4Network | None:
        net = ipaddress.ip_network(network, strict=False)
        return next((s for s in subnets if s.overlaps(net)), None)

    for item in json.loads(_ip("-j", "addr").stdout or "[]"):
        if item.get("ifname", "").startswith(PREFIX):
            continue
        for a in item.get("addr_info", []):
            if a.get("family") == "inet" and (subnet := taken(f"{a['local']}/{a['prefixlen']}")):
                return f"{subnet} is already used here ({item['ifname']} has {a['local']})"
    for route in json.loads(_ip("-j", "-4", "route").stdout or "[]"):
        dst = route.get("dst")
        if dst and dst != "default" and (subnet := taken(dst)):
            return f"{subnet} is already routed here (route to {dst})"
    return None


@dataclass
class Cluster:
    hosts: list[str]
    addresses: dict[str, str]
    agent: Path
    racks: list[list[str]]  # the hosts of each rack, in order; one rack: all of them
    _lock: object = field(repr=False, default=None)

    def run(self, host: str, argv: list[str], env: dict | None = None, timeout: float = 600,
            **kwargs) -> subprocess.CompletedProcess:
        """Run argv on `host` (its namespace, its host name); argv is never parsed by a shell.
        With CPUS in env, `host` runs in the CPU set it names (and so do the ranks MPI
        starts on other hosts through `agent`)."""
        return subprocess.run(self.command(host, argv, (env or {}).get(CPUS)), env=env,
                              timeout=timeout, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, **kwargs)

    def command(self, host: str, argv: list[str], cpus: str | None = None) -> list[str]:
        # $0 is the host name and "$@" the argv, passed through unparsed. cpus, as CPUS
        # (and AGENT): the CPU set to run in, so that ranks never trade cores between
        # launches, which made one launch in a few run 70% slower at 1 MiB.
        owner = {"own": host, "shared": self.hosts[0]}[cpus] if cpus else None
        pin = []
        if owner and (CPUSETS / owner).is_dir():
            pin = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"',
                   str(CPUSETS / owner / "cgroup.procs")]
        elif owner:
            pin = ["taskset", "-c", str(_cpu(owner))]
        return [*pin, "ip", "netns", "exec", host, "unshare", "--uts",
                "/bin/sh", "-c", 'hostname "$0" && exec "$@"', host, *map(str, argv)]

    def mpi_env(self, base: dict | None = None) -> dict[str, str]:
        """Environment that makes mpirun (PRRTE) and hydra start ranks through the agent,
        and keeps Open MPI's daemons and TCP transport on the cluster's subnets."""
        env = dict(os.environ if base is None else base)
        # Both take a comma-separated list of CIDR networks: every rack's, so that no
        # other interface qualifies. Open MPI's TCP BTL connects addresses on different
        # networks as well (its "weighted" reachability ranks two private addresses
        # 50 apart and 80 together, 0 only across address families), so ranks in two
        # racks connect through the router without a setting.
        subnets = ",".join(map(str, self.subnets))
        env.update(PRTE_MCA_plm_ssh_agent=str(self.agent),  # PRRTE 3 names its rsh launcher ssh
                   PRTE_MCA_oob_tcp_if_include=subnets,
                   OMPI_MCA_btl_tcp_if_include=subnets,
                   HYDRA_LAUNCHER="ssh", HYDRA_LAUNCHER_EXEC=str(self.agent),
                   # MPICH's default UCX netmod takes two ranks for one node when the
                   # machine's boot id matches, which it does in every namespace: it then
                   # joined the hosts by shared memory (UCX_PROTO_INFO=y showed
                   # "intra-node"). Its OFI netmod over TCP uses the veth links; ranks on
                   # one host still share memory through CH4's own shm, by host name.
                   MPIR_CVAR_CH4_NETMOD="ofi", FI_PROVIDER="tcp",
                   # Every host runs on this machine's cores. Ranks that spin while they
                   # wait leave none to the kernel's packet processing (softirq threads),
                   # which veth and tbf need: sample times then came in whole scheduler
                   # ticks (4 ms at HZ=250) and a shaped 800 Mbit/s link measured 27%
                   # off; yielding ranks measured it within 0.1%.
                   OMPI_MCA_mpi_yield_when_idle="1", MPIR_CVAR_CH4_PROGRESS_THROTTLE="1",
                   MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT="1")
        return env

    def tx_packets(self, host: str) -> int:
        """Packets `host` has sent on its cluster link: the proof that traffic crossed it."""
        out = json.loads(subprocess.run(["ip", "-n", host, "-j", "-s", "link", "show", "eth0"],
                                        capture_output=True, text=True, check=True).stdout)
        return out[0]["stats64"]["tx"]["packets"]

    def shape(self, host: str, rate_bps: float, burst_bytes: int | None = None,
              latency_s: float = 0.1) -> None:
        """Limit `host`'s link to rate_bps (bits/s) each way: tbf on both ends of its veth,
        with a bucket of burst_bytes (default: 2.5 ms at the rate, at least 64 KiB; a
        smaller bucket left 800 Mbit/s links at 75% when the 2 cores were late to refill it).

        tbf counts each packet's length at the qdisc, the Ethernet frame without
        FCS (no preamble or gap on a veth).
        """
        spec = _tbf(rate_bps, burst_bytes, latency_s)
        subprocess.run(["tc", "-netns", host, "qdisc", "replace", "dev", "eth0", *spec],
                       check=True)
        subprocess.run(["tc", "qdisc", "replace", "dev", self.link(host), *spec], check=True)

    def shape_to(self, host: str, dest: str, rate_bps: float, others_bps: float) -> None:
        """Limit what `host` sends to `dest` alone to rate_bps, and the rest it sends to
        others_bps: an htb class per rate on its end of the link, a u32 filter on the
        destination address choosing the slow one (the way a bad route or a port
        renegotiated down slows one pair). What `host` receives is left as it was.

        Called again on the same host, it reshapes in place, dropping no packet: the
        classes take the new rates, and the filter is made again only for another `dest`.
        So a link can be toggled by calling it alone (bench/watch_cluster.py's flap)."""
        def tc(*args: str) -> None:
            subprocess.run(["tc", "-netns", host, *args], check=True)

        burst = str(_burst(max(rate_bps, others_bps)))
        # r2q: each class's quantum (rate / r2q bytes) within the 1.5 KB to 200 KB htb wants
        r2q = str(max(10, int(max(rate_bps, others_bps) / 8 / 100_000)))
        # htb refuses `qdisc replace` over an htb ("Change operation not supported"), and
        # deleting it would drop what is queued: an htb of ours already there is kept
        if not self._htb(host):
            tc("qdisc", "replace", "dev", "eth0", "root", "handle", "1:", "htb", "default",
               "10", "r2q", r2q)
        for cls, rate in (("1:10", others_bps), ("1:20", rate_bps)):
            tc("class", "replace", "dev", "eth0", "parent", "1:", "classid", cls, "htb",
               "rate", f"{int(rate)}bit", "ceil", f"{int(rate)}bit", "burst", burst)
        # u32 cannot change a filter's match: `filter replace` adds a second filter without
        # a handle, and with one keeps the old address. Another dest's filter goes first.
        if self._slowed(host) != [self.addresses[dest]]:
            subprocess.run(["tc", "-netns", host, "filter", "del", "dev", "eth0", "parent",
                            "1:", "prio", "1"], capture_output=True, check=False)  # none: fine
            tc("filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1",
               "u32", "match", "ip", "dst", f"{self.addresses[dest]}/32", "flowid", "1:20")

    def _htb(self, host: str) -> bool:
        """Whether `host`'s link has shape_to's htb (handle 1:) as its root qdisc."""
        out = subprocess.run(["tc", "-netns", host, "-j", "qdisc", "show", "dev", "eth0"],
                             capture_output=True, text=True, check=True).stdout
        return any(q.get("root") and q.get("kind") == "htb" and q.get("handle") == "1:"
                   for q in json.loads(out or "[]"))

    def _slowed(self, host: str) -> list[str]:
        """The destination addresses shape_to's filters on `host` send to its slow class."""
        out = subprocess.run(["tc", "-netns", host, "filter", "show", "dev", "eth0"],
                             capture_output=True, text=True, check=True).stdout
        # u32 shows `match 0afb0003/ffffffff at 16`: the IPv4 destination, in hex
        return [str(ipaddress.ip_address(int(m, 16)))
                for m in re.findall(r"match ([0-9a-f]{8})/ffffffff at 16", out)]

    def classes(self, host: str) -> dict[str, float]:
        """The rate (bits/s) of each htb class on `host`'s end of its link, by class id:
        what shape_to set there, as the kernel holds it. Read from tc's text, which gives
        rates in SI units (Kbit = 1000 bit): its JSON (iproute2 6.1) leaves htb out."""
        out = subprocess.run(["tc", "-netns", host, "class", "show", "dev", "eth0"],
                             capture_output=True, text=True, check=True).stdout
        return {m[1]: float(m[2]) * _SI[m[3]] for m in
                re.finditer(r"^class htb (\S+) .*? rate ([\d.]+)([KMG]?)bit ", out, re.M)}

    @property
    def subnets(self) -> list[ipaddress.IPv4Network]:
        """Each rack's subnet, rack 0's first."""
        return [_subnet(r) for r in range(len(self.racks))]

    def rack(self, host: str) -> int:
        """The rack `host` is in: its index in `racks`."""
        for r, rack in enumerate(self.racks):
            if host in rack:
                return r
        raise ValueError(f"{host} is not a host of this cluster ({', '.join(self.hosts)})")

    def shape_trunk(self, rate_bps: float, burst_bytes: int | None = None,
                    latency_s: float = 0.1) -> None:
        """Limit the trunk to rate_bps (bits/s) each way: tbf on every leg of the router,
        what it sends into each rack, with `shape`'s bucket. All flows into a rack from
        the others then share one bucket, however many hosts send; flows within a rack
        never reach the router and are left as they were.

        Unlike a host's link, the bucket is not in the sender, whose TCP it cannot hold
        back: the sender is paced by the acknowledgements of what left the queue, and
        loses packets once more than latency_s of the rate waits in it, as behind a
        real switch's port.
        """
        if len(self.racks) < 2:
            raise ValueError("a cluster of one rack has no trunk: make it with up(n, racks=2)")
        spec = _tbf(rate_bps, burst_bytes, latency_s)
        for r in range(len(self.racks)):
            subprocess.run(["tc", "-netns", ROUTER, "qdisc", "replace", "dev", _port(r), *spec],
                           check=True)

    def trunk_sent(self, rack: int) -> tuple[int, int]:
        """Bytes and packets the router has sent into `rack` from the other racks, shaped
        or not: the proof that traffic crossed the trunk. The leg's own counters, which
        count a TCP segmentation-offload burst as one packet with one set of headers
        (tbf's count, as `sent` reads it, is of the frames on the wire)."""
        out = subprocess.run(["ip", "-n", ROUTER, "-j", "-s", "link", "show", _port(rack)],
                             capture_output=True, text=True, check=True).stdout
        tx = json.loads(out)[0]["stats64"]["tx"]
        return tx["bytes"], tx["packets"]

    def link(self, host: str) -> str:
        """The bridge's end of `host`'s link, in this (the root) namespace."""
        return _veth(self.hosts.index(host))

    def detach(self) -> None:
        """Leave the cluster up after this process: no lock held, no removal at exit."""
        atexit.unregister(down)
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def sent(self, host: str) -> tuple[int, int]:
        """Bytes and packets `host`'s link has sent through its shaper (inside its namespace)."""
        out = subprocess.run(["tc", "-netns", host, "-j", "-s", "qdisc", "show", "dev", "eth0"],
                             capture_output=True, text=True, check=True).stdout
        root = next(q for q in json.loads(out) if q.get("root"))
        return root["bytes"], root["packets"]


_SI = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}  # tc's rate prefixes (without -iec)


def _veth(k: int) -> str:
    return f"{PREFIX}-v{k}"


def _subnet(rack: int) -> ipaddress.IPv4Network:
    """Rack r's subnet: the r-th /24 after SUBNET, 10.251.r.0/24."""
    return ipaddress.ip_network((int(SUBNET.network_address) + rack * SUBNET.num_addresses,
                                 SUBNET.prefixlen))


def _gateway(rack: int) -> str:
    """The router's address in rack r."""
    return str(_subnet(rack).network_address + ROUTER_HOST)


def _bridge(rack: int) -> str:
    return BRIDGE if rack == 0 else f"{BRIDGE}{rack}"


def _leg(rack: int) -> str:
    """The bridge's end of the router's leg into rack r, in the root namespace."""
    return f"{PREFIX}-r{rack}"


def _port(rack: int) -> str:
    """The router's end of its leg into rack r, in the router's namespace."""
    return f"rack{rack}"


def _burst(rate_bps: float) -> int:
    """A token bucket's default size: 2.5 ms at the rate, at least 64 KiB; a smaller
    bucket left 800 Mbit/s links at 75% when the 2 cores were late to refill it."""
    return max(64 * 1024, int(rate_bps / 8 * 0.0025))


def _tbf(rate_bps: float, burst_bytes: int | None, latency_s: float) -> list[str]:
    """tc's words for a root tbf at rate_bps, with a bucket of burst_bytes (default
    `_burst`) and a queue of latency_s at the rate."""
    burst = _burst(rate_bps) if burst_bytes is None else burst_bytes
    return ["root", "tbf", "rate", f"{int(rate_bps)}bit", "burst", str(int(burst)),
            "latency", f"{latency_s * 1000:g}ms"]


def _layout(n: int, racks: int) -> list[list[str]]:
    """n hosts dealt to racks in order, as evenly as they go (the first racks take one
    more): 6 in 2 racks are h0-h2 and h3-h5, 5 are h0-h2 and h3-h4."""
    per, extra = divmod(n, racks)
    starts = [r * per + min(r, extra) for r in range(racks + 1)]
    return [[_host(k) for k in range(starts[r], starts[r + 1])] for r in range(racks)]


def _host(k: int) -> str:
    return f"{PREFIX}-h{k}"


def _cpu(host: str) -> int:
    """The CPU host k owns: k mod the CPUs installed."""
    return int(host.rsplit("-h", 1)[1]) % (os.cpu_count() or 1)


def _lock():
    STATE.mkdir(parents=True, exist_ok=True)
    lock = open(STATE / "lock", "w")
    deadline = time.monotonic() + 600
    while True:  # another run's cluster: wait for it to go down, never take it apart
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return lock
        except BlockingIOError:
            if time.monotonic() > deadline:
                lock.close()
                raise ClusterUnavailable("another test cluster stayed up for 10 minutes")
            time.sleep(0.5)


def up(n: int = 2, racks: int = 1) -> Cluster:
    """Make n hosts (n >= 2) on one bridge, or dealt in order to `racks` bridges joined by
    a router; whatever a killed run left is removed first."""
    if n < 2:
        raise ValueError("a cluster has at least 2 hosts")
    if not 1 <= racks <= n:
        raise ValueError(f"racks={racks}: from 1 to the {n} hosts, each rack has one at least")
    if -(-n // racks) >= ROUTER_HOST:  # .1 to .253: .254 is the router's
        raise ValueError(f"at most {ROUTER_HOST - 1} hosts in a rack: ask for more racks")
    reason = unavailable(racks)
    if reason:
        raise ClusterUnavailable(reason)
    lock = _lock()
    _remove()  # we hold the lock: anything of ours still here is stale
    cluster = None
    try:
        layout = _layout(n, racks)
        hosts = [h for rack in layout for h in rack]
        addresses = {h: str(_subnet(r).network_address + k + 1)
                     for r, rack in enumerate(layout) for k, h in enumerate(rack)}
        _make(layout, addresses)
        if racks > 1:
            _make_router(racks)
        _make_cpusets(hosts)
        agent = STATE / "agent"
        agent.write_text(AGENT)
        agent.chmod(0o755)
        cluster = Cluster(hosts, addresses, agent, layout, lock)
        atexit.register(down, cluster)
        return cluster
    except subprocess.CalledProcessError as exc:  # e.g. root without CAP_NET_ADMIN in a container
        raise ClusterUnavailable(f"`{' '.join(exc.cmd)}` failed: {exc.stderr.strip()}") from None
    finally:
        if cluster is None:
            _remove()
            lock.close()


@contextlib.contextmanager
def shaped(n: int, rate_bps: float | None, racks: int = 1, trunk_bps: float | None = None):
    """n hosts up in `racks` racks, every host's link shaped to rate_bps (tbf; None: not
    shaped) and the trunk between racks to trunk_bps (None: not shaped), and down at the
    end: the benches' cluster; ClusterUnavailable where this machine cannot make one."""
    cluster = up(n, racks)
    try:
        if rate_bps is not None:
            for host in cluster.hosts:
                cluster.shape(host, rate_bps)
        if trunk_bps is not None:
            cluster.shape_trunk(trunk_bps)
        yield cluster
    finally:
        down(cluster)


def _make(racks: list[list[str]], addresses: dict[str, str]) -> None:
    """Each rack's bridge and hosts; a host's only routes are its rack's subnet and, through
    the router, the other racks'."""
    k = 0
    for r, rack in enumerate(racks):
        _ip("link", "add", _bridge(r), "type", "bridge")
        _no_ipv6(None, _bridge(r))
        _ip("link", "set", _bridge(r), "up")
        for host in rack:
            _make_host(host, _veth(k), _bridge(r), addresses)
            for other in range(len(racks)):
                if other != r:
                    _ip("-n", host, "route", "add", str(_subnet(other)), "via", _gateway(r))
            k += 1


def _make_host(host: str, veth: str, bridge: str, addresses: dict[str, str]) -> None:
    _ip("netns", "add", host)
    _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", host)
    _no_ipv6(None, veth)
    _ip("link", "set", veth, "master", bridge, "up")
    _no_ipv6(host, "all")
    _ip("-n", host, "addr", "add", f"{addresses[host]}/{SUBNET.prefixlen}", "dev", "eth0")
    _ip("-n", host, "link", "set", "lo", "up")
    _ip("-n", host, "link", "set", "eth0", "up")
    etc = NETNS_ETC / host
    etc.mkdir(parents=True, exist_ok=True)
    (etc / "hosts").write_text("127.0.0.1 localhost\n" + "".join(
        f"{a} {h}\n" for h, a in addresses.items()))


def _make_router(racks: int) -> None:
    """The router namespace: a leg on each rack's bridge with the rack's router address,
    forwarding between them. It sends no ICMP redirects, which would tell a host to
    reach a peer around the router, and so around the trunk's shaper (the kernel sends
    one for a packet that leaves by the leg it came in on, when `all` or that leg's
    send_redirects is on; both are on by default)."""
    _ip("netns", "add", ROUTER)
    for r in range(racks):
        _ip("link", "add", _leg(r), "type", "veth", "peer", "name", _port(r), "netns", ROUTER)
        _no_ipv6(None, _leg(r))
        _ip("link", "set", _leg(r), "master", _bridge(r), "up")
        _ip("-n", ROUTER, "addr", "add", f"{_gateway(r)}/{SUBNET.prefixlen}", "dev", _port(r))
        _ip("-n", ROUTER, "link", "set", _port(r), "up")
    _ip("-n", ROUTER, "link", "set", "lo", "up")
    _no_ipv6(ROUTER, "all")
    _sysctl(ROUTER, "net/ipv4/ip_forward", "1")
    for conf in ("all", "default", *map(_port, range(racks))):
        _sysctl(ROUTER, f"net/ipv4/conf/{conf}/send_redirects", "0")


def _make_cpusets(hosts: list[str]) -> None:
    """Host k's CPU set: the cpuset cgroup cscl-hK holding CPU k mod the CPUs, which no
    process in it can leave (the kernel bounds every affinity a process asks for by its
    cpuset). taskset alone was undone: Open MPI's daemon on the second host, pinned to
    CPU 1, bound its rank to CPU 0 (for 2 ranks it binds each to a core, and took the
    machine's first). Where cgroup v1's cpuset is not mounted or not writable (cgroup v2
    only, some containers), there are none, and a host's processes are only pinned with
    taskset, which a launcher may undo."""
    if not (CPUSET / "cpuset.cpus").is_file() or not os.access(CPUSET, os.W_OK):
        return
    for host in hosts:
        (CPUSET / host).mkdir(exist_ok=True)
        (CPUSET / host / "cpuset.cpus").write_text(str(_cpu(host)))
        (CPUSET / host / "cpuset.mems").write_text((CPUSET / "cpuset.mems").read_text())
    CPUSETS.mkdir(exist_ok=True)
    subprocess.run(["mount", "--bind", str(CPUSET), str(CPUSETS)], capture_output=True,
                   text=True, check=True)


def _no_ipv6(host: str | None, iface: str) -> None:
    """IPv6 off: no link-local addresses, so no traffic the subnet rules do not cover."""
    key = f"net/ipv6/conf/{iface}/disable_ipv6"
    if host is None:
        if os.path.exists(f"/proc/sys/{key}"):
            Path(f"/proc/sys/{key}").write_text("1")
    else:
        _sysctl(host, key, "1", check=False)  # a kernel without IPv6 has none to turn off


def _sysctl(namespace: str, key: str, value: str, check: bool = True) -> None:
    """Set /proc/sys/KEY in a namespace: /proc/sys/net shows the network namespace of the
    process that opens it, so it is written from inside."""
    subprocess.run(["ip", "netns", "exec", namespace, "sh", "-c",
                    f"echo {value} > /proc/sys/{key}"], capture_output=True, text=True,
                   check=check)


def down(cluster: Cluster | None = None) -> list[str]:
    """Remove the cluster (this one, or a stale one); what was removed."""
    _sbin_on_path()
    removed = _remove()
    if cluster is not None and cluster._lock is not None:
        cluster._lock.close()  # releases the flock
        cluster._lock = None
        atexit.unregister(down)
    return removed


def _remove() -> list[str]:
    removed = []
    namespaces = [line.split()[0] for line in _ip("netns", "list", check=False).stdout.splitlines()
                  if line.startswith(f"{PREFIX}-")]
    for ns in namespaces:
        # Processes left in a host (ranks or daemons of a killed run) are ours: end them by id.
        _kill(_ip("netns", "pids", ns, check=False).stdout.split())
        _ip("netns", "del", ns, check=False)
        removed.append(f"netns {ns}")
        shutil.rmtree(NETNS_ETC / ns, ignore_errors=True)
    # Deleting a namespace deletes its veth end, and the peer with it; the bridge stays.
    for item in json.loads(_ip("-j", "link", "show", check=False).stdout or "[]"):
        name = item.get("ifname", "")
        if name.startswith(f"{PREFIX}-"):
            _ip("link", "del", name, check=False)
            removed.append(f"link {name}")
    if NETNS_ETC.is_dir() and not any(NETNS_ETC.iterdir()):
        NETNS_ETC.rmdir()
    if os.path.ismount(CPUSETS):
        subprocess.run(["umount", "--lazy", str(CPUSETS)], capture_output=True, check=False)
        removed.append(f"mount {CPUSETS}")
    if CPUSETS.is_dir():
        CPUSETS.rmdir()
    for group in sorted(CPUSET.glob(f"{PREFIX}-h*")):
        _remove_cpuset(group)
        removed.append(f"cpuset {group.name}")
    (STATE / "agent").unlink(missing_ok=True)
    return removed


def _remove_cpuset(group: Path) -> None:
    """A cpuset can be removed once no process is in it: those left are ours, and a killed
    process leaves it as it exits, soon after the signal."""
    deadline = time.monotonic() + 10
    while True:
        _kill((group / "cgroup.procs").read_text().split())
        try:
            group.rmdir()
            return
        except OSError:  # EBUSY: a process is still in it
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _kill(pids: list[str]) -> None:
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
