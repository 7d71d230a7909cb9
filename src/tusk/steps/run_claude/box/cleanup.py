"""What must not outlive a run: the agent's processes, and whatever its uid left in
the shared folders and in System V IPC."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tusk.steps.run_claude.box.folders import RunDirs
from tusk.steps.run_claude.box.principal import SAFE_PATH, SBIN_PATH, Principal

# --------------------------------------------------------------------------- cleanup


def processes_of(uid: int, proc: Path = Path("/proc")) -> list[int]:
    """Live processes whose real uid is ``uid`` (zombies hold nothing and are skipped)."""
    pids = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("State", "").strip().startswith(("Z", "X")):
            continue
        if int(fields.get("Uid", "-1 0").split()[0]) == uid:
            pids.append(int(entry.name))
    return pids


def end_processes_of(
    user: Principal, *, wait: float = 5.0, sleep: Callable[[float], None] = time.sleep
) -> list[int]:
    """SIGKILL every process the agent user still has, never root's or our own, and
    wait (up to ``wait`` seconds) until they are gone, so the user can be deleted.

    A listing of /proc and a kill per pid can be outrun: a process that forks and
    exits at once is never where the listing saw it, and it would outlive the run
    under a uid the next run's user may get. So the kill is ``kill(-1, SIGKILL)``
    sent by a process running as the agent user itself: the kernel signals every
    process of that uid in one sweep, during which no new one can be forked."""
    if user.uid in (0, os.getuid(), os.geteuid()):
        return []
    killed = processes_of(user.uid)  # what there was, for the record
    for _ in range(max(1, int(wait / 0.05))):
        kill_all_as(user)  # always: a chain may not show in any listing
        left = processes_of(user.uid)
        if not left:
            break
        killed.extend(pid for pid in left if pid not in killed)
        sleep(0.05)
    return killed


def kill_all_as(user: Principal) -> None:
    """``kill -9 -1`` run as ``user``: every process of that uid but the killer itself."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            ["kill", "-9", "-1"],  # the one spelling procps, util-linux and busybox share
            user=user.uid,
            group=user.gid,
            extra_groups=[],
            env={"PATH": SAFE_PATH},
            cwd="/",
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
        )


# Folders any user may create entries in (world-writable, sticky) on Debian and
# Ubuntu runners: the temp folders, shared memory, lock files, POSIX message queues
# and crash reports. Links among them (/var/lock, /run/shm) are followed once.
SHARED_TEMP = (
    Path("/tmp"),
    Path("/var/tmp"),
    Path("/dev/shm"),
    Path("/run/lock"),
    Path("/var/lock"),
    Path("/run/shm"),
    Path("/dev/mqueue"),
    Path("/var/crash"),
)
SYSV_IPC = Path("/proc/sysvipc")
# /proc/sysvipc file → ipcrm's option for that kind and the column naming its id.
_IPC_KINDS = (("shm", "-m", "shmid"), ("msg", "-q", "msqid"), ("sem", "-s", "semid"))


def remove_agent_traces(
    dirs: RunDirs,
    user: Principal | None,
    *,
    shared_temp: Sequence[Path] = SHARED_TEMP,
    scan_host: bool = False,
) -> None:
    """What must not outlive the run: its folder, and whatever its user left in the
    shared folders (Claude Code's ``/tmp/claude-<uid>`` and anything the agent
    wrote) and in System V IPC, so no later run, whose user is another (or, once
    this uid is free again, a new user with the same uid), can read it.

    ``scan_host``: the agent ran without its box, so it could write wherever the host
    lets any user: every world-writable folder of every writable local filesystem is
    found by scanning (``world_writable_dirs``), not taken from a list."""
    shutil.rmtree(dirs.base, ignore_errors=True)
    if user is not None:
        places = [*shared_temp, *world_writable_dirs()] if scan_host else shared_temp
        remove_left_by(user.uid, shared_temp=places)


# Filesystems no user writes files to, or that are not the host's to keep.
PSEUDO_FILESYSTEMS = frozenset(
    {"proc", "sysfs", "cgroup", "cgroup2", "devpts", "debugfs", "tracefs", "securityfs"}
    | {"pstore", "bpf", "configfs", "fusectl", "hugetlbfs", "autofs", "binfmt_misc"}
    | {"efivarfs", "nsfs", "squashfs", "iso9660", "ramfs", "rpc_pipefs", "nfsd"}
)


def writable_mounts(mounts: Path = Path("/proc/self/mounts")) -> list[Path]:
    """Mount points of local filesystems mounted read-write."""
    found = []
    for line in mounts.read_text(encoding="utf-8", errors="replace").splitlines():
        fields = line.split()
        if len(fields) < 4 or fields[2] in PSEUDO_FILESYSTEMS:
            continue
        if "ro" in fields[3].split(","):
            continue
        found.append(Path(fields[1].replace("\\040", " ")))
    return found


def world_writable_dirs(roots: Sequence[Path] | None = None) -> list[Path]:
    """Every folder anyone may create files in (mode o+w), on each of ``roots`` (the
    writable mounts) without crossing into another filesystem. A whole walk of the
    host's folders (not its files): seconds on a runner, so only for a run whose
    agent had no box."""
    found: list[Path] = []
    for root in roots if roots is not None else writable_mounts():
        try:
            device = root.lstat().st_dev
        except OSError:
            continue
        stack = [str(root)]
        while stack:
            try:
                entries = os.scandir(stack.pop())
            except OSError:
                continue
            with entries:
                for entry in entries:
                    try:
                        if not entry.is_dir(follow_symlinks=False):
                            continue
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if info.st_dev != device:
                        continue
                    if info.st_mode & 0o002:
                        found.append(Path(entry.path))
                    stack.append(entry.path)
    return found


