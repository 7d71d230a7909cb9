"""Claude Code as a user that can reach no token (MISSION T3, T5).

The runner (root, or the Actions user re-run under sudo) creates or reuses an
unprivileged Linux user, prepares a per-run directory the agent owns (its
own HOME and the workspace), makes the pinned Claude Code binary reachable,
and builds the agent's environment from nothing. Tokens stay with the runner
and the MCP server: never in the agent's environment, its files, a git
config, the MCP config, or a command line (``/proc/*/cmdline`` is
world-readable).

Each run has its own Linux user, created for it and deleted with its files
when it ends (``create_run_user``, ``delete_run_user``): its name comes from
the Actions run id and attempt plus a random suffix, so two runs on one host
(several runner processes, two deliveries of one job, act replays) never
share a user, a folder or a process list.

Directory layout of one run (``base`` = ``/home/<run user>``, root-owned,
traversable, not listable):

    base/mcp.json         the MCP config: a loopback URL and this run's bearer
                          secret (0600, the agent user's alone)
    base/context/         task, context and diff, readable by the agent
    base/bin/claude       a link or copy of Claude Code when its own path is closed
    base/home/            the agent's HOME (0700, agent-owned; the user's passwd home)
    base/workspace/       the repository checkout the agent works in (agent-owned)
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import re
import secrets
import shutil
import stat
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from pydantic import SecretStr

from tusk.errors import UserError
from tusk.git.env import basic_auth_header, config_env

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


USERS_ROOT = Path("/home")
MAX_USER_NAME = 32  # useradd's limit on Debian and Ubuntu
SBIN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
# useradd/userdel exit codes (shadow-utils): 9 the name is taken, 10 /etc/passwd is
# locked by a concurrent useradd, 6 no such user.
NAME_IN_USE, PASSWD_LOCKED, NO_SUCH_USER = 9, 10, 6


def run_key(environ: Mapping[str, str]) -> str:
    """This run's identity: the Actions run id and attempt, or ``local`` outside Actions."""
    run_id = environ.get("GITHUB_RUN_ID", "")
    attempt = environ.get("GITHUB_RUN_ATTEMPT", "") or "1"
    if run_id.isdigit() and attempt.isdigit():
        return f"{run_id}-{attempt}"
    return "local"


def run_user_name(prefix: str, key: str, suffix: str) -> str:
    """``<prefix>-<run id>-<attempt>-<suffix>``, within useradd's 32 characters.

    The prefix gives way first; the run key and the random suffix always stay."""
    tail = f"-{key}-{suffix}"
    clean = re.sub(r"[^a-z0-9_-]", "", prefix.lower()).strip("-") or "tusk"
    if not clean[0].isalpha():
        clean = f"t{clean}"
    return clean[: max(1, MAX_USER_NAME - len(tail))] + tail


def create_run_user(
    prefix: str,
    key: str,
    *,
    forbidden_uids: Iterable[int] = (),
    attempts: int = 8,
    sleep: Callable[[float], None] = time.sleep,
) -> Principal:
    """Create this run's own user; its passwd home is ``/home/<name>/home`` (made by
    ``prepare_run_dirs``). Never reuses a user: a taken name means another run."""
    said = "nothing (no attempt made)"
    for attempt in range(attempts):
        name = run_user_name(prefix, key, secrets.token_hex(3))
        completed = subprocess.run(
            [
                "useradd",
                "--no-create-home",
                "--home-dir",
                str(USERS_ROOT / name / "home"),
                "--user-group",
                "--shell",
                AGENT_SHELL,
                name,
            ],
            capture_output=True,
            text=True,
            check=False,
            env={"PATH": SBIN_PATH},
        )
        if completed.returncode == 0:
            entry = pwd.getpwnam(name)
            user = Principal(name, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir))
            if entry.pw_uid == 0 or entry.pw_uid in set(forbidden_uids):
                delete_run_user(user)
                raise IsolationError(
                    f"The new agent user {name!r} got uid {entry.pw_uid}, root's or the runner's",
                    "Check /etc/login.defs (UID_MIN) on this machine.",
                )
            clear_uid(user)  # a uid once another run's: nothing of that run may remain
            return user
        said = completed.stderr.strip()
        if completed.returncode not in (NAME_IN_USE, PASSWD_LOCKED):
            break
        sleep(0.05 * (attempt + 1))  # another run is adding its own user right now
    raise IsolationError(
        "Could not create this run's agent user",
        f"useradd said: {said}. The step must run as root (or with "
        "passwordless sudo) on a machine with useradd (package passwd).",
    )


def delete_run_user(user: Principal, *, sleep: Callable[[float], None] = time.sleep) -> bool:
    """Delete this run's user and its group; its files go with ``remove_agent_traces``.
    Returns whether the user existed."""
    said = ""
    for attempt in range(8):
        completed = subprocess.run(
            ["userdel", user.name],
            capture_output=True,
            text=True,
            check=False,
            env={"PATH": SBIN_PATH},
        )
        if completed.returncode == 0:
            return True
        if completed.returncode == NO_SUCH_USER:
            return False
        said = completed.stderr.strip()
        sleep(0.05 * (attempt + 1))  # /etc/passwd locked, or the last process still exiting
    raise IsolationError(
        f"Could not delete the agent user {user.name!r}",
        f"userdel said: {said}. Delete it by hand: userdel {user.name}",
    )


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
    for owned in (dirs.home, dirs.workspace):
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
    as_runner = runner.uid != os.getuid()
    if as_runner:
        os.chown(dest, runner.uid, runner.gid)
    completed = subprocess.run(
        ["git", "clone", "--quiet", "--no-tags", "--", clean_url, str(dest)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        user=runner.uid if as_runner else None,  # None: stay this process's user
        group=runner.gid if as_runner else None,
    )
    if completed.returncode != 0:
        raise IsolationError(
            f"Could not clone {clean_url} into the agent's workspace",
            f"git said: {completed.stderr.strip()[-800:]}",
        )
    # --file: no repository discovery, so no "dubious ownership" refusal as root.
    local = ["git", "config", "--file", str(dest / ".git" / "config")]
    settings = [
        ("user.name", committer),
        ("user.email", f"{committer}@users.noreply.github.com"),
        ("remote.origin.url", clean_url),
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
        os.chmod(dest, 0o700)  # the agent's alone: push_branch bundles it as the agent


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
    dirs: RunDirs, user: Principal | None, *, shared_temp: Sequence[Path] = SHARED_TEMP
) -> None:
    """What must not outlive the run: its folder, and whatever its user left in the
    shared folders (Claude Code's ``/tmp/claude-<uid>`` and anything the agent
    wrote) and in System V IPC, so no later run, whose user is another (or, once
    this uid is free again, a new user with the same uid), can read it."""
    shutil.rmtree(dirs.base, ignore_errors=True)
    if user is not None:
        remove_left_by(user.uid, shared_temp=shared_temp)


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
    return [f"process {pid}" for pid in ended] + remove_left_by(user.uid)


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
