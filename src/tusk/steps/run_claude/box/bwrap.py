"""The agent's box: Claude Code and everything it starts in kernel namespaces of
their own, made by bubblewrap (``bwrap``, what Claude Code's own Bash sandbox and
Flatpak use).

Started as root, ``bwrap`` gives the box its own network, IPC, PID, UTS and mount
namespaces (and cgroup, where the kernel has them), then ``setpriv`` inside drops
to the run's own user with no capabilities, no groups beside its own and no way
to gain privileges (``no_new_privs``). What that closes:

- network: the box has only its own loopback. No host socket of any kind is
  reachable, abstract Unix sockets included (they belong to a network
  namespace), nor any host port, IPv4 or IPv6, TCP or UDP. The three servers
  the agent may reach (the model proxy, the MCP server, the egress proxy) are
  Unix sockets of the run folder bound into the box (``/run/tusk/sock``) and
  bridged to fixed loopback ports inside it by ``socat`` (``BOX_PORTS``),
  started as the agent before Claude Code;
- IPC: System V objects and POSIX message queues live in the box's IPC
  namespace and die with it;
- PID: the agent sees only the box's processes, and when Claude Code ends the
  kernel ends every process left in the box;
- Claude Code's own process: its tools run as its uid, and a process may take
  the file descriptors and memory of another of its uid (``pidfd_getfd``,
  ``ptrace``, ``/proc/<pid>/mem``) unless that one is non-dumpable. Claude Code
  is started with its effective group (``SHIELD_GROUP``) other than its real
  one, the run's group, and the kernel makes a program run so non-dumpable
  (execve(2): "the effective group ID differs from the real group ID"); the
  shells it runs its tools in set their effective group back to the real one
  (dash and bash do, unless given ``-p``), so every tool is an ordinary
  process that may not touch Claude Code's. The run's group stays a
  supplementary group of both: the folders and sockets are reached as before.
  Where the kernel lets the agent make a user namespace, the tools also get a
  PID namespace of their own (``tools_shell``): Claude Code is not even there
  to signal;
- mount: the host is read-only; ``/tmp``, ``/var/tmp``, ``/run``, ``/dev/shm``
  and ``/home`` are empty and private (D-Bus, systemd-resolved and the other
  local services that reach the network over a socket are out of sight); the
  run's own folder is bound back in, and Claude Code's binary at ``CLAUDE_PATH``.

``box_argv`` is pure; ``problem`` starts the box once around ``true`` to learn
whether this kernel lets it be made (a container without CAP_SYS_ADMIN, say).
"""

from __future__ import annotations

import grp
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tusk.steps.run_claude.box.principal import AGENT_SHELL, SBIN_PATH, Principal

# Loopback ports inside the box, one per server: the box's loopback is its own, so
# fixed numbers collide with nothing.
BOX_PORTS: Mapping[str, int] = {"model": 4101, "mcp": 4102, "egress": 4103}
SOCKET_DIR = "/run/tusk/sock"  # where the run's server sockets appear in the box
CLAUDE_PATH = "/run/tusk/bin/claude"  # where Claude Code's binary appears in the box
TOOLS_SHELL = "/run/tusk/bin/bash"  # Claude Code's shell for its tools (``tools_shell``)
HOSTNAME = "tusk-agent"
SHIELD_GROUPS = ("nogroup", "nobody")  # Debian's group of nothing, else Fedora's
# Folders the box gets empty and private, in place of the host's, with their modes.
PRIVATE = {"/tmp": "1777", "/var/tmp": "1777", "/run": "0755", "/home": "0755"}
# Run inside the box as the agent (``sh -p``: the effective group stays as given,
# so Claude Code is exec'd non-dumpable): start one bridge per "port=name" given before
# "--", wait until each listens, then run the rest. Its arguments: socat, the
# bridges, "--", the command.
_INSIDE = (
    'set -e; socat=$1; shift; bridges=""; '
    'while [ "$1" != -- ]; do bridges="$bridges $1"; shift; done; shift; '
    'for b in $bridges; do "$socat" "TCP-LISTEN:${b%%=*},bind=127.0.0.1,reuseaddr,fork" '
    '"UNIX-CONNECT:' + SOCKET_DIR + '/${b#*=}.sock" </dev/null >/dev/null 2>&1 & done; '
    'for b in $bridges; do hex=$(printf %04X "${b%%=*}"); n=0; '
    'until grep -q ":$hex 00000000:0000 0A" /proc/net/tcp; do n=$((n+1)); '
    'if [ $n -ge 250 ]; then echo "tusk: the box bridge $b did not start" >&2; exit 70; fi; '
    'sleep 0.02; done; done; exec "$@"'
)


@dataclass(frozen=True)
class Tools:
    bwrap: str
    setpriv: str
    socat: str


def tools() -> Tools | None:
    """bwrap (package bubblewrap), setpriv (util-linux) and socat, or None."""
    found = {name: shutil.which(name, path=SBIN_PATH) for name in ("bwrap", "setpriv", "socat")}
    if any(path is None for path in found.values()):
        return None
    return Tools(**{name: str(path) for name, path in found.items()})


def missing_tools() -> list[str]:
    """The Debian packages of the box's tools that are not installed."""
    packages = {"bwrap": "bubblewrap", "setpriv": "util-linux", "socat": "socat"}
    return [pkg for name, pkg in packages.items() if shutil.which(name, path=SBIN_PATH) is None]


