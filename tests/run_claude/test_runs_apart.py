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
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.run_claude.conftest import require_root
from tusk.steps.run_claude.box import cleanup as box_cleanup
from tusk.steps.run_claude.box import fence
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


def test_a_dead_runs_rules_for_a_reused_uid_give_way_to_the_new_runs(agent_user: str) -> None:
    """The fence of a run killed before its cleanup stays in the kernel; the uid's next
    user must get its own rules, not a refusal and not the old ports."""
    require_root()
    found = fence.tools()
    user = box_users.create_run_user(agent_user, "rules-1")
    the_fence = fence.Fence(found)
    try:
        the_fence.apply(fence.FencePlan(uid=user.uid, ports=(1111,)))  # the dead run's
        the_fence.apply(fence.FencePlan(uid=user.uid, ports=(2222,)))  # the new run's
        chain = subprocess.run(
            [found["iptables"] or "iptables", "-w", "-S", fence.chain_name(user.uid)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "--dport 2222" in chain and "--dport 1111" not in chain
        jumps = subprocess.run(
            [found["iptables"] or "iptables", "-w", "-S", "OUTPUT"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert jumps.count(f"--uid-owner {user.uid} ") == 1
    finally:
        the_fence.remove(user.uid)
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


PROBE_SOCKETS = """
import socket, subprocess, sys
for path in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        print("open", flush=True)
    except OSError as error:
        print("refused", type(error).__name__, flush=True)
undo = subprocess.run(["umount", sys.argv[1].rsplit("/", 1)[0]], capture_output=True)
print("unmounted" if undo.returncode == 0 else "cannot unmount")
"""


def test_the_agent_cannot_reach_local_services_that_reach_the_network(agent_user: str) -> None:
    """systemd-resolved answers DNS questions (and so sends a name out) for any user over
    D-Bus or its own socket; no firewall rule sees a Unix socket. The agent runs in a
    mount namespace of its own where such sockets are covered up: a folder of them
    (as /run/dbus) and a socket file (as /run/snapd.socket)."""
    require_root()
    tools = box_launch.confinement_tools()
    assert tools is not None, "util-linux (unshare, setpriv, mount) is missing"
    user = box_users.create_run_user(agent_user, "masked-1")
    folder = Path(tempfile.mkdtemp(prefix="tusk-service-", dir="/run"))
    servers = []
    try:
        folder.chmod(0o755)
        for path in (folder / "bus", folder.with_suffix(".sock")):
            server = socket.socket(socket.AF_UNIX)
            server.bind(str(path))
            path.chmod(0o777)  # as a service's world-writable socket is
            server.listen(4)
            servers.append(server)
        probe = ["python3", "-c", PROBE_SOCKETS, str(folder / "bus"), str(folder) + ".sock"]
        masked = (folder, folder.with_suffix(".sock"))

        def run(tools: dict[str, str] | None) -> str:
            launch = box_launch.agent_launch(probe, user, tools=tools, masked=masked)
            done = subprocess.run(
                launch.argv,
                capture_output=True,
                text=True,
                env={"PATH": box_principal.SAFE_PATH},
                cwd="/",
                user=launch.spawn.user,
                group=launch.spawn.group,
                extra_groups=launch.spawn.extra_groups,
                umask=launch.spawn.umask,
                start_new_session=True,
            )
            return done.stdout + done.stderr

        assert run(None) == "open\nopen\ncannot unmount\n"  # dropped to the user alone
        assert run(tools) == (
            "refused FileNotFoundError\nrefused ConnectionRefusedError\ncannot unmount\n"
        )
        assert [p.name for p in folder.iterdir()] == ["bus"]  # the host's view is untouched
    finally:
        for server in servers:
            server.close()
        folder.with_suffix(".sock").unlink(missing_ok=True)
        shutil.rmtree(folder, ignore_errors=True)
        box_users.delete_run_user(user)


def test_git_the_runner_runs_as_the_agent_runs_confined_too(
    agent_user: str, tmp_path: Path
) -> None:
    """A process of the agent's uid outside its namespace would let the agent open the
    covered-up sockets through /proc/<pid>/root: the workspace's git runs inside."""
    require_root()
    from tusk.steps.run_claude.box import launch as box_launch
    from tusk.steps.run_claude.box import place as box_place

    user = box_users.create_run_user(agent_user, "git-1")
    dirs = box_folders.prepare_run_dirs(box_folders.agent_base(user), agent=user)
    try:
        as_user(user, ["git", "init", "-q", str(dirs.workspace)])
        git = box_launch.agent_git(dirs, user, box_place.confinement(user))  # probed: it works here
        assert git.confine is not None
        done = git.run(["rev-parse", "--show-toplevel"])
        assert done.returncode == 0, done.stderr
        mounts = git.run(["-c", "alias.m=!cat /proc/self/mountinfo", "m"]).stdout.decode()
        assert "tusk-masked" in mounts or not any(p.exists() for p in box_launch.MASKED_PATHS)
    finally:
        box_cleanup.remove_agent_traces(dirs, user)
        box_users.delete_run_user(user)
