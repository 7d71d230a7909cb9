"""The run's MCP server process, and the config that points Claude Code at it (MISSION A5).

The MCP server runs as the runner user with the agent and read tokens in its
own environment only (``mcp_server_env``), never opens the agent's workspace
(bundles come over a socket from the broker, ``tusk.git.agent``), and answers
only this run's bearer secret, which reaches Claude Code in a config file
only the run's agent user can read (``write_mcp_config``).
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

from pydantic import SecretStr

from tusk.contracts.passes import PASS_FILE
from tusk.errors import UserError
from tusk.git.agent import AgentGit, broker_pair
from tusk.steps.run_claude.box import cleanup
from tusk.steps.run_claude.box.launch import spawn_as
from tusk.steps.run_claude.box.principal import SAFE_PATH, Principal
from tusk.steps.run_claude.inputs import JobInputs

SERVER_NAME = "github"


class McpServerError(UserError):
    """The MCP server could not be started."""


@dataclass
class McpServer:
    process: subprocess.Popen[str]
    url: str

    def stop(self, *, grace: float = 5.0) -> int | None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def mcp_server_env(
    *,
    runner: Principal,
    tokens: Mapping[str, str],
    api_url: str,
    config: Path | None,
    bearer: str,
) -> dict[str, str]:
    """The server's environment: its tokens and this run's bearer secret live here
    and, for the bearer, in the agent's MCP config; nowhere else."""
    env = {
        "PATH": f"{Path(sys.executable).parent}:{SAFE_PATH}",
        "HOME": str(runner.home),
        "LANG": "C.UTF-8",
        "TUSK_GITHUB_API_URL": api_url,
        "TUSK_MCP_BEARER": bearer,
        **tokens,
    }
    if config is not None:
        env["TUSK_CONFIG"] = str(config)
    return env


def start_mcp_server(
    *,
    run_dir: Path,
    context_file: Path,
    bundle_socket: socket.socket | None,
    config: Path | None,
    env: Mapping[str, str],
    runner: Principal,
    log_path: Path,
    timeout: float = 30.0,
) -> McpServer:
    """Start ``tusk mcp serve`` as ``runner``. It never opens the agent's workspace:
    ``bundle_socket`` leads to the broker that makes the agent's bundles as the agent
    (``tusk.git.agent``), passed as an inherited descriptor."""
    argv = [
        sys.executable,
        "-m",
        "tusk.cli.main",
        "mcp",
        "serve",
        "--port",
        "0",
        "--run-dir",
        str(run_dir),
        "--context",
        str(context_file),
        # The supervisor names the current pass in this runner-only file; the server
        # refuses tools outside it, and everything when the file says nothing usable.
        "--pass-file",
        str(run_dir / PASS_FILE),
    ]
    inherited = (bundle_socket.fileno(),) if bundle_socket is not None else ()
    if bundle_socket is not None:
        argv += ["--bundle-fd", str(bundle_socket.fileno())]
    if config is not None:
        argv += ["--config", str(config)]
    log = log_path.open("a", encoding="utf-8")
    spawn = spawn_as(runner)
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log,
        env=dict(env),
        text=True,
        pass_fds=inherited,
        user=spawn.user,
        group=spawn.group,
        extra_groups=spawn.extra_groups,
        umask=spawn.umask,
        start_new_session=True,
    )
    assert process.stdout is not None
    first: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_forward, args=(process.stdout, log, first), daemon=True).start()
    try:
        url = first.get(timeout=timeout).strip()
    except queue.Empty:
        url = ""
    if not url.startswith("http://127.0.0.1:"):
        McpServer(process, url).stop()
        raise McpServerError(
            "The MCP server did not start",
            f"Expected its URL as the first line of output within {timeout:g} s, got "
            f"{url!r}. Its log is {log_path}.",
        )
    return McpServer(process, url)


def _forward(stream: IO[str], log: IO[str], first: queue.Queue[str]) -> None:
    line = stream.readline()
    first.put(line)
    for line in iter(stream.readline, ""):
        log.write(line)
        log.flush()
    log.close()


def write_mcp_config(path: Path, url: str, *, bearer: str, owner: Principal) -> Path:
    """The MCP config Claude Code reads: the loopback URL and this run's bearer secret,
    in a file only this run's agent user can read (another run's agent cannot)."""
    server = {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {bearer}"}}
    config = {"mcpServers": {SERVER_NAME: server}}
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(config, indent=2) + "\n")
    if owner.uid != os.getuid():
        os.chown(path, owner.uid, owner.gid)
    return path.resolve()


def port_of(url: str) -> int:
    port = urlsplit(url).port
    if port is None:
        raise McpServerError("The MCP server's URL has no port", f"Got {url!r}.")
    return port


def server_tool_pattern() -> str:
    return f"mcp__{SERVER_NAME}__*"


def start_for_run(
    inputs: JobInputs,
    *,
    runner: Principal,
    git: AgentGit,
    tokens: Mapping[str, SecretStr],
    bearer: str,
) -> McpServer:
    """The MCP server as the runner's user, with its bundle broker; recorded for cleanup.
    push_branch's bundles are made by ``git``, run as the workspace's owner (this
    process is root under isolation); the server only gets them over a socket."""
    run_dir = inputs.run_dir
    config = inputs.config_path.resolve() if inputs.config_path else None
    broker, server_end = broker_pair(git)
    broker.start()
    server = start_mcp_server(
        run_dir=run_dir,
        context_file=inputs.resolve(inputs.run.context_file),
        bundle_socket=server_end,
        config=config,
        env=mcp_server_env(
            runner=runner,
            tokens={
                "TUSK_AGENT_TOKEN": tokens["agent_token"].get_secret_value(),
                "TUSK_READ_TOKEN": tokens["read_token"].get_secret_value(),
            },
            api_url=inputs.secrets.github_api_url,
            config=config,
            bearer=bearer,
        ),
        runner=runner,
        log_path=run_dir / "mcp-server.log",
    )
    server_end.close()  # the server holds its own copy; the broker ends when it exits
    cleanup.record(run_dir, mcp_pid=server.process.pid)
    return server
