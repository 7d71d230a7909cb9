"""The egress proxy: the fenced agent's only way out, to the allowed hosts alone.

tinyproxy (Debian's package) on 127.0.0.1, one per run, started by the
supervisor as the runner (as ``nobody`` when the runner is root). Its filter
denies by default and lets through only ``CONNECT`` to port 443 of the hostnames
in ``agent.network.allow`` (``pypi.org`` exactly; ``*.example.com`` any
subdomain): HTTPS, with TLS passed through unopened. Plain HTTP is refused, to
an allowed host too (tinyproxy's ``ConnectPort`` limits only ``CONNECT``, so a
``GET http://host:port/`` would reach any port). The proxy resolves names itself, so
the agent needs no DNS. Its log (hosts asked for, allowed or refused; never a
body: TLS passes through unopened) is ``RUN_DIR/egress-proxy.log``.

Why tinyproxy: a well-kept, small, packaged proxy whose filter is exactly an
allowlist of hostnames; squid would do too, at ten times the size and setup.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tusk.errors import UserError
from tusk.steps.run_claude.box.launch import Spawn

SBIN_PATH = "/usr/sbin:/sbin:/usr/bin:/bin"
CONFIG_FILE = "egress-proxy.conf"
FILTER_FILE = "egress-proxy.filter"
LOG_FILE = "egress-proxy.log"


class EgressError(UserError):
    """The egress proxy could not be started."""


def host_pattern(host: str) -> str:
    """One filter line (POSIX extended regex, matched against the whole request target,
    ``FilterURLs On``): ``CONNECT host:443`` alone. A plain HTTP request's target is
    ``http://host/...``, which no line matches, so it is refused."""
    if host.startswith("*."):
        return "^[a-z0-9.-]*" + _escaped("." + host[2:]) + ":443$"
    return "^" + _escaped(host) + ":443$"


def _escaped(host: str) -> str:
    return re.escape(host).replace(r"\-", "-")


def filter_text(hosts: Sequence[str]) -> str:
    return "".join(f"{host_pattern(h.lower())}\n" for h in sorted(set(hosts)))


def config_text(*, port: int, filter_path: Path, drop_to: tuple[str, str] | None) -> str:
    lines = [
        f"Port {port}",
        "Listen 127.0.0.1",
        "Allow 127.0.0.1",
        "Timeout 600",
        "MaxClients 64",
        f'Filter "{filter_path}"',
        "FilterType ere",
        "FilterURLs On",  # match the whole target: CONNECT host:443, never http://...
        "FilterDefaultDeny Yes",  # the filter is an allowlist
        "ConnectPort 443",
        "DisableViaHeader Yes",
        "LogLevel Connect",
    ]
    if drop_to is not None:
        lines += [f"User {drop_to[0]}", f"Group {drop_to[1]}"]
    return "\n".join(lines) + "\n"


def binary() -> str | None:
    return shutil.which("tinyproxy", path=SBIN_PATH)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class EgressProxy:
    process: subprocess.Popen[bytes]
    port: int
    config: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start(
    hosts: Sequence[str],
    *,
    run_dir: Path,
    spawn: Spawn,
    attempts: int = 3,
    timeout: float = 10.0,
) -> EgressProxy:
    """Start tinyproxy for ``hosts``; its files live in ``run_dir`` (runner-only)."""
    program = binary()
    if program is None:
        raise EgressError(
            "tinyproxy is not installed",
            "The network fence needs it as the agent's egress proxy: apt-get install tinyproxy.",
        )
    filter_path = run_dir / FILTER_FILE
    filter_path.write_text(filter_text(hosts), encoding="utf-8")
    # tinyproxy reads its config and filter before it drops to nobody: they may stay
    # in the runner-only run folder.
    as_root = spawn.user is None and os.geteuid() == 0
    drop_to = _nobody() if as_root else None
    last = ""
    for _ in range(attempts):
        port = free_port()
        config = run_dir / CONFIG_FILE
        config.write_text(
            config_text(port=port, filter_path=filter_path, drop_to=drop_to), encoding="utf-8"
        )
        log = (run_dir / LOG_FILE).open("ab")
        process = subprocess.Popen(
            [program, "-d", "-c", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env={"PATH": SBIN_PATH, "LANG": "C.UTF-8"},
            user=spawn.user,
            group=spawn.group,
            extra_groups=spawn.extra_groups,
            umask=spawn.umask,
            start_new_session=True,
        )
        log.close()
        if _listening(process, port, timeout):
            return EgressProxy(process, port, config)
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.wait()
        last = (run_dir / LOG_FILE).read_text(encoding="utf-8", errors="replace")[-600:]
    raise EgressError("The egress proxy (tinyproxy) did not start", f"Its log ends: {last}")


def _listening(process: subprocess.Popen[bytes], port: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False  # the port was taken in between, or the config was refused
        with socket.socket() as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                time.sleep(0.05)
                return process.poll() is None
        time.sleep(0.05)
    return False


def _nobody() -> tuple[str, str] | None:
    """Who tinyproxy becomes when started as root: the system's nobody."""
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return None
    import grp

    try:
        group = grp.getgrgid(entry.pw_gid).gr_name
    except KeyError:
        return None
    return entry.pw_name, group


def is_egress_proxy(pid: int, config: str) -> bool:
    """Whether ``pid`` is this run's tinyproxy (the cleanup step ends nothing else)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return bool(argv) and argv[0].endswith(b"tinyproxy") and config.encode() in argv
