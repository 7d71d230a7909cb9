"""The run's folders and what the agent may reach of the host's.

Directory layout of one run (``base`` = ``/home/<run user>``, root-owned,
traversable, not listable):

    base/mcp.json         the MCP config: the MCP server's URL inside the box and
                          this run's bearer secret (0600, the agent user's alone)
    base/context/         task, context and diff, readable by the agent
    base/bin/claude       a link or copy of Claude Code when its own path is closed
    base/home/            the agent's HOME (0700, agent-owned; the user's passwd home)
    base/workspace/       the repository checkout the agent works in (agent-owned)
    base/tmp/             TMPDIR and Claude Code's temp folder (agent-owned)
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tusk.steps.run_claude.box.principal import USERS_ROOT, IsolationError, Principal

# --------------------------------------------------------------------------- paths


def can_reach(
    path: Path,
    *,
    uid: int,
    gids: Sequence[int],
    need: int,
    stat_of: Callable[[Path], os.stat_result] = os.stat,
) -> bool:
    """Whether ``uid`` could open ``path`` with ``need`` (os.R_OK | os.X_OK ...):
    every parent directory searchable, the file itself allowing ``need``."""
    if uid == 0:
        return True
    path = path.resolve()
    checks = [(parent, os.X_OK) for parent in reversed(path.parents)] + [(path, need)]
    for item, wanted in checks:
        try:
            info = stat_of(item)
        except OSError:
            return False
        if not _allows(info, uid=uid, gids=gids, need=wanted):
            return False
    return True


def _allows(info: os.stat_result, *, uid: int, gids: Sequence[int], need: int) -> bool:
    mode = info.st_mode
    if info.st_uid == uid:
        shift = 6
    elif info.st_gid in gids:
        shift = 3
    else:
        shift = 0
    bits = (mode >> shift) & 0o7
    wanted = (
        (4 if need & os.R_OK else 0) | (2 if need & os.W_OK else 0) | (1 if need & os.X_OK else 0)
    )
    return bits & wanted == wanted


def close_to_others(paths: Iterable[Path], *, user: Principal) -> list[Path]:
    """Take "other" permissions off each existing path the agent could read.

    Meant for the runner's own folders (RUNNER_TEMP, the work folder, the
    runner's home), which hold step scripts, event payloads and env files.
    Returns the paths that were tightened.
    """
    changed = []
    gids = os.getgrouplist(user.name, user.gid)
    for path in paths:
        if not path.exists():
            continue
        readable = can_reach(path, uid=user.uid, gids=gids, need=os.R_OK)
        # A folder others may only traverse (0711) still opens every file whose
        # name is known: the runner's temp and work folders have predictable ones.
        passable = path.is_dir() and can_reach(path, uid=user.uid, gids=gids, need=os.X_OK)
        if not (readable or passable):
            continue
        info = path.stat()
        if info.st_uid == user.uid:
            continue
        os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o007)
        changed.append(path)
    return changed


@dataclass(frozen=True)
class RunDirs:
    base: Path
    home: Path
    workspace: Path
    context: Path
    mcp_config: Path
    bin: Path
    tmp: Path


def run_dirs(base: Path) -> RunDirs:
    return RunDirs(
        base=base,
        home=base / "home",
        workspace=base / "workspace",
        context=base / "context",
        mcp_config=base / "mcp.json",
        bin=base / "bin",
        tmp=base / "tmp",
    )


def prepare_run_dirs(base: Path, *, agent: Principal) -> RunDirs:
    """A new per-run directory: the agent owns its HOME and workspace, nothing else.
    It must not exist: an existing one belongs to another run."""
    dirs = run_dirs(base)
    base.parent.mkdir(parents=True, exist_ok=True)
    try:
        base.mkdir(mode=0o711)
    except FileExistsError:
        raise IsolationError(
            f"The run folder {base} exists already",
            "Another run uses it; runs never share a folder. Remove it if no run is going on.",
        ) from None
    os.chmod(base, 0o711)  # the agent may enter, not list
    for owned in (dirs.home, dirs.workspace, dirs.tmp):
        owned.mkdir(mode=0o700)
        os.chown(owned, agent.uid, agent.gid)
    # Readable by this run's agent (its group), never by another run's: /home/<user>
    # may be passed through by anyone, and /etc/passwd names every run's user.
    # setgid: what is put inside (the diff) gets the agent's group too.
    for shared in (dirs.context, dirs.bin):
        shared.mkdir(mode=0o750)
        os.chown(shared, -1, agent.gid)
        os.chmod(shared, 0o2750)
    return dirs


def place_context_file(dirs: RunDirs, source: Path, name: str) -> Path:
    """Copy ``source`` into the run's context folder, readable by its agent alone."""
    target = dirs.context / name
    shutil.copyfile(source, target)
    os.chmod(target, 0o640)
    return target


def agent_base(agent: Principal) -> Path:
    """The run folder of a run's own user: the parent of its passwd home."""
    return USERS_ROOT / agent.name


def reachable_claude(claude: Path, *, agent: Principal, dirs: RunDirs) -> Path:
    """The Claude Code binary at a path the agent can execute: its own, or a link/copy."""
    real = claude.resolve()
    if not real.is_file():
        raise IsolationError(
            f"Claude Code not found at {claude}",
            "Run `npm ci` in the Tusk checkout (package.json pins @anthropic-ai/claude-code).",
        )
    gids = os.getgrouplist(agent.name, agent.gid)
    if can_reach(real, uid=agent.uid, gids=gids, need=os.R_OK | os.X_OK):
        return real
    target = dirs.bin / "claude"
    try:
        os.link(real, target)  # same filesystem: instant, and a root-owned inode
    except OSError:
        shutil.copy2(real, target)
    os.chmod(target, 0o755)
    return target
