"""How a process of the agent is started: its environment from nothing, the user it
drops to, and the mount namespace it is confined in.

Tokens stay with the runner and the MCP server: never in the agent's environment,
its files, a git config, the MCP config, or a command line (``/proc/*/cmdline``
is world-readable).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tusk.git.agent import AgentGit
from tusk.steps.run_claude.box.bwrap import Box
from tusk.steps.run_claude.box.folders import RunDirs
from tusk.steps.run_claude.box.principal import AGENT_SHELL, SAFE_PATH, Principal

# --------------------------------------------------------------------------- environment


def agent_env(
    *,
    home: Path,
    tmp: Path,
    model_proxy_url: str,
    model_key: str,
    max_retries: int,
    egress_proxy_url: str | None = None,
    shell: str = AGENT_SHELL,
) -> dict[str, str]:
    """The agent's whole environment, from nothing, and no secret in it: the model is
    reached through the run's model proxy, which adds the real key; ``model_key`` is
    only the proxy's own key for this run (good for nothing else, and dead when the run
    ends). With the network fenced, every other HTTP(S) client the agent runs goes
    through the egress proxy. The URLs are the servers' as the agent reaches them
    (inside its box: ``place.endpoints``)."""
    env = {
        "HOME": str(home),
        # Claude Code's temp folder (else /tmp/claude-<uid>, which anyone may create
        # first and so stop the run) and every tool's, inside the run's own folder.
        "TMPDIR": str(tmp),
        "CLAUDE_CODE_TMPDIR": str(tmp),
        "PATH": SAFE_PATH,
        "SHELL": shell,  # what Claude Code runs its tools in (``Box.shell``)
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


# --------------------------------------------------------------------------- the box


@dataclass(frozen=True)
class Launch:
    """How to start a process as the agent: the command and who it starts as."""

    argv: list[str]
    spawn: Spawn


BoxCommand = Callable[[Sequence[str]], list[str]]


def agent_launch(argv: Sequence[str], user: Principal | None, *, box: BoxCommand | None) -> Launch:
    """In the agent's box (``bwrap``) when this process is root and the run has one: the
    box itself becomes the agent. Else dropped to ``user`` directly (``spawn_as``),
    with none of the box's namespaces."""
    if user is None or user.uid == os.getuid() or os.geteuid() != 0 or box is None:
        return Launch(list(argv), spawn_as(user))
    return Launch(box(argv), Spawn())


def agent_git(dirs: RunDirs, agent: Principal | None, box: Box | None) -> AgentGit:
    """git in the workspace as the agent: the user named here, never whoever the path
    turns out to belong to (the agent owns its home, so it could re-point the folders
    above the workspace), and in a box like the agent's own, with no road out: a
    process of the agent's uid outside it would let the agent reach the host through
    ``/proc/<pid>/root``. Without isolation, as this process, like the agent itself."""
    if agent is None:
        return AgentGit(dirs.workspace)
    if box is None:
        return AgentGit(dirs.workspace, uid=agent.uid, gid=agent.gid)
    return AgentGit(
        dirs.workspace,
        uid=agent.uid,
        gid=agent.gid,
        confine=lambda argv: box.plain(argv, cwd=dirs.workspace),
    )