def remove_left_by(uid: int, *, shared_temp: Sequence[Path] = SHARED_TEMP) -> list[str]:
    """Remove what ``uid`` owns in the shared folders and in System V IPC; returns
    what was removed. Never for root or ourselves."""
    if uid in (0, os.getuid()):
        return []
    removed: list[str] = []
    seen: set[Path] = set()
    for root in shared_temp:
        try:
            real = root.resolve(strict=True)
        except OSError:
            continue
        if real in seen or not real.is_dir():
            continue
        seen.add(real)
        for path in files_of(uid, real):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    path.unlink()
            removed.append(str(path))
    removed += remove_ipc_of(uid)
    return removed


def ipc_objects_of(uid: int, sysvipc: Path = SYSV_IPC) -> list[tuple[str, str]]:
    """System V shared memory segments, message queues and semaphore sets that ``uid``
    owns or created, as (ipcrm option, id). They outlive their creator's processes."""
    found = []
    for name, option, id_column in _IPC_KINDS:
        try:
            lines = (sysvipc / name).read_text().splitlines()
        except OSError:
            continue
        if not lines:
            continue
        header = lines[0].split()
        for line in lines[1:]:
            row = dict(zip(header, line.split(), strict=False))
            owners = {row.get("uid"), row.get("cuid")}
            if str(uid) in owners and row.get(id_column, "").isdigit():
                found.append((option, row[id_column]))
    return found


def remove_ipc_of(uid: int) -> list[str]:
    removed = []
    for option, ident in ipc_objects_of(uid):
        done = subprocess.run(
            ["ipcrm", option, ident],
            capture_output=True,
            check=False,
            env={"PATH": SBIN_PATH},
        )
        if done.returncode == 0:
            removed.append(f"ipc {option} {ident}")
    return removed


def clear_uid(user: Principal) -> list[str]:
    """Before a new run's user is used: end whatever still runs, and remove whatever
    still lies, under its uid. useradd hands out the uid of a deleted user again, and
    a run that was killed before its cleanup may have left processes or files under
    it; they must not become the new run's."""
    if user.uid in (0, os.getuid(), os.geteuid()):
        return []
    ended = end_processes_of(user)
    keys = ["keyrings"] if clear_keyrings(user.uid, user.gid) else []
    return [f"process {pid}" for pid in ended] + remove_left_by(user.uid) + keys


def files_of(uid: int, root: Path) -> list[Path]:
    """The topmost entries under ``root`` owned by ``uid`` (symlinks not followed).

    The user can only have made entries in folders it may write to: its own (taken
    whole) and world-writable ones, so only those are searched; a big /tmp full of
    other folders costs one listing."""
    found: list[Path] = []
    for folder, dirnames, filenames in os.walk(root):
        keep = []
        for name in [*dirnames, *filenames]:
            path = Path(folder) / name
            try:
                info = path.lstat()
            except OSError:
                continue
            if info.st_uid == uid:
                found.append(path)
            elif name in dirnames and stat.S_IMODE(info.st_mode) & 0o002:
                keep.append(name)
        dirnames[:] = keep
    return found


# --------------------------------------------------------------------------- keyrings

# keyctl(2) by its syscall number, since Python has no binding: the kernel keeps a
# uid's user keyrings after userdel, and useradd hands the uid out again, so a key the
# agent adds with `keyctl add user k v @u` would be the next run's to read.
KEYCTL_SYSCALL = {"x86_64": 250, "aarch64": 219}
KEYCTL_CLEAR = 7
USER_KEYRINGS = (-4, -5)  # KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING
_CLEAR_KEYRINGS = (
    "import ctypes, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "number, clear = int(sys.argv[1]), int(sys.argv[2])\n"
    "failed = [k for k in sys.argv[3:] if libc.syscall(number, clear, int(k)) != 0]\n"
    "sys.exit(1 if failed else 0)\n"
)


def clear_keyrings(uid: int, gid: int) -> bool:
    """Empty ``uid``'s user and user-session keyrings, as that uid (only the owner may
    clear them). Returns whether it was done; never for root or ourselves."""
    number = KEYCTL_SYSCALL.get(platform.machine())
    if number is None or uid in (0, os.getuid(), os.geteuid()):
        return False
    python = shutil.which("python3", path=SAFE_PATH) or sys.executable
    try:
        done = subprocess.run(
            [python, "-I", "-c", _CLEAR_KEYRINGS, str(number), str(KEYCTL_CLEAR)]
            + [str(k) for k in USER_KEYRINGS],
            user=uid,
            group=gid,
            extra_groups=[],
            env={"PATH": SAFE_PATH},
            cwd="/",
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


# --------------------------------------------------------------------------- after a crash

CLEANUP_FILE = "cleanup.json"


def record(run_dir: Path, **fields: object) -> None:
    """Add to what the cleanup step must undo for this run (``RUN_DIR/cleanup.json``):
    ``agent_user``/``agent_uid`` (this run's user), ``base`` (its folder), ``mcp_pid``,
    ``egress_pid``/``egress_config``."""
    path = run_dir / CLEANUP_FILE
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data.update(fields)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data) + "\n", encoding="utf-8")
    tmp.replace(path)
