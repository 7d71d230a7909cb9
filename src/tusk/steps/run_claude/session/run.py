"""One Claude Code session, watched live (MISSION A6).

Claude Code runs as the agent user with the environment ``launch.agent_env``
built from nothing; its command line carries no secret and no prompt
(``command.claude_argv``). Every stream line is saved and fed to
``watch.StreamWatch``; a loop, the MCP server's own loop report
(``RUN_DIR/loop-detected.json``), the wall-clock budget or a reason from
outside the stream (the model budget, a go-away in flight) ends the session
with SIGTERM (Claude Code exits 143 and writes no result event, so the reason
is recorded here).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tusk import actions_edge
from tusk.steps.run_claude.box.bwrap import inner_pid
from tusk.steps.run_claude.box.cleanup import end_processes_of
from tusk.steps.run_claude.box.launch import BoxCommand, agent_launch
from tusk.steps.run_claude.box.principal import Principal
from tusk.steps.run_claude.session import command
from tusk.steps.run_claude.session.command import tusk_event
from tusk.steps.run_claude.session.watch import StopReason, StreamWatch

LOOP_FILE = "loop-detected.json"
# Written by the MCP server when the trigger's repository sends the bot away mid-run.
GO_AWAY_FILE = "go-away.json"
KILL_GRACE_SECONDS = 10.0


@dataclass
class SessionRun:
    exit_code: int | None
    watch: StreamWatch
    seconds: float

    @property
    def stop(self) -> StopReason | None:
        return self.watch.stop


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
    box: BoxCommand | None = None,
    followups: Callable[[], list[str]] | None = None,
    stall_seconds: float | None = None,
) -> SessionRun:
    """Run one Claude Code session to its end, stopping it when the watch says so.

    ``scrub`` cleans each line before it is saved: the agent can read the API key
    and may print it, and the saved stream may end up in an artifact.
    ``external_stop`` is asked at every poll and after every line: a reason from
    outside the stream (the model proxy's budget) ends the session like a loop.
    ``box`` turns Claude Code's command line into one that starts it in the run's
    box (``launch.agent_launch``). ``followups``, with a streamed input
    (``command.claude_argv(streamed_input=True)``): asked at the end of each turn for
    the user messages to send next; none closes the input, and the session ends.
    ``stall_seconds``: no stream line (no model answer, no tool result) this long while
    no tool call is in flight ends the session as stalled."""
    started = clock()
    loop_seen_before = _stamp(loop_file)
    launch = agent_launch(argv, user, box=box)
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
            user=launch.spawn.user,
            group=launch.spawn.group,
            extra_groups=launch.spawn.extra_groups,
            umask=launch.spawn.umask,
            start_new_session=True,
        )
    session = _Session(
        process,
        watch=watch,
        events=events,
        user=user,
        stops=_Stops(
            loop_file=loop_file,
            loop_seen_before=loop_seen_before,
            external=external_stop,
            budget_seconds=budget_seconds,
            started=started,
            clock=clock,
            stall_seconds=stall_seconds,
        ),
    )
    threading.Thread(target=session.monitor, args=(poll_seconds,), daemon=True).start()
    try:
        session.pump(prompt, scrub, followups)
    except BaseException:
        # Cancelled (a signal) or a bug: Claude Code must not outlive this run.
        session.abort()
        raise
    exit_code = session.finish()
    return SessionRun(exit_code=exit_code, watch=watch, seconds=clock() - started)


@dataclass(frozen=True)
class _Stops:
    """The reasons to stop a session that come from outside its stream."""

    loop_file: Path
    loop_seen_before: tuple[float, int] | None
    external: Callable[[], StopReason | None]
    budget_seconds: float
    started: float
    clock: Callable[[], float]
    stall_seconds: float | None = None
    heard: list[float] = field(default_factory=list)  # when the stream last spoke

    def stalled(self, watch: StreamWatch) -> StopReason | None:
        if self.stall_seconds is None or watch.tool_in_flight:
            return None
        last = self.heard[-1] if self.heard else self.started
        if self.clock() - last > self.stall_seconds:
            return StopReason(
                "stalled",
                f"no model answer and no tool call for {self.stall_seconds:g} s",
            )
        return None

    def loop_reported(self) -> bool:
        """The MCP server wrote a loop report since the session started."""
        stamp = _stamp(self.loop_file)
        return stamp is not None and stamp != self.loop_seen_before

    def loop(self) -> StopReason:
        return StopReason("mcp_loop", _loop_reason(self.loop_file))

    def timed_out(self) -> StopReason | None:
        if self.clock() - self.started > self.budget_seconds:
            return StopReason("timeout", f"the wall-clock budget of {self.budget_seconds:g} s")
        return None


class _Session:
    """A running Claude Code process, its saved stream, and the first reason to stop it.

    The stream is read on the caller's thread (``pump``); ``monitor`` polls on its
    own thread for what the stream cannot tell. Each stop is recorded once, under
    ``lock``, in the watch and the saved stream."""

    def __init__(
        self,
        process: subprocess.Popen[str],
        *,
        watch: StreamWatch,
        events: IO[str],
        user: Principal | None,
        stops: _Stops,
    ) -> None:
        self.process = process
        self.watch = watch
        self.events = events
        self.user = user
        self.stops = stops
        self.lock = threading.Lock()
        self.finished = threading.Event()

    def stop_with(self, reason: StopReason) -> None:
        with self.lock:
            if self.watch.stop is not None:
                return
            self.watch.stop = reason
            self.events.write(tusk_event("stopped", kind=reason.kind, text=reason.reason))
        announce_stop(reason)
        _terminate(self.process)

    def monitor(self, poll_seconds: float) -> None:
        """Poll for the budget, the server's loop report and outside reasons; and end
        what the agent left holding the stream open after Claude Code exited."""
        clock = self.stops.clock
        exited_at: float | None = None
        while not self.finished.wait(poll_seconds):
            if self.process.poll() is not None:
                # Claude Code is gone, yet its stream is still open: a process the
                # agent left behind holds it (one can reopen /proc/<pid>/fd/1). Without
                # this the budget means nothing and the run hangs until the job dies.
                exited_at = clock() if exited_at is None else exited_at
                if clock() - exited_at > KILL_GRACE_SECONDS:
                    if self.user is not None:
                        end_processes_of(self.user)  # never root or ourselves
                    return
                continue
            reason = self.stops.timed_out() or self.stops.stalled(self.watch)
            if reason is None and self.stops.loop_reported():
                reason = self.stops.loop()
            if reason is None:
                reason = self.stops.external()
            if reason is not None:
                self.stop_with(reason)
                return

    def pump(
        self,
        prompt: str,
        scrub: Callable[[str], str],
        followups: Callable[[], list[str]] | None = None,
    ) -> None:
        """Send the prompt, then save and watch every line until the stream ends. With
        ``followups`` the input stays open: at the end of each turn (its ``result``)
        the next user messages go in, or the input closes and the session ends."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self._send(command.user_message(prompt) if followups is not None else prompt)
        if followups is None:
            self._close_input()
        turn_ended = None
        for line in iter(self.process.stdout.readline, ""):
            self.stops.heard[:] = [self.stops.clock()]
            with self.lock:
                self.events.write(scrub(line))
                reason = self.watch.feed(line)
                if reason is not None:
                    self.events.write(tusk_event("stopped", kind=reason.kind, text=reason.reason))
            if reason is not None:
                announce_stop(reason)
                _terminate(self.process)
            elif '"tool_result"' in line and self.stops.loop_reported():
                # The server refused a call as a loop: act on it now, not at the next poll.
                self.stop_with(self.stops.loop())
            elif (outside := self.stops.external()) is not None:
                self.stop_with(outside)
            if followups is not None and self.watch.result is not turn_ended:
                turn_ended = self.watch.result
                self._next_turn(followups)

    def _next_turn(self, followups: Callable[[], list[str]]) -> None:
        """A turn ended: a safe point. Hand over what waits, or end the session. Never
        after a stop or an error: the session is over then."""
        result = self.watch.result or {}
        messages = [] if self.watch.stop is not None or result.get("is_error") else followups()
        for text in messages:
            self.events.write(tusk_event("followup", text=text))
            self._send(command.user_message(text))
        if not messages:
            self._close_input()

    def _send(self, text: str) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(text)
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # Claude Code ended before reading; its exit code says why

    def _close_input(self) -> None:
        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError, ValueError):
            self.process.stdin.close()

    def abort(self) -> None:
        self.finished.set()
        stop_now(self.process)
        with contextlib.suppress(Exception):
            self.events.write(
                tusk_event("stopped", kind="cancelled", text="run-claude was stopped")
            )
            self.events.flush()

    def finish(self) -> int:
        """After the stream ended: the reasons no poll saw yet, then the exit code."""
        self.finished.set()
        if self.watch.stop is None and (outside := self.stops.external()) is not None:
            self.stop_with(outside)  # spent past the budget on the very last answer
        if self.watch.stop is None and self.stops.loop_reported():
            # Claude Code ended on its own before any poll saw the server's report.
            self.stop_with(self.stops.loop())
        try:
            exit_code = self.process.wait(timeout=KILL_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            _kill_group(self.process)
            exit_code = self.process.wait()
        self.events.flush()
        return exit_code


def stop_now(process: subprocess.Popen[str], *, grace: float = 3.0) -> int | None:
    """Stop Claude Code at once: SIGTERM (it exits 143), then SIGKILL to its whole group."""
    if process.poll() is None:
        _sigterm(process)
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


def _sigterm(process: subprocess.Popen[str]) -> None:
    """SIGTERM to Claude Code itself, inside its box when it has one: it then ends as it
    would outside (exit 143) and the box with it. bwrap would die of it at once and
    take Claude Code down with SIGKILL."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(inner_pid(process.pid) or process.pid, signal.SIGTERM)


def _terminate(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        _sigterm(process)
        timer = threading.Timer(KILL_GRACE_SECONDS, _kill_group, args=(process,))
        timer.daemon = True
        timer.start()


def _kill_group(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
