"""Start the MCP server and Claude Code, and watch Claude Code live (MISSION A5, A6).

The MCP server runs as the runner user with the agent and read tokens in its
own environment only; Claude Code runs as the agent user with the
environment ``isolation.agent_env`` built from nothing. Every stream line is
saved and fed to ``watch.StreamWatch``; a loop, the MCP server's own loop
report (``RUN_DIR/loop-detected.json``), a disconnected MCP server or the
wall-clock budget ends the session with SIGTERM (Claude Code exits 143 and
writes no result event, so the reason is recorded here).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from tusk.actions.run_claude.isolation import (
    SAFE_PATH,
    Principal,
    agent_launch,
    end_processes_of,
    spawn_kwargs,
)
from tusk.actions.run_claude.transcript import TUSK_EVENT
from tusk.actions.run_claude.watch import StopReason, StreamWatch

from tusk import actions_edge
from tusk.errors import UserError
from tusk.passes import PASS_FILE

SERVER_NAME = "github"
LOOP_FILE = "loop-detected.json"
# Written by the MCP server when the trigger's repository sends the bot away mid-run.
GO_AWAY_FILE = "go-away.json"
KILL_GRACE_SECONDS = 10.0


class SupervisorError(UserError):
    """The run could not be started or watched."""


# --------------------------------------------------------------------------- MCP server


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
    (``tusk.agent_git``), passed as an inherited descriptor."""
    argv = [
        sys.executable,
        "-m",
        "tusk.cli",
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
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log,
        env=dict(env),
        text=True,
        pass_fds=inherited,
        **spawn_kwargs(runner),  # type: ignore[arg-type]
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
        raise SupervisorError(
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
        raise SupervisorError("The MCP server's URL has no port", f"Got {url!r}.")
    return port


# --------------------------------------------------------------------------- Claude Code


def claude_argv(
    claude: Path,
    *,
    mcp_config: Path,
    builtin_tools: Sequence[str],
    allowed_tools: Sequence[str],
    max_turns: int,
    model: str | None = None,
    resume: str | None = None,
    disallowed_tools: Sequence[str] = (),
) -> list[str]:
    """Claude Code's command line. No secret and no prompt: the prompt goes to stdin,
    since the list flags would swallow a trailing prompt."""
    argv = [
        str(claude),
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--mcp-config",
        str(mcp_config),
        "--strict-mcp-config",
        "--setting-sources",
        "",
        "--max-turns",
        str(max_turns),
    ]
    if model:
        argv += ["--model", model]
    if resume:
        argv += ["--resume", resume]
    argv += ["--tools", ",".join(builtin_tools)]
    argv += ["--allowedTools", *allowed_tools]
    if disallowed_tools:
        argv += ["--disallowedTools", *disallowed_tools]
    return argv


def server_tool_pattern() -> str:
    return f"mcp__{SERVER_NAME}__*"


@dataclass
class SessionRun:
    exit_code: int | None
    watch: StreamWatch
    seconds: float

    @property
    def stop(self) -> StopReason | None:
        return self.watch.stop


def tusk_event(subtype: str, **fields: Any) -> str:
    return json.dumps({"type": TUSK_EVENT, "subtype": subtype, **fields}) + "\n"


def run_session(
    argv: Sequence[str],
    *,
    prompt: str,
    env: Mapping[str, str],
    user: Principal | None,
    cwd: Path,
    watch: StreamWatch,
    events: IO[str],
    loop_file: Path,
    budget_seconds: float,
    stderr_path: Path,
    clock: Callable[[], float] = time.monotonic,
    poll_seconds: float = 0.2,
    scrub: Callable[[str], str] = str,
    external_stop: Callable[[], StopReason | None] = lambda: None,
    confine: Mapping[str, str] | None = None,
) -> SessionRun:
    """Run one Claude Code session to its end, stopping it when the watch says so.

    ``scrub`` cleans each line before it is saved: the agent can read the API key
    and may print it, and the saved stream may end up in an artifact.
    ``external_stop`` is asked at every poll and after every line: a reason from
    outside the stream (the model proxy's budget) ends the session like a loop.
    ``confine`` (``isolation.confinement_tools()``) starts Claude Code in the agent's
    own mount namespace (``isolation.agent_launch``)."""
    started = clock()
    loop_seen_before = _stamp(loop_file)
    launch = agent_launch(argv, user, tools=confine)
    with stderr_path.open("a", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            launch.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=dict(env),
            cwd=cwd,
            text=True,
            bufsize=1,
            **launch.kwargs,  # type: ignore[arg-type]
        )
    assert process.stdin is not None and process.stdout is not None
    lock = threading.Lock()
    finished = threading.Event()

    def stop_with(reason: StopReason) -> None:
        with lock:
            if watch.stop is not None:
                return
            watch.stop = reason
            events.write(tusk_event("stopped", kind=reason.kind, text=reason.reason))
        announce_stop(reason)
        _terminate(process)

    def loop_reported() -> bool:
        stamp = _stamp(loop_file)
        return stamp is not None and stamp != loop_seen_before

    def monitor() -> None:
        exited_at: float | None = None
        while not finished.wait(poll_seconds):
            if process.poll() is not None:
                # Claude Code is gone, yet its stream is still open: a process the
                # agent left behind holds it (one can reopen /proc/<pid>/fd/1). Without
                # this the budget means nothing and the run hangs until the job dies.
                exited_at = clock() if exited_at is None else exited_at
                if clock() - exited_at > KILL_GRACE_SECONDS:
                    if user is not None:
                        end_processes_of(user)  # never root or ourselves
                    return
                continue
            if clock() - started > budget_seconds:
                stop_with(StopReason("timeout", f"the wall-clock budget of {budget_seconds:g} s"))
                return
            if loop_reported():
                stop_with(StopReason("mcp_loop", _loop_reason(loop_file)))
                return
            outside = external_stop()
            if outside is not None:
                stop_with(outside)
                return

    threading.Thread(target=monitor, daemon=True).start()
    try:
        try:
            process.stdin.write(prompt)
            process.stdin.close()
        except BrokenPipeError:
            pass  # Claude Code ended before reading; its exit code says why
        for line in iter(process.stdout.readline, ""):
            with lock:
                events.write(scrub(line))
                reason = watch.feed(line)
                if reason is not None:
                    events.write(tusk_event("stopped", kind=reason.kind, text=reason.reason))
            if reason is not None:
                announce_stop(reason)
                _terminate(process)
            elif '"tool_result"' in line and loop_reported():
                # The server refused a call as a loop: act on it now, not at the next poll.
                stop_with(StopReason("mcp_loop", _loop_reason(loop_file)))
            elif (outside := external_stop()) is not None:
                stop_with(outside)
    except BaseException:
        # Cancelled (a signal) or a bug: Claude Code must not outlive this run.
        finished.set()
        stop_now(process)
        with contextlib.suppress(Exception):
            events.write(tusk_event("stopped", kind="cancelled", text="run-claude was stopped"))
            events.flush()
        raise
    finished.set()
    if watch.stop is None and (outside := external_stop()) is not None:
        stop_with(outside)  # spent past the budget on the very last answer
    if watch.stop is None and loop_reported():
        # Claude Code ended on its own before any poll saw the server's report.
        stop_with(StopReason("mcp_loop", _loop_reason(loop_file)))
    try:
        exit_code = process.wait(timeout=KILL_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        exit_code = process.wait()
    events.flush()
    return SessionRun(exit_code=exit_code, watch=watch, seconds=clock() - started)


def stop_now(process: subprocess.Popen[str], *, grace: float = 3.0) -> int | None:
    """Stop Claude Code at once: SIGTERM (it exits 143), then SIGKILL to its whole group."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=grace)
    return process.poll()


def announce_stop(reason: StopReason) -> None:
    """The step log shows every kill as it happens (MISSION L1), not only the log issue."""
    actions_edge.error(f"Stopping Claude Code ({reason.kind})", detail=reason.reason)


def _stamp(path: Path) -> tuple[float, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_mtime, info.st_size)


def _loop_reason(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")[:500]
    except OSError:
        text = ""
    return f"the MCP server reported LOOP_DETECTED ({text.strip() or 'no detail'})"


def _terminate(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        timer = threading.Timer(KILL_GRACE_SECONDS, _kill_group, args=(process,))
        timer.daemon = True
        timer.start()


def _kill_group(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
