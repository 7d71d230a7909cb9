"""Claude Code as a user that can reach no token (MISSION T3, T5).

The runner (root, or the Actions user re-run under sudo) creates or reuses an
unprivileged Linux user, prepares a per-run directory the agent owns (its
own HOME and the workspace), makes the pinned Claude Code binary reachable,
and builds the agent's environment from nothing. Tokens stay with the runner
and the MCP server: never in the agent's environment, its files, a git
config, the MCP config, or a command line (``/proc/*/cmdline`` is
world-readable).

Directory layout of one run (``base``, root-owned, traversable, not listable):

    base/mcp.json         the MCP config: a loopback URL, no secret
    base/context/         task, context and diff, readable by the agent
    base/bin/claude       a link or copy of Claude Code when its own path is closed
    base/home/            the agent's HOME (0700, agent-owned)
    base/workspace/       the repository checkout the agent works in (agent-owned)
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import signal
import stat
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from pydantic import SecretStr

from tusk.errors import UserError
from tusk.git_env import basic_auth_header, config_env

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
AGENT_SHELL = "/bin/bash"


class IsolationError(UserError):
    """Isolation could not be set up; under Actions the run must not go on."""


@dataclass(frozen=True)
class Principal:
    """A Linux identity processes are started as."""

    name: str
    uid: int
    gid: int
    home: Path


@dataclass(frozen=True)
class Decision:
    enabled: bool
    reason: str


def isolation_required(environ: Mapping[str, str]) -> bool:
    """Whether this run is in GitHub Actions, where isolation is never optional.

    The one exception is Tusk's own offline demo replayed by act
    (``ACT=true`` with ``TUSK_LOCAL_DEMO=1``), which an ordinary user may run
    without root; it then says plainly that isolation is off.
    """
    if environ.get("GITHUB_ACTIONS") != "true":
        return False
    local_demo = environ.get("ACT") == "true" and environ.get("TUSK_LOCAL_DEMO") == "1"
    return not local_demo


def decide(*, in_actions: bool, euid: int) -> Decision:
    """Isolation is mandatory in Actions; elsewhere it needs root or is plainly off."""
    if euid == 0:
        return Decision(True, "Claude Code runs as a separate unprivileged user")
    if in_actions:
        raise IsolationError(
            "User isolation cannot be set up: this step is not running as root",
            "Under GitHub Actions Claude Code must run as a separate Linux user. The "
            "run-claude action re-runs itself with `sudo`; make sure the runner has "
            "passwordless sudo (GitHub-hosted runners do), or run the job as root.",
        )
    return Decision(
        False,
        "OFF: not root, so no separate user can be created; Claude Code runs as the "
        "current user and can read whatever this user can (fine for a local demo, "
        "never for real tokens)",
    )


# --------------------------------------------------------------------------- users


def current_principal() -> Principal:
    entry = pwd.getpwuid(os.getuid())
    return Principal(entry.pw_name, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir))


def runner_principal(environ: Mapping[str, str]) -> Principal:
    """Who the MCP server runs as: the user who called sudo, else the current user."""
    sudo_uid = environ.get("SUDO_UID")
    if os.geteuid() == 0 and sudo_uid and sudo_uid.isdigit() and int(sudo_uid) != 0:
        entry = pwd.getpwuid(int(sudo_uid))
        return Principal(entry.pw_name, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir))
    return current_principal()


def ensure_user(name: str, *, forbidden_uids: Iterable[int] = ()) -> Principal:
    """Create ``name`` (with its own home) or reuse it; never root or the runner."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        completed = subprocess.run(
            ["useradd", "--create-home", "--user-group", "--shell", AGENT_SHELL, name],
            capture_output=True,
            text=True,
            check=False,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        )
        if completed.returncode != 0:
            raise IsolationError(
                f"Could not create the agent user {name!r}",
                f"useradd said: {completed.stderr.strip()}. Create the user yourself, or "
                "set agent.linux_user in tusk.yml to an existing unprivileged user.",
            ) from None
        entry = pwd.getpwnam(name)
    if entry.pw_uid == 0 or entry.pw_uid in set(forbidden_uids):
        raise IsolationError(
            f"The agent user {name!r} is root or the runner itself (uid {entry.pw_uid})",
            "Set agent.linux_user in tusk.yml to a dedicated unprivileged user.",
        )
    privileged = sorted(privileged_groups(name, entry.pw_gid))
    if privileged:
        raise IsolationError(
            f"The agent user {name!r} belongs to privileged group(s): {', '.join(privileged)}",
            "Membership of these groups leads to root. Remove the user from them, or set "
            "agent.linux_user in tusk.yml to a dedicated unprivileged user.",
        )
    home = Path(entry.pw_dir)
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, entry.pw_uid, entry.pw_gid)
    os.chmod(home, 0o711)  # others may pass through to a run's workspace, never list
    return Principal(name, entry.pw_uid, entry.pw_gid, home)


