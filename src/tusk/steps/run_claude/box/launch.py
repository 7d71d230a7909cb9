"""How a process of the agent is started: its environment from nothing, the user it
drops to, and the mount namespace it is confined in.

Tokens stay with the runner and the MCP server: never in the agent's environment,
its files, a git config, the MCP config, or a command line (``/proc/*/cmdline``
is world-readable).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tusk.git.agent import AgentGit
from tusk.steps.run_claude.box.folders import RunDirs
from tusk.steps.run_claude.box.principal import AGENT_SHELL, SAFE_PATH, SBIN_PATH, Principal

# --------------------------------------------------------------------------- environment


def agent_env(
    *,
    home: Path,
    model_proxy_url: str,
    model_key: str,
    max_retries: int,
    egress_proxy_url: str | None = None,
) -> dict[str, str]:
    """The agent's whole environment, from nothing, and no secret in it: the model is
    reached through the run's model proxy, which adds the real key; ``model_key`` is
    only the proxy's own key for this run (good for nothing else, and dead when the run
    ends). With the network fenced, every other HTTP(S) client the agent runs goes
    through the egress proxy."""
    env = {
        "HOME": str(home),
        "PATH": SAFE_PATH,
        "SHELL": AGENT_SHELL,
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": model_proxy_url,
        "ANTHROPIC_API_KEY": model_key,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_MAX_RETRIES": str(max_retries),
    }
    if egress_proxy_url:
        for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
            env[name] = egress_proxy_url
        # Loopback (the model proxy, the MCP server) is reached directly.
        env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


@dataclass(frozen=True)
class Spawn:
    """Who a child runs as, given to Popen as ``user``, ``group``, ``extra_groups`` and
    ``umask`` (with ``start_new_session=True``). None keeps this process's own user,
    group and groups; a user dropped to gets only ``extra_groups`` beside its group."""

    user: int | None = None
    group: int | None = None
    extra_groups: tuple[int, ...] | None = None
    umask: int = 0o027  # nothing the agent writes is readable by others


def spawn_as(user: Principal | None, *, extra_groups: Sequence[int] = ()) -> Spawn:
    """The child drops to ``user`` itself: no runuser or sudo process in between whose
    command line would carry anything."""
    if user is None or user.uid == os.getuid():
        return Spawn()
    return Spawn(user=user.uid, group=user.gid, extra_groups=tuple(extra_groups))


# --------------------------------------------------------------------------- confinement

# Local services that reach the network for whoever asks them over a Unix socket,
# which no firewall rule sees: systemd-resolved (DNS by D-Bus or its varlink socket,
# so a name like <data>.example.net leaves the machine), nscd, avahi (mDNS) and snapd
# (searches of the snap store). GitHub's Ubuntu runners run resolved and snapd. In the
# agent's own mount namespace they are covered up: an empty folder, /dev/null.
MASKED_PATHS = (
    Path("/run/dbus"),
    Path("/run/systemd/resolve"),
    Path("/run/nscd"),
    Path("/run/avahi-daemon"),
    Path("/run/snapd.socket"),
    Path("/run/snapd-snap.socket"),
)
# Run as root in the new mount namespace: cover each path given before "--", then
# become the agent (no groups, no capabilities, none to gain from setuid files) and
# run the rest.
# Its arguments: mount, setpriv, uid, gid, the paths, "--", the command.
_CONFINE_SCRIPT = (
    'set -e; mount=$1 setpriv=$2 uid=$3 gid=$4; shift 4; while [ "$1" != -- ]; do '
    'if [ -d "$1" ]; then "$mount" -t tmpfs -o ro,size=4k,mode=0755,nosuid,nodev,noexec '
    'tusk-masked "$1"; else "$mount" --bind /dev/null "$1"; fi; shift; done; shift; '
    'exec "$setpriv" --reuid="$uid" --regid="$gid" --clear-groups '
    '--inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"'
)


def confinement_tools() -> dict[str, str] | None:
    """Where unshare, setpriv and mount are (util-linux), or None when one is missing."""
    found = {name: shutil.which(name, path=SBIN_PATH) for name in ("unshare", "setpriv", "mount")}
    if any(path is None for path in found.values()):
        return None
    return {name: str(path) for name, path in found.items()}


def confined(
    argv: Sequence[str],
    user: Principal,
    *,
    tools: Mapping[str, str],
    masked: Sequence[Path] = MASKED_PATHS,
) -> list[str]:
    """``argv`` run as ``user`` in a mount namespace of its own, where ``masked`` are
    covered up. Started as root; the namespace is private, so the host sees nothing
    of it, and its mounts, made by root, cannot be undone by the agent (the kernel
    locks them against less privileged namespaces)."""
    present = [str(path) for path in masked if os.path.lexists(path)]
    return [
        tools["unshare"],
        "--mount",
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        _CONFINE_SCRIPT,
        "tusk-agent",
        tools["mount"],
        tools["setpriv"],
        str(user.uid),
        str(user.gid),
        *present,
        "--",
        *argv,
    ]


def confinement_problem(
    user: Principal,
    *,
    tools: Mapping[str, str],
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> str | None:
    """Why the confinement cannot start here (None when it can), found by starting it
    once around ``true``. Root in a container without CAP_SYS_ADMIN (a self-hosted
    runner in Docker, say) has the tools but may not make a mount namespace."""
    try:
        done = run(
            confined(["true"], user, tools=tools),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if done.returncode == 0:
        return None
    return done.stderr.strip()[-300:] or f"exit status {done.returncode}"


@dataclass(frozen=True)
class Launch:
    """How to start a process as the agent: the command and who it starts as."""

    argv: list[str]
    spawn: Spawn


def agent_launch(
    argv: Sequence[str],
    user: Principal | None,
    *,
    tools: Mapping[str, str] | None,
    masked: Sequence[Path] = MASKED_PATHS,
) -> Launch:
    """Confined when this process is root and ``tools`` were found; else dropped to
    ``user`` directly (``spawn_as``), without the covered-up sockets."""
    if user is None or user.uid == os.getuid() or os.geteuid() != 0 or tools is None:
        return Launch(list(argv), spawn_as(user))
    # Started as root: the confinement itself becomes the agent (setpriv).
    return Launch(confined(argv, user, tools=tools, masked=masked), Spawn())


def agent_git(
    dirs: RunDirs, agent: Principal | None, confine: Mapping[str, str] | None
) -> AgentGit:
    """git in the workspace as the agent: the user named here, never whoever the path
    turns out to belong to (the agent owns its home, so it could re-point the folders
    above the workspace), and in the agent's confinement like the agent itself. Without
    isolation, as this process, like the agent itself."""
    if agent is None:
        return AgentGit(dirs.workspace)
    if confine is None:
        return AgentGit(dirs.workspace, uid=agent.uid, gid=agent.gid)
    return AgentGit(
        dirs.workspace,
        uid=agent.uid,
        gid=agent.gid,
        confine=lambda argv: confined(argv, agent, tools=confine),
    )
