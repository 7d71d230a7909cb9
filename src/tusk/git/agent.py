"""git in the agent's workspace, only ever as the agent: the bundles ``push_branch`` takes.

A workspace is a folder the agent controls, configuration and hooks included
(``core.fsmonitor`` alone runs any command on ``git status``), and its refs and
``objects/info/alternates`` can point into repositories the agent cannot read.
So git runs there only as the workspace's owner (the agent's Linux user), with
no configuration but the workspace's own and no secret in its environment:
whatever the workspace holds acts with the agent's rights and nothing more.

* ``AgentGit`` runs git there as the owner (it needs to be that user or root):
  ``bundle`` makes the bundle of a branch ``push_branch`` imports after
  checking it (``bundle``); ``run`` serves run-claude's own look at the
  workspace.
* ``BundleBroker`` serves bundles over a socket. The run-claude supervisor
  (root under isolation) runs one beside the MCP server, which runs as the
  runner user and cannot switch users itself.
* ``BrokerClient`` is the MCP server's end of that socket.

The protocol is one JSON line each way, the answer followed by the bundle's
bytes: ``{"branch": "tusk/x", "exclude": ["<sha>", ...]}`` →
``{"ok": true, "size": N}`` + N bytes, or ``{"ok": false, "error": "..."}``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from tusk.errors import UserError

MAX_BUNDLE_BYTES = 200 * 1024 * 1024
MAX_REQUEST_BYTES = 64 * 1024
GIT_TIMEOUT = 300.0
_BRANCH = re.compile(r"^[A-Za-z0-9._/-]{1,200}$")
_OID = re.compile(r"^[0-9a-f]{40}$")


class BundleError(UserError):
    """The agent's side could not make a bundle (no such branch, nothing new, git failed)."""


class BundleSource(Protocol):
    def bundle(self, branch: str, exclude: Sequence[str]) -> bytes:
        """A bundle of ``refs/heads/<branch>`` without what ``exclude`` reaches."""
        ...


def _request_problem(branch: str, exclude: Sequence[object]) -> str | None:
    """What is wrong with a bundle request; its exclusions checked one by one, since
    they arrive as JSON from the other end of the broker's socket."""
    if not _BRANCH.match(branch) or ".." in branch or branch.startswith(("-", "/")):
        return f"{branch!r} is not a plain branch name"
    if len(exclude) > 100 or not all(isinstance(o, str) and _OID.match(o) for o in exclude):
        return "exclusions must be at most 100 commit ids"
    return None


