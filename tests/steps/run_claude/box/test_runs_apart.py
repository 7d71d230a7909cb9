"""Nothing of a run reaches another run, however its agent tries (root).

Two runs on one host see each other's users in /etc/passwd and may pass
through each other's /home/<user>; what a run keeps there is its own agent's.
Nothing of a run's user outlives the run either.

The agent runs arbitrary commands as its own user, so it can fork as fast as it
can, leave files in every world-writable folder and create System V IPC
objects, which outlive every process. useradd gives a deleted user's uid to
the next user it creates: whatever the run leaves under its uid would become
the next run's.
"""

from __future__ import annotations

import select
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.steps.run_claude.conftest import require_root
from tusk.steps.run_claude.box import bwrap
from tusk.steps.run_claude.box import cleanup as box_cleanup
from tusk.steps.run_claude.box import folders as box_folders
from tusk.steps.run_claude.box import launch as box_launch
from tusk.steps.run_claude.box import principal as box_principal
from tusk.steps.run_claude.box import users as box_users

pytestmark = pytest.mark.e2e

# Each process forks and exits at once: the chain never stays at one pid.
FORK_CHAIN = "import os\nwhile True:\n    if os.fork():\n        os._exit(0)\n"


def as_user(user: box_principal.Principal, argv: list[str]) -> str:
    spawn = box_launch.spawn_as(user)
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": box_principal.SAFE_PATH},
        cwd="/",
        user=spawn.user,
        group=spawn.group,
        extra_groups=spawn.extra_groups,
        umask=spawn.umask,
        start_new_session=True,
    )
    return done.stdout


def start(user: box_principal.Principal, argv: list[str]) -> subprocess.Popen[bytes]:
    """A process of the user holding a pipe's write end, as each process it forks does."""
    spawn = box_launch.spawn_as(user)
    return subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={"PATH": box_principal.SAFE_PATH},
        cwd="/",
        user=spawn.user,
        group=spawn.group,
        extra_groups=spawn.extra_groups,
        umask=spawn.umask,
        start_new_session=True,
    )


