"""The agent's box for real (root): what a process in it can and cannot reach, and
that nothing it makes outlives it. Each probe is what an agent's Bash could try."""

from __future__ import annotations

import contextlib
import os
import socket
import socketserver
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.steps.run_claude.conftest import require_root
from tusk.steps.run_claude.box import bridge, bwrap, cleanup, egress, folders, launch, users
from tusk.steps.run_claude.box.principal import Principal

pytestmark = pytest.mark.e2e

PROBE = """
import socket, sys
def attempt(what, f):
    try:
        print(what, f(), flush=True)
    except Exception as error:
        print(what, "refused", type(error).__name__, flush=True)
def tcp(host, port, family=socket.AF_INET):
    s = socket.socket(family); s.settimeout(3); s.connect((host, port)); s.sendall(b"ping")
    return s.recv(100).decode() or "open"
def abstract(name):
    s = socket.socket(socket.AF_UNIX); s.connect("\\0" + name); return "open"
def path(name):
    s = socket.socket(socket.AF_UNIX); s.connect(name); return "open"
def udp(host):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
    s.sendto(b"\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00", (host, 53))
    return s.recvfrom(512) and "answered"
served, other, name, sock, resolver = sys.argv[1:6]
attempt("bridged", lambda: tcp("127.0.0.1", 4101))
attempt("host-port", lambda: tcp("127.0.0.1", int(other)))
attempt("host-served-port", lambda: tcp("127.0.0.1", int(served)))
attempt("other-loopback", lambda: tcp("127.0.0.2", int(served)))
attempt("ipv6", lambda: tcp("::1", int(served), socket.AF_INET6))
attempt("abstract", lambda: abstract(name))
attempt("path-socket", lambda: path(sock))
attempt("udp", lambda: udp(resolver))
"""


class _Hello(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.sendall(b"hello " + self.request.recv(100))


@contextlib.contextmanager
def tcp_server(host: str = "127.0.0.1") -> Iterator[int]:
    """Answers each connection with "hello" and what it was sent (runs as root: a host
    service the agent must not reach, unless bridged). Shut down whole on exit: a
    listener left accepting would answer whoever gets its port next."""
    server = socketserver.ThreadingTCPServer((host, 0), _Hello)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def resolver() -> str:
    for line in Path("/etc/resolv.conf").read_text().splitlines():
        if line.startswith("nameserver"):
            return line.split()[1]
    return "127.0.0.53"


@pytest.fixture
def run_user(agent_user: str) -> Iterator[tuple[Principal, folders.RunDirs]]:
    require_root()
    user = users.create_run_user(agent_user, "box-1")
    dirs = folders.prepare_run_dirs(folders.agent_base(user), agent=user)
    try:
        yield user, dirs
    finally:
        cleanup.end_processes_of(user)
        cleanup.remove_agent_traces(dirs, user)
        users.delete_run_user(user)


def in_box(plan: bwrap.BoxPlan, argv: list[str]) -> subprocess.CompletedProcess[str]:
    tools = bwrap.tools()
    assert tools is not None, f"missing: {bwrap.missing_tools()} (scripts/setup installs them)"
    return subprocess.run(
        bwrap.box_argv(plan, argv, tools=tools),
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
        start_new_session=True,
    )


def test_the_box_reaches_its_bridged_server_and_nothing_else_of_the_host(
    run_user: tuple[Principal, folders.RunDirs], tmp_path: Path
) -> None:
    """An abstract-socket service, another loopback address, IPv6, UDP and the host's
    other ports are all out of reach; the one bridged server answers."""
    user, dirs = run_user
    sockets = Path(tempfile.mkdtemp(prefix="tusk-box-sock-"))
    sockets.chmod(0o711)
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(f"\0tusk-probe-{os.getpid()}")
    abstract.listen(4)
    service = Path(tempfile.mkdtemp(prefix="tusk-service-", dir="/run")) / "bus"
    path_socket = socket.socket(socket.AF_UNIX)
    path_socket.bind(str(service))
    service.chmod(0o777)
    service.parent.chmod(0o755)
    path_socket.listen(4)
    bridges = None
    try:
        with tcp_server() as served, tcp_server() as other:
            bridges = bridge.Bridges(sockets, {"model": served})
            bridges.start()
            plan = bwrap.BoxPlan(
                user=user,
                base=dirs.base,
                cwd=dirs.workspace,
                socket_dir=sockets,
                bridges=("model",),
            )
            argv = [
                "/usr/bin/python3",
                "-I",
                "-c",
                PROBE,
                str(served),
                str(other),
                f"tusk-probe-{os.getpid()}",
                str(service),
                resolver(),
            ]
            done = in_box(plan, argv)
            seen = dict(line.split(" ", 1) for line in done.stdout.splitlines())
            assert done.returncode == 0, done.stderr
            assert seen["bridged"] == "hello ping"
            for what in (
                "host-port",
                "host-served-port",
                "other-loopback",
                "ipv6",
                "abstract",
                "path-socket",
                "udp",
            ):
                assert seen[what].startswith("refused"), (what, seen[what])
            # The same probes as the same user outside the box reach the host: the
            # box is what refuses them.
            outside = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=60,
                user=user.uid,
                group=user.gid,
                extra_groups=[],
                cwd="/",
            ).stdout
            assert "abstract open" in outside and "host-port hello ping" in outside
    finally:
        if bridges is not None:
            bridges.stop()
        abstract.close()
        path_socket.close()
        service.unlink(missing_ok=True)
        service.parent.rmdir()


