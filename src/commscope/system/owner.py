"""Which process owns a run, a sweep or a temporary folder, and whether it still lives.

A process is named by its host, its pid and its start time (in clock ticks since boot,
/proc/PID/stat field 22) under the boot it started in: a pid alone is reused, a start
time is not. So a run whose command was killed (SIGKILL, a power cut, an OOM kill) is
told from one still measuring without any timeout: on the same host, its owner's
(pid, start) is gone. On another host nothing can be told, and nothing is assumed.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
from functools import cache
from pathlib import Path

from .errors import UserError

TMP_PREFIX = "commscope-"
OWNER_FILE = "owner.json"


def _start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # field 22: fields 3.. follow the ")"


@cache
def _boot() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def me() -> dict:
    """This process, as an owner."""
    return {"host": socket.gethostname(), "pid": os.getpid(),
            "start": _start_ticks(os.getpid()), "boot": _boot()}


def gone(owner: dict | None) -> bool:
    """Whether the owner is known to have ended: on this host and boot, its (pid, start)
    is no longer a process. False where that cannot be told (another host, no /proc)."""
    if not owner or owner.get("host") != socket.gethostname() or owner.get("start") is None:
        return False
    if owner.get("boot") != _boot():
        return True  # the machine restarted since
    return _start_ticks(owner["pid"]) != owner["start"]


def _base() -> str:
    """TMPDIR itself: Python would quietly fall back to /tmp, the MPI library would not."""
    return os.environ.get("TMPDIR") or tempfile.gettempdir()


def check_temp() -> None:
    """Refuse, before anything is launched, a temporary directory that takes no folder:
    the ranks' records go there, and so do the MPI library's own session files."""
    where = _base()
    try:
        Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=where)).rmdir()
    except OSError as exc:
        raise UserError(f"TMPDIR {where}: cannot create a folder there ({exc.strerror}); "
                        "set TMPDIR to a writable directory") from None


def temp_folder(db: Path, adopt) -> Path:
    """A new temporary folder for one launch into results file `db`, marked as this
    process's, after removing those of commscope processes that are gone (a command
    killed by SIGKILL leaves its folder: the ranks' records, up to a few MB). Before a
    folder goes, `adopt(its db)` opens its results file, which stores the cases its ranks
    finished after their command died (Store.adopt_orphans)."""
    base = Path(_base())
    for old in base.glob(f"{TMP_PREFIX}*/{OWNER_FILE}"):
        try:
            held = json.loads(old.read_text())
        except (OSError, ValueError):
            continue  # another's, being written or removed
        if not gone(held):
            continue
        try:
            if Path(held.get("db", "")).is_file():
                adopt(held["db"])
        except Exception:  # a results file that cannot be opened keeps what it has
            pass
        shutil.rmtree(old.parent, ignore_errors=True)
    path = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=base))
    (path / OWNER_FILE).write_text(json.dumps({**me(), "db": str(Path(db).resolve())}))
    return path