def all_gone(process: subprocess.Popen[bytes], *, wait: float = 5.0) -> bool:
    """Whether every process holding the pipe has ended: only then does it read as
    closed. A listing of /proc would miss a chain that never stays at one pid."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], wait)
    return bool(ready) and process.stdout.read() == b""


def plant(user: box_principal.Principal, tag: str) -> list[Path]:
    """What an agent can leave behind without any process: files in the shared folders
    others may read, and System V IPC objects."""
    files = [Path(f"/run/lock/{tag}"), Path(f"/dev/shm/{tag}"), Path(f"/var/tmp/{tag}")]
    for path in files:
        as_user(user, ["sh", "-c", f"echo left > {path} && chmod 644 {path}"])
    for create in (["-M", "4096"], ["-Q"], ["-S", "1"]):
        as_user(user, ["ipcmk", *create])
    return files


def test_a_process_that_forks_as_fast_as_it_can_does_not_outlive_the_run(agent_user: str) -> None:
    require_root()
    user = box_users.create_run_user(agent_user, "chain-1")
    try:
        chain = start(user, ["python3", "-c", FORK_CHAIN])
        assert not all_gone(chain, wait=0.5)  # the chain runs on
        box_cleanup.end_processes_of(user)
        assert all_gone(chain)
        assert box_users.delete_run_user(user)
    finally:
        box_cleanup.kill_all_as(user)
        box_users.delete_run_user(user)


def test_files_and_ipc_objects_the_agent_leaves_go_with_the_run(agent_user: str) -> None:
    require_root()
    user = box_users.create_run_user(agent_user, "left-1")
    neighbour = box_users.create_run_user(agent_user, "left-1")  # another run, same host
    dirs = box_folders.prepare_run_dirs(box_folders.agent_base(user), agent=user)
    try:
        files = plant(user, f"left-by-{user.name}")
        theirs = plant(neighbour, f"left-by-{neighbour.name}")
        assert len(box_cleanup.ipc_objects_of(user.uid)) == 3
        box_cleanup.remove_agent_traces(dirs, user)
        assert not any(path.exists() for path in files)
        assert box_cleanup.ipc_objects_of(user.uid) == []
        # Only this run's: the other run's files and objects stay.
        assert all(path.exists() for path in theirs)
        assert len(box_cleanup.ipc_objects_of(neighbour.uid)) == 3
    finally:
        for principal in (user, neighbour):
            box_cleanup.remove_left_by(principal.uid)
            box_users.delete_run_user(principal)


def test_a_new_runs_uid_starts_clear_of_what_a_killed_run_left_under_it(agent_user: str) -> None:
    """A run killed before its cleanup leaves its uid's processes, files and IPC objects;
    when that uid is handed out again, nothing of it may belong to the new run."""
    require_root()
    dead = box_users.create_run_user(agent_user, "dead-1")
    try:
        files = plant(dead, f"left-by-{dead.name}")
        sleeper = start(dead, ["sleep", "600"])
        cleared = box_cleanup.clear_uid(dead)  # what create_run_user does for a new user
        assert all_gone(sleeper) and not any(path.exists() for path in files)
        assert box_cleanup.ipc_objects_of(dead.uid) == []
        assert len(cleared) >= 7  # the process, three files, three IPC objects
    finally:
        box_cleanup.kill_all_as(dead)
        box_cleanup.remove_left_by(dead.uid)
        box_users.delete_run_user(dead)


def test_creating_a_runs_user_clears_its_uid_first(
    agent_user: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_root()
    cleared: list[int] = []
    real = box_cleanup.clear_uid
    monkeypatch.setattr(
        box_cleanup, "clear_uid", lambda user: cleared.append(user.uid) or real(user)
    )
    user = box_users.create_run_user(agent_user, "clear-1")
    try:
        assert cleared == [user.uid]
    finally:
        box_users.delete_run_user(user)


def test_another_runs_agent_cannot_read_this_runs_context(agent_user: str, tmp_path: Path) -> None:
    require_root()
    ours = box_users.create_run_user(agent_user, "ctx-1")
    theirs = box_users.create_run_user(agent_user, "ctx-1")  # a run beside it
    dirs = box_folders.prepare_run_dirs(box_folders.agent_base(ours), agent=ours)
    try:
        source = tmp_path / "diff.patch"
        source.write_text("+private change\n")
        diff = box_folders.place_context_file(dirs, source, "diff.patch")
        read = ["sh", "-c", f"cat {diff} 2>&1; ls {dirs.context} {dirs.bin} 2>&1; true"]
        assert as_user(ours, read).startswith("+private change\n")
        seen = as_user(theirs, read)
        assert "private" not in seen and seen.count("Permission denied") == 3
    finally:
        box_cleanup.remove_agent_traces(dirs, ours)
        for principal in (ours, theirs):
            box_users.delete_run_user(principal)


def test_git_the_runner_runs_as_the_agent_runs_in_a_box_too(
    agent_user: str, tmp_path: Path
) -> None:
    """A process of the agent's uid outside its box would let the agent reach the host
    through /proc/<pid>/root: the workspace's git runs in a box of the same kind."""
    require_root()
    tools = bwrap.tools()
    assert tools is not None, f"missing: {bwrap.missing_tools()}"
    user = box_users.create_run_user(agent_user, "git-1")
    dirs = box_folders.prepare_run_dirs(box_folders.agent_base(user), agent=user)
    try:
        as_user(user, ["git", "init", "-q", str(dirs.workspace)])
        box = bwrap.Box(tools, user, dirs.base, tmp_path / "sock")
        git = box_launch.agent_git(dirs, user, box)
        assert git.confine is not None
        done = git.run(["rev-parse", "--show-toplevel"])
        assert done.returncode == 0, done.stderr
        seen = git.run(["-c", "alias.m=!hostname; id -u; ls /run", "m"]).stdout.decode()
        assert seen.split() == [bwrap.HOSTNAME, str(user.uid), "tusk"]
    finally:
        box_cleanup.remove_agent_traces(dirs, user)
        box_users.delete_run_user(user)