@dataclass(frozen=True)
class BoxPlan:
    """What one box holds: who runs in it, the folders bound in, the servers reached."""

    user: Principal
    base: Path  # the run's own folder, bound read-write (ownership still applies)
    cwd: Path
    socket_dir: Path | None = None  # the run's server sockets (host side)
    bridges: tuple[str, ...] = ()  # server names: "model", "mcp", "egress"
    claude: Path | None = None  # Claude Code's binary (host side), bound at CLAUDE_PATH
    tools_shell: Path | None = None  # the tools' shell (host side), bound at TOOLS_SHELL
    share_net: bool = False  # the host's network (agent.network: open): no bridges needed
    shield_gid: int | None = None  # Claude Code's effective group: it runs non-dumpable


def box_argv(plan: BoxPlan, argv: Sequence[str], *, tools: Tools) -> list[str]:
    """``argv`` run as ``plan.user`` in a box of its own (see the module's doc)."""
    mounts = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for private, mode in PRIVATE.items():
        mounts += ["--perms", mode, "--tmpfs", private]
    mounts += ["--bind", str(plan.base), str(plan.base)]
    mounts += ["--perms", "0755", "--dir", "/run/tusk"]
    if plan.socket_dir is not None:
        mounts += ["--perms", "0755", "--dir", SOCKET_DIR]
        mounts += ["--bind", str(plan.socket_dir), SOCKET_DIR]
    if plan.claude is not None:
        mounts += ["--perms", "0755", "--dir", str(Path(CLAUDE_PATH).parent)]
        mounts += ["--ro-bind", str(plan.claude), CLAUDE_PATH]
        if plan.tools_shell is not None:
            mounts += ["--ro-bind", str(plan.tools_shell), TOOLS_SHELL]
    namespaces = [
        *([] if plan.share_net else ["--unshare-net"]),
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        HOSTNAME,
        "--die-with-parent",
    ]
    bridges = [f"{BOX_PORTS[name]}={name}" for name in plan.bridges]
    drop = [
        tools.setpriv,
        f"--reuid={plan.user.uid}",
        *_groups(plan.user.gid, plan.shield_gid),
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
    ]
    inside = ["/bin/sh", "-p", "-c", _INSIDE, "tusk-box", tools.socat, *bridges, "--"]
    return [
        tools.bwrap,
        *namespaces,
        *mounts,
        "--chdir",
        str(plan.cwd),
        "--",
        *drop,
        "--",
        *inside,
        *argv,
    ]


def _groups(gid: int, shield_gid: int | None) -> list[str]:
    """setpriv's group options: the run's group alone, or (``shield_gid``) the run's
    group as real and supplementary group with ``shield_gid`` as the effective one."""
    if shield_gid is None or shield_gid == gid:
        return [f"--regid={gid}", "--clear-groups"]
    return [f"--rgid={gid}", f"--egid={shield_gid}", f"--groups={gid}"]


def shield_group() -> int:
    """A group that grants nothing, for Claude Code's effective group (the module's
    doc): the system's group of nothing, else gid 65534 (the kernel's overflow gid)."""
    for name in SHIELD_GROUPS:
        try:
            return grp.getgrnam(name).gr_gid
        except KeyError:
            continue
    return 65534


@dataclass(frozen=True)
class Box:
    """One run's box: its tools, its user and folder, and where its servers' sockets
    are when it has a network of its own."""

    tools: Tools
    user: Principal
    base: Path
    socket_dir: Path
    shield_gid: int | None = None  # Claude Code's effective group (``shield_group``)
    tools_shell: Path | None = None  # the tools' own shell, where the kernel allows it

    @property
    def shell(self) -> str:
        """The ``SHELL`` Claude Code runs its tools in, as seen inside the box."""
        return TOOLS_SHELL if self.tools_shell is not None else AGENT_SHELL

    def claude(
        self, argv: Sequence[str], *, claude: Path, cwd: Path, bridges: Sequence[str] | None
    ) -> list[str]:
        """Claude Code's command line (``argv[0]`` is ``CLAUDE_PATH``) in the box, with
        the bridges to the servers named; ``bridges=None``: the host's network."""
        plan = BoxPlan(
            user=self.user,
            base=self.base,
            cwd=cwd,
            socket_dir=self.socket_dir if bridges is not None else None,
            bridges=tuple(bridges or ()),
            claude=claude,
            share_net=bridges is None,
            shield_gid=self.shield_gid,
            tools_shell=self.tools_shell,
        )
        return box_argv(plan, argv, tools=self.tools)

    def plain(self, argv: Sequence[str], *, cwd: Path) -> list[str]:
        """A command of the agent's (git in its workspace) in a box of the same kind,
        with no road out at all."""
        plan = BoxPlan(user=self.user, base=self.base, cwd=cwd)
        return box_argv(plan, argv, tools=self.tools)


def inner_pid(outer: int, proc: Path = Path("/proc")) -> int | None:
    """The box's main process (Claude Code) seen from the host: the first descendant of
    ``outer`` that is not bwrap itself; None when ``outer`` is no box (or is gone)."""
    children: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        pid, parent = int(entry.name), int(fields.get("PPid", "0").strip() or 0)
        names[pid] = fields.get("Name", "").strip()
        children.setdefault(parent, []).append(pid)
    if names.get(outer) != "bwrap":
        return None
    frontier = list(children.get(outer, []))
    while frontier:
        pid = frontier.pop(0)
        if names.get(pid) != "bwrap":
            return pid
        frontier.extend(children.get(pid, []))
    return None


def problem(
    user: Principal,
    base: Path,
    *,
    tools: Tools,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
    inside: Sequence[str] = ("true",),
) -> str | None:
    """Why the box cannot be made here (None when it can), found by making it once
    around ``inside`` (``true``; another probe of what the box must allow). Root in
    a container without CAP_SYS_ADMIN, or a kernel without namespaces, has the tools
    but may not make the box."""
    try:
        done = run(
            box_argv(BoxPlan(user=user, base=base, cwd=Path("/")), inside, tools=tools),
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