@dataclass(frozen=True)
class AgentGit:
    """``git bundle create`` in ``workspace``, run as ``uid``/``gid`` (None: this process).

    ``confine`` turns git's command line into one that becomes the agent itself in the
    agent's confinement (run-claude's mount namespace): a process of the agent's uid
    outside it would open the covered-up sockets to the agent (via /proc/<pid>/root)."""

    workspace: Path
    uid: int | None = None
    gid: int | None = None
    timeout: float = GIT_TIMEOUT
    confine: Callable[[list[str]], list[str]] | None = None

    @classmethod
    def as_owner(cls, workspace: Path) -> AgentGit:
        """Run git as whoever owns ``workspace``: this process when it does, else (as
        root) that user. Refuses to run git there as anyone else."""
        info = os.lstat(workspace)
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            raise BundleError(
                f"The workspace {workspace} is not a directory",
                "Pass the agent's checkout itself, not a link to it.",
            )
        if info.st_uid == os.geteuid():
            return cls(workspace)
        if os.geteuid() == 0:
            return cls(workspace, uid=info.st_uid, gid=info.st_gid)
        raise BundleError(
            f"The workspace {workspace} belongs to uid {info.st_uid}, not to this process",
            "git must run there as its owner: run the server as that user or as root, or let "
            "run-claude's bundle broker serve it (--bundle-fd).",
        )

    def _env(self) -> dict[str, str]:
        return {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.workspace),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
        }

    def run(self, args: Sequence[str], *, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        """``git ARGS`` in the workspace as its owner; never raises on git's exit code."""
        command = ["git", *args]
        drop = False  # to the owner, by Popen in the child; else stay this process's user
        if self.uid is not None and self.uid != os.geteuid():
            if self.confine is not None:
                command = self.confine(command)  # becomes the agent itself
            else:
                drop = True
        try:
            return subprocess.run(
                command,
                cwd=self.workspace,
                env=self._env(),
                input=stdin,
                capture_output=True,
                timeout=self.timeout,
                check=False,
                start_new_session=True,
                user=self.uid if drop else None,
                group=self.gid if drop else None,
                extra_groups=() if drop else None,  # () drops the supplementary groups
            )
        except subprocess.TimeoutExpired:
            raise BundleError(
                f"git {args[0]} in the workspace took longer than {self.timeout:.0f} s", ""
            ) from None
        except OSError as error:  # no such folder, or this process may not become the owner
            raise BundleError(f"git cannot run in the workspace: {error.strerror}", "") from None

    def bundle(self, branch: str, exclude: Sequence[str]) -> bytes:
        problem = _request_problem(branch, exclude)
        if problem:
            raise BundleError(f"Refused to bundle: {problem}", "")
        present = self._present(exclude)
        done = self.run(
            ["bundle", "create", "--quiet", "-", f"refs/heads/{branch}", "--not", *present]
        )
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip()[-600:]
            raise BundleError(f"git bundle failed in your workspace: {said}", "")
        if len(done.stdout) > MAX_BUNDLE_BYTES:
            raise BundleError(
                f"the branch's new commits take {len(done.stdout)} bytes as a bundle, more than "
                f"{MAX_BUNDLE_BYTES}",
                "",
            )
        return done.stdout

    def _present(self, oids: Sequence[str]) -> list[str]:
        """The commits of ``oids`` the workspace has (an unknown one would fail the bundle)."""
        if not oids:
            return []
        done = self.run(
            ["cat-file", "--batch-check"], stdin="".join(f"{o}\n" for o in oids).encode()
        )
        present = []
        for line in done.stdout.decode("ascii", "replace").splitlines():
            oid, _, kind = line.partition(" ")
            if kind.startswith("commit ") and oid in oids:
                present.append(oid)
        return present


# --------------------------------------------------------------------------- the socket


def _read_line(sock: socket.socket, limit: int) -> bytes:
    data = bytearray()
    while not data.endswith(b"\n"):
        chunk = sock.recv(1)
        if not chunk:
            raise ConnectionError("the other end closed the connection")
        data += chunk
        if len(data) > limit:
            raise ConnectionError("line too long")
    return bytes(data[:-1])


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(min(1 << 20, size - len(data)))
        if not chunk:
            raise ConnectionError("the other end closed the connection")
        data += chunk
    return bytes(data)


@dataclass
class BundleBroker:
    """Serves bundle requests from one connected socket with ``source`` until it closes."""

    sock: socket.socket
    source: BundleSource

    def serve(self) -> None:
        with self.sock:
            while True:
                try:
                    line = _read_line(self.sock, MAX_REQUEST_BYTES)
                except (ConnectionError, OSError):
                    return
                try:
                    answer, payload = self._answer(line)
                    self.sock.sendall(json.dumps(answer).encode() + b"\n" + payload)
                except OSError:
                    return

    def _answer(self, line: bytes) -> tuple[dict[str, object], bytes]:
        try:
            request = json.loads(line)
            branch, exclude = request["branch"], list(request.get("exclude") or [])
            if not isinstance(branch, str):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return {"ok": False, "error": "malformed request"}, b""
        try:
            data = self.source.bundle(branch, exclude)
        except BundleError as error:
            return {"ok": False, "error": f"{error.title}. {error.hint}".strip(" .")}, b""
        return {"ok": True, "size": len(data)}, data

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve, name="tusk-bundle-broker", daemon=True)
        thread.start()
        return thread


@dataclass
class BrokerClient:
    """The MCP server's end of a ``BundleBroker``'s socket."""

    sock: socket.socket
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _broken: bool = False  # after a torn answer the stream cannot be trusted to line up

    def bundle(self, branch: str, exclude: Sequence[str]) -> bytes:
        request = json.dumps({"branch": branch, "exclude": list(exclude)}).encode() + b"\n"
        with self._lock:
            if self._broken:
                raise BundleError(
                    "the bundle broker stopped answering earlier in this run",
                    "Report that the push could not be made.",
                )
            try:
                self.sock.sendall(request)
                answer = json.loads(_read_line(self.sock, MAX_REQUEST_BYTES))
                if not answer.get("ok"):
                    raise BundleError(str(answer.get("error") or "the bundle broker refused"), "")
                size = int(answer["size"])
                if not 0 < size <= MAX_BUNDLE_BYTES:
                    self._broken = True
                    raise BundleError(f"the bundle broker announced {size} bytes", "")
                return _read_exactly(self.sock, size)
            except (OSError, ConnectionError, ValueError, KeyError) as error:
                self._broken = True
                raise BundleError(
                    f"the bundle broker is not answering ({type(error).__name__})",
                    "The run's supervisor serves it; it ends with the run.",
                ) from None


def broker_pair(source: BundleSource) -> tuple[BundleBroker, socket.socket]:
    """A broker serving ``source`` and the socket the MCP server talks to it through."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    return BundleBroker(ours, source), theirs