PRIVILEGED_GROUPS = frozenset(
    {"root", "sudo", "wheel", "admin", "adm", "docker", "lxd", "disk", "shadow", "systemd-journal"}
)


def privileged_groups(name: str, gid: int) -> set[str]:
    """The groups of ``name`` that are as good as root (sudo rules, the docker socket...)."""
    found = set()
    for group_id in os.getgrouplist(name, gid):
        try:
            group = grp.getgrgid(group_id).gr_name
        except KeyError:
            continue
        if group in PRIVILEGED_GROUPS:
            found.add(group)
    return found


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


def run_dirs(base: Path) -> RunDirs:
    return RunDirs(
        base=base,
        home=base / "home",
        workspace=base / "workspace",
        context=base / "context",
        mcp_config=base / "mcp.json",
        bin=base / "bin",
    )


def prepare_run_dirs(base: Path, *, agent: Principal) -> RunDirs:
    """A fresh per-run directory: the agent owns its HOME and workspace, nothing else."""
    if base.exists():
        shutil.rmtree(base)
    dirs = run_dirs(base)
    base.mkdir(parents=True, mode=0o711)
    os.chmod(base, 0o711)  # the agent may enter, not list
    for owned in (dirs.home, dirs.workspace):
        owned.mkdir(mode=0o700)
        os.chown(owned, agent.uid, agent.gid)
    for shared in (dirs.context, dirs.bin):
        shared.mkdir(mode=0o755)
    return dirs


def agent_base(agent: Principal, jobid: str) -> Path:
    return agent.home / "tusk-runs" / jobid


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


# --------------------------------------------------------------------------- workspace


def git_auth_env(clone_url: str, token: SecretStr | None) -> dict[str, str]:
    """git's own environment for one authenticated command: nothing lands in .git/config
    and nothing appears in argv."""
    if token is None:
        return {}
    parts = urlsplit(clone_url)
    origin = urlunsplit((parts.scheme, parts.netloc, "/", "", ""))
    return config_env([(f"http.{origin}.extraHeader", basic_auth_header(token.get_secret_value()))])


