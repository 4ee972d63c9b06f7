"""Slurm on the virtual cluster: slurmctld on the first host, a slurmd on every host.

Debian's Slurm 22.05 (`slurmctld`, `slurmd`, `slurm-client`) and `munge`, installed by
`make test` as root. Each daemon runs in its host's network and UTS namespaces under the
host's name (commscope.system.cluster's `command`), so Slurm sees N machines. Everything the
daemons read or write is in one temporary folder: slurm.conf (pointed at by SLURM_CONF,
for the daemons and for srun, salloc, sbatch and scancel alike), the munge key and
socket, spool and state folders, logs and pid files. `stop` ends the daemons and removes
the folder; it runs at exit too, and the fixture calls it on any outcome.

Choices, each the simplest that works in namespaces without systemd or cgroups:
proctrack/linuxproc (process tree, no cgroup), task/none, select/cons_tres by core,
jobacct_gather/none, SlurmUser root (the tests run as root), and one munged for all
hosts: its socket is a file, which every namespace reaches.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from commscope.system.cluster import Cluster

DAEMONS = ("slurmctld", "slurmd", "munged", "srun", "sbatch", "salloc", "scancel", "sinfo")
# Where Debian puts them; sbin is off a bare PATH
SEARCH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])

CONF = """\
ClusterName=cscl
SlurmctldHost={controller}({controller_address})
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={munge_socket}
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
ReturnToService=2
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd-%n.pid
SlurmdSpoolDir={root}/spool/%n
StateSaveLocation={root}/state
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd-%n.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=60
{nodes}
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
"""


def _cgroup_mounts() -> str:
    """Shell commands that mount this machine's cgroup file systems again, as they are here.

    `ip netns exec` mounts a fresh /sys, without /sys/fs/cgroup, and slurmd 22.05 loads its
    cgroup plugin whatever the proctrack and task plugins (it ends at "No filesystem
    mounted on /sys/fs/cgroup"). Mounting a hierarchy again with its options gives the
    same hierarchy, so the slurmds see what the machine has (v1, v2 or both)."""
    steps = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        source, target, kind, options = line.split()[:4]
        if target.startswith("/sys/fs/cgroup") and kind in ("tmpfs", "cgroup", "cgroup2"):
            steps.append(f"mkdir -p {target} && mount -t {kind} -o {options} {source} {target}")
    return " && ".join(steps) or "true"


def missing() -> str | None:
    """Why Slurm cannot run here, or None."""
    for tool in DAEMONS:
        if not shutil.which(tool, path=SEARCH):
            return f"Slurm needs `{tool}` (make test installs slurmctld, slurmd, slurm-client " \
                   "and munge as root)"
    return None


@dataclass
class Slurm:
    cluster: Cluster
    root: Path
    env: dict  # SLURM_CONF, PATH with sbin, the cluster's MPI settings
    _procs: list = field(default_factory=list, repr=False)

    def run(self, host: str, argv: list[str], timeout: float = 300,
            **kwargs) -> subprocess.CompletedProcess:
        """argv on `host` with Slurm's client configuration, output captured."""
        return subprocess.run(self.cluster.command(host, argv), env={**self.env, **kwargs.pop(
            "env", {})}, timeout=timeout, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, **kwargs)

    def stop(self) -> None:
        for proc in reversed(self._procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self._procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._procs.clear()
        shutil.rmtree(self.root, ignore_errors=True)
        atexit.unregister(self.stop)


def start(cluster: Cluster, cpus: int = 2, ready_s: float = 60) -> Slurm:
    """munged, slurmctld on the first host and a slurmd on each, every node with `cpus`
    CPUs; returns once sinfo shows every node idle."""
    root = Path(tempfile.mkdtemp(prefix="commscope-slurm-"))
    for d in ("spool", "state", "munge"):
        (root / d).mkdir()
    for host in cluster.hosts:
        (root / "spool" / host).mkdir()
    key = root / "munge" / "munge.key"
    key.write_bytes(os.urandom(128))
    key.chmod(0o400)
    socket = root / "munge" / "munge.socket"
    nodes = "\n".join(f"NodeName={h} NodeAddr={cluster.addresses[h]} CPUs={cpus} State=UNKNOWN"
                      for h in cluster.hosts)
    first = cluster.hosts[0]
    # Slurm's PMIx plugin makes a folder per step under this base, named by job and step
    # only: the hosts share /tmp, so each slurmd gets its own folder at the one path (a
    # bind mount in its own mount namespace, where its steps' ranks run too).
    (root / "mpi.conf").write_text(f"PMIxCliTmpDirBase={root}/pmix\n")
    for host in ["pmix", *(f"pmix-{h}" for h in cluster.hosts)]:
        (root / host).mkdir()
    conf = root / "slurm.conf"
    conf.write_text(CONF.format(controller=first, controller_address=cluster.addresses[first],
                                munge_socket=socket, root=root, nodes=nodes))
    env = cluster.mpi_env({**os.environ, "PATH": SEARCH, "SLURM_CONF": str(conf)})
    slurm = Slurm(cluster, root, env)
    atexit.register(slurm.stop)
    try:
        daemon = dict(env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL)
        slurm._procs.append(subprocess.Popen(
            [shutil.which("munged", path=SEARCH), "--foreground", "--force",
             f"--key-file={key}", f"--socket={socket}", f"--pid-file={root}/munged.pid",
             f"--log-file={root}/munged.log", f"--seed-file={root}/munge/seed"], **daemon))
        _wait(lambda: socket.exists(), 10, "munged made no socket")
        slurm._procs.append(subprocess.Popen(cluster.command(
            first, [shutil.which("slurmctld", path=SEARCH), "-D", "-i", "-f", str(conf)]),
            **daemon))
        mounts = _cgroup_mounts()
        for host in cluster.hosts:
            slurmd = [shutil.which("slurmd", path=SEARCH), "-D", "-N", host, "-f", str(conf)]
            own = f"mount --bind {root}/pmix-{host} {root}/pmix"
            slurm._procs.append(subprocess.Popen(cluster.command(
                host, ["/bin/sh", "-c", f'{mounts} && {own} && exec "$@"', "slurmd", *slurmd]),
                **daemon))
        _wait(lambda: _idle(slurm) == len(cluster.hosts), ready_s,
              "the slurmds did not all register")
        return slurm
    except RuntimeError as exc:
        logs = "\n".join(f"--- {log.name}:\n" + "\n".join(log.read_text().splitlines()[-8:])
                         for log in sorted(root.glob("*.log")))
        slurm.stop()
        raise RuntimeError(f"{exc}\n{logs}") from None
    except BaseException:
        slurm.stop()
        raise


def _idle(slurm: Slurm) -> int:
    done = slurm.run(slurm.cluster.hosts[0], ["sinfo", "-h", "-N", "-o", "%N %t"], timeout=20)
    return sum(line.split()[1] == "idle" for line in done.stdout.splitlines()
               if len(line.split()) == 2)


def _wait(ready, seconds: float, why: str) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise RuntimeError(why)
        time.sleep(0.3)
