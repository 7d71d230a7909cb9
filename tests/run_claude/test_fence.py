"""The network fence for real (root): iptables owner rules for one run's user and its
tinyproxy. What a process of that user can and cannot reach, and that nothing is
left behind."""

from __future__ import annotations

import contextlib
import http.server
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.run_claude.conftest import require_root
from tusk.steps.run_claude.box import cleanup as box_cleanup
from tusk.steps.run_claude.box import egress, fence
from tusk.steps.run_claude.box import launch as box_launch
from tusk.steps.run_claude.box import principal as box_principal
from tusk.steps.run_claude.box import users as box_users

pytestmark = pytest.mark.e2e

PROBE = """
import socket, sys, urllib.request
kind, target = sys.argv[1], sys.argv[2]
try:
    if kind == "tcp":
        socket.create_connection(("127.0.0.1", int(target)), timeout=3).close()
    elif kind == "dns":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
        s.sendto(b"\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00", (target, 53))
        s.recvfrom(512)
    elif kind == "via-proxy":
        proxy, url = target.split(" ")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
        print(opener.open(url, timeout=5).status)
        sys.exit(0)
    print("open")
except Exception as error:
    print(f"refused: {type(error).__name__}: {error}")
"""


@contextlib.contextmanager
def listener() -> Iterator[int]:
    """An HTTP server on a loopback port, answering 200 (as the runner: never fenced)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def probe(user: box_principal.Principal, kind: str, target: str) -> str:
    spawn = box_launch.spawn_as(user)
    done = subprocess.run(
        ["/usr/bin/python3", "-I", "-c", PROBE, kind, target],  # a python the user can run
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
        user=spawn.user,
        group=spawn.group,
        extra_groups=spawn.extra_groups,
        umask=spawn.umask,
        start_new_session=True,
    )
    return (done.stdout + done.stderr).strip()


def resolver() -> str:
    for line in Path("/etc/resolv.conf").read_text().splitlines():
        if line.startswith("nameserver"):
            return line.split()[1]
    return "127.0.0.53"


def test_a_fenced_user_reaches_only_the_runs_ports_and_allowed_hosts(agent_user: str) -> None:
    require_root()
    found = fence.tools()
    assert all(found.values()), f"the fence's tools are missing: {found} (scripts/setup)"
    user = box_users.create_run_user(agent_user, "fence-1")
    run_dir = Path(tempfile.mkdtemp(prefix="tusk-fence-run-"))
    the_fence = fence.Fence(found)
    proxy = None
    try:
        with listener() as allowed_port, listener() as other_port:
            # "localhost" is no hostname tusk.yml accepts; here it stands for an allowed
            # registry, since the tests have no internet.
            proxy = egress.start(["localhost"], run_dir=run_dir, spawn=box_launch.Spawn())
            the_fence.apply(fence.FencePlan(uid=user.uid, ports=(allowed_port, proxy.port)))
            assert probe(user, "tcp", str(allowed_port)) == "open"
            assert probe(user, "tcp", str(other_port)).startswith("refused: ConnectionRefused")
            assert probe(user, "tcp", "22").startswith("refused")
            assert probe(user, "dns", resolver()).startswith("refused")
            via = f"{proxy.url} http://localhost:{other_port}/"
            assert probe(user, "via-proxy", via) == "200"  # an allowed host, through the proxy
            blocked = f"{proxy.url} http://127.0.0.1:{other_port}/"
            assert "403" in probe(user, "via-proxy", blocked)  # not on the list
            log = (run_dir / egress.LOG_FILE).read_text()
            assert 'filtered domain "127.0.0.1"' in log
            # Another uid (the runner) is not fenced at all.
            with socket.create_connection(("127.0.0.1", other_port), timeout=3):
                pass
            assert the_fence.remove(user.uid)
            assert probe(user, "tcp", str(other_port)) == "open"
        rules = subprocess.run(
            [found["iptables"] or "iptables", "-w", "-S"], capture_output=True, text=True
        ).stdout
        assert fence.chain_name(user.uid) not in rules
    finally:
        the_fence.remove(user.uid)
        if proxy is not None:
            proxy.stop()
        box_cleanup.end_processes_of(user)
        box_users.delete_run_user(user)