def strip_credentials(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def clone_workspace(
    *,
    clone_url: str,
    token: SecretStr | None,
    dest: Path,
    runner: Principal,
    agent: Principal | None,
    committer: str,
) -> None:
    """Clone as the runner, prove no credential was kept, then hand it to the agent."""
    clean_url = strip_credentials(clone_url)
    env = {
        "PATH": SAFE_PATH,
        "HOME": str(dest.parent),  # no runner ~/.gitconfig, no credential helper
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
        **git_auth_env(clean_url, token),
    }
    as_runner = {} if runner.uid == os.getuid() else {"user": runner.uid, "group": runner.gid}
    if as_runner:
        os.chown(dest, runner.uid, runner.gid)
    completed = subprocess.run(
        ["git", "clone", "--quiet", "--no-tags", "--", clean_url, str(dest)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        **as_runner,  # type: ignore[arg-type]
    )
    if completed.returncode != 0:
        raise IsolationError(
            f"Could not clone {clean_url} into the agent's workspace",
            f"git said: {completed.stderr.strip()[-800:]}",
        )
    # --file: no repository discovery, so no "dubious ownership" refusal as root.
    local = ["git", "config", "--file", str(dest / ".git" / "config")]
    share = agent is not None and runner.uid not in (0, agent.uid)
    settings = [
        ("user.name", committer),
        ("user.email", f"{committer}@users.noreply.github.com"),
        ("remote.origin.url", clean_url),
        *([("core.sharedRepository", "group")] if share else []),
    ]
    for key, value in settings:
        subprocess.run(
            [*local, key, value], env={"PATH": SAFE_PATH}, check=True, capture_output=True
        )
    leaked = credential_leaks(dest / ".git" / "config", token)
    if leaked:
        raise IsolationError(
            "A credential was left in the workspace's git config", f"Found: {leaked}"
        )
    if agent is not None:
        chown_tree(dest, agent)
        if share:
            share_with_group(dest)


def share_with_group(root: Path) -> None:
    """Let the agent's own group read its workspace; nobody else gets in.

    Under sudo the MCP server runs as the runner user, not root, and fetches the
    agent's branches from here: it is started with the agent's group as a
    supplementary group (the agent gains nothing). ``core.sharedRepository=group``
    keeps what git writes group-readable; the agent's umask (027) does the rest.
    """
    for folder, _subfolders, filenames in os.walk(root):
        os.chmod(folder, (stat.S_IMODE(os.stat(folder).st_mode) & 0o700) | 0o050)
        for name in filenames:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, (stat.S_IMODE(os.stat(path).st_mode) & 0o700) | 0o040)


def credential_leaks(config: Path, token: SecretStr | None) -> str | None:
    text = config.read_text(encoding="utf-8", errors="replace")
    lowered = text.lower()
    if token is not None and token.get_secret_value() in text:
        return "the token itself"
    for needle in ("extraheader", "authorization", "x-access-token", "credential"):
        if needle in lowered:
            return needle
    return None


def chown_tree(root: Path, user: Principal) -> None:
    os.chown(root, user.uid, user.gid)
    for folder, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            os.chown(os.path.join(folder, name), user.uid, user.gid, follow_symlinks=False)


# --------------------------------------------------------------------------- environment


def agent_env(
    *,
    home: Path,
    model_proxy_url: str,
    dummy_key: str,
    max_retries: int,
    egress_proxy_url: str | None = None,
) -> dict[str, str]:
    """The agent's whole environment, from nothing, and no secret in it: the model is
    reached through the run's model proxy, which adds the real key, with a dummy key
    (Claude Code refuses to start without one). With the network fenced, every other
    HTTP(S) client the agent runs goes through the egress proxy."""
    env = {
        "HOME": str(home),
        "PATH": SAFE_PATH,
        "SHELL": AGENT_SHELL,
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": model_proxy_url,
        "ANTHROPIC_API_KEY": dummy_key,
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


def spawn_kwargs(user: Principal | None, *, extra_groups: Sequence[int] = ()) -> dict[str, object]:
    """Popen arguments that drop to ``user`` in the child itself: no runuser or sudo
    process in between whose command line would carry anything."""
    # umask 027: what the agent commits stays readable by its own private group,
    # which only the MCP server joins (see share_with_group).
    if user is None or user.uid == os.getuid():
        return {"start_new_session": True, "umask": 0o027}
    return {
        "user": user.uid,
        "group": user.gid,
        "extra_groups": list(extra_groups),
        "start_new_session": True,
        "umask": 0o027,
    }


# --------------------------------------------------------------------------- cleanup


def processes_of(uid: int, proc: Path = Path("/proc")) -> list[int]:
    pids = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("Uid:"):
                if int(line.split()[1]) == uid:
                    pids.append(int(entry.name))
                break
    return pids


def end_processes_of(user: Principal) -> list[int]:
    """SIGKILL every process the agent user still has; never root's or our own."""
    if user.uid in (0, os.getuid(), os.geteuid()):
        return []
    killed = []
    for pid in processes_of(user.uid):
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except ProcessLookupError:
            pass
    return killed


def remove_agent_traces(dirs: RunDirs, user: Principal | None) -> None:
    """What must not outlive the job: the run directory, Claude Code's temp files."""
    shutil.rmtree(dirs.base, ignore_errors=True)
    if user is not None and user.uid not in (0, os.getuid()):
        shutil.rmtree(Path("/tmp") / f"claude-{user.uid}", ignore_errors=True)
        shutil.rmtree(Path("/tmp") / f"cc-socks-{user.uid}", ignore_errors=True)