def test_what_the_box_starts_ends_with_it(run_user: tuple[Principal, folders.RunDirs]) -> None:
    """A process left in the background, a System V object and a POSIX message queue
    die with the box: the next box of the same uid finds none of them."""
    user, dirs = run_user
    leave = (
        "import ctypes, os, subprocess\n"
        "subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
        "subprocess.run(['ipcmk', '-Q'], check=True, capture_output=True)\n"
        "rt = ctypes.CDLL('librt.so.1', use_errno=True)\n"
        "assert rt.mq_open(b'/tusk-drop', os.O_CREAT | os.O_RDWR, 0o600, None) >= 0\n"
    )
    plan = bwrap.BoxPlan(user=user, base=dirs.base, cwd=dirs.workspace)
    done = in_box(plan, ["/usr/bin/python3", "-I", "-c", leave])
    assert done.returncode == 0, done.stderr
    assert cleanup.processes_of(user.uid) == []
    assert cleanup.ipc_objects_of(user.uid) == []
    find = (
        "import ctypes, os\n"
        "rt = ctypes.CDLL('librt.so.1', use_errno=True)\n"
        "print(rt.mq_open(b'/tusk-drop', os.O_RDONLY, 0, None), ctypes.get_errno())\n"
    )
    done = in_box(plan, ["/usr/bin/python3", "-I", "-c", find])
    assert done.stdout.split() == ["-1", "2"], done.stdout + done.stderr  # ENOENT


def test_the_box_sees_its_own_processes_and_a_read_only_host(
    run_user: tuple[Principal, folders.RunDirs],
) -> None:
    user, dirs = run_user
    look = (
        "pids=$(ls /proc | grep -c '^[0-9]'); echo pids=$pids; hostname; id -u; "
        "touch /usr/tusk-probe 2>/dev/null && echo wrote-usr || echo usr-read-only; "
        "touch /tmp/x && echo tmp-ok; echo $(ls /run) $(ls /home); "
        "touch $HOME/x 2>/dev/null; grep -c CapEff:.0000000000000000 /proc/self/status"
    )
    plan = bwrap.BoxPlan(user=user, base=dirs.base, cwd=dirs.workspace)
    done = in_box(plan, ["/bin/sh", "-c", f"HOME={dirs.home}; {look}"])
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr
    # the box's init, the shell, its command substitution, ls and grep; not the host's
    assert int(lines[0].split("=")[1]) <= 6 < len([p for p in os.listdir("/proc") if p.isdigit()])
    assert lines[1:5] == [bwrap.HOSTNAME, str(user.uid), "usr-read-only", "tmp-ok"]
    assert lines[5].split() == ["tusk", user.name]  # /run holds only the box's own
    assert lines[6] == "1"  # no capability left
    assert not Path("/tmp/x").exists() or Path("/tmp/x").stat().st_uid != user.uid


def ask_proxy(port: int, request: bytes) -> str:
    """The egress proxy's status line for one raw request."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request)
        return conn.recv(200).split(b"\r\n", 1)[0].decode()


def test_the_egress_proxy_lets_through_connect_to_443_of_allowed_hosts_alone(
    tmp_path: Path,
) -> None:
    """tinyproxy's ConnectPort limits CONNECT only: a plain GET to an allowed host would
    reach any port. The filter matches the whole target, so plain HTTP is refused."""
    require_root()
    proxy = egress.start(["localhost"], run_dir=tmp_path, spawn=launch.Spawn())
    try:
        with tcp_server() as other:
            tried = {
                "connect-443": b"CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n",
                "connect-other": f"CONNECT localhost:{other} HTTP/1.1\r\n\r\n".encode(),
                "get-allowed": f"GET http://localhost:{other}/ HTTP/1.1\r\n"
                f"Host: localhost:{other}\r\n\r\n".encode(),
                "get-80": b"GET http://localhost/ HTTP/1.1\r\nHost: localhost\r\n\r\n",
                "connect-unlisted": b"CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n",
            }
            said = {what: ask_proxy(proxy.port, request) for what, request in tried.items()}
    finally:
        proxy.stop()
    # Let through (nothing listens on 443 here, so tinyproxy cannot connect): not 403.
    assert said["connect-443"].split()[1] != "403", said
    for what in ("connect-other", "get-allowed", "get-80", "connect-unlisted"):
        assert said[what].split()[1] == "403", (what, said[what])