# keyctl(2) and add_key(2) by number (x86_64, aarch64): Python has no binding.
KEYS = """
import ctypes, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
add_key, keyctl = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
if sys.argv[1] == "add":
    key = libc.syscall(add_key, b"user", b"tusk-drop", b"left for the next run", 21, -4)
    print("added" if key > 0 else f"failed {ctypes.get_errno()}")
else:
    found = libc.syscall(keyctl, 10, -4, b"user", b"tusk-drop", 0)  # KEYCTL_SEARCH
    print("found" if found > 0 else "gone")
"""


def as_uid(uid: int, argv: list[str]) -> str:
    """As a bare uid, whether or not the system still names it."""
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        check=True,
        user=uid,
        group=uid,
        extra_groups=[],
        env={"PATH": box_principal.SAFE_PATH},
        cwd="/",
    ).stdout.strip()


def test_a_key_the_agent_leaves_in_its_keyring_is_gone_before_its_uid_is_reused(
    agent_user: str,
) -> None:
    """The kernel keeps a uid's user keyring after userdel, and useradd hands the uid
    out again: a key left there would be the next run's to read."""
    require_root()
    user = box_users.create_run_user(agent_user, "keys-1")
    try:
        assert as_user(user, ["python3", "-I", "-c", KEYS, "add"]).strip() == "added"
        assert as_uid(user.uid, ["python3", "-I", "-c", KEYS, "find"]) == "found"
        assert box_users.delete_run_user(user)
        assert as_uid(user.uid, ["python3", "-I", "-c", KEYS, "find"]) == "gone"
    finally:
        box_cleanup.clear_keyrings(user.uid, user.gid)
        box_users.delete_run_user(user)


def test_without_its_box_what_the_agent_left_anywhere_world_writable_is_found(
    agent_user: str, tmp_path: Path
) -> None:
    """A world-writable folder on no list (as /var/lib/php/sessions, mode 1733, on
    GitHub's Ubuntu images): a run without its box is cleaned up by scanning."""
    require_root()
    user = box_users.create_run_user(agent_user, "scan-1")
    dirs = box_folders.prepare_run_dirs(box_folders.agent_base(user), agent=user)
    drop = Path(tempfile.mkdtemp(prefix="tusk-sessions-", dir="/var/lib"))
    try:
        drop.chmod(0o1733)
        left = drop / f"sess-{user.name}"
        as_user(user, ["sh", "-c", f"echo left > {left}"])
        box_cleanup.remove_agent_traces(dirs, user)  # the list alone misses it
        assert left.exists()
        assert drop in box_cleanup.world_writable_dirs()
        box_cleanup.remove_agent_traces(dirs, user, scan_host=True)
        assert not left.exists()
    finally:
        shutil.rmtree(drop, ignore_errors=True)
        box_cleanup.remove_agent_traces(dirs, user)
        box_users.delete_run_user(user)


def test_in_its_box_the_agent_writes_nothing_to_the_host(agent_user: str) -> None:
    require_root()
    tools = bwrap.tools()
    assert tools is not None, f"missing: {bwrap.missing_tools()}"
    user = box_users.create_run_user(agent_user, "ro-1")
    dirs = box_folders.prepare_run_dirs(box_folders.agent_base(user), agent=user)
    drop = Path(tempfile.mkdtemp(prefix="tusk-sessions-", dir="/var/lib"))
    try:
        drop.chmod(0o1733)
        box = bwrap.Box(tools, user, dirs.base, dirs.base / "sock")
        tried = f"echo left > {drop}/x 2>&1; echo left > {dirs.workspace}/ok && echo own-ok"
        done = subprocess.run(
            box.plain(["/bin/sh", "-c", tried], cwd=dirs.workspace),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "Read-only file system" in done.stderr and "own-ok" in done.stdout
        assert list(drop.iterdir()) == []
    finally:
        shutil.rmtree(drop, ignore_errors=True)
        box_cleanup.remove_agent_traces(dirs, user)
        box_users.delete_run_user(user)
