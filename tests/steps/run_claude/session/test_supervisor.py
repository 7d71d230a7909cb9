"""run_session's plumbing, with a stand-in child process that prints a stream
and then waits for a signal (no real time is slept anywhere)."""

from __future__ import annotations

import io
import itertools
import json
import pwd
import sys
import threading
from pathlib import Path

import pytest

from tusk.steps.run_claude.box.cleanup import end_processes_of
from tusk.steps.run_claude.box.principal import Principal
from tusk.steps.run_claude.session.run import run_session
from tusk.steps.run_claude.session.watch import StreamWatch

CHILD = """
import signal, sys
def bye(*_):
    sys.exit(143)
signal.signal(signal.SIGTERM, bye)
sys.stdin.read()
for line in open(sys.argv[1]):
    sys.stdout.write(line)
    sys.stdout.flush()
if sys.argv[2] == "wait":
    signal.pause()
"""


def init() -> dict:
    return {
        "type": "system",
        "subtype": "init",
        "session_id": "s-1",
        "mcp_servers": [{"name": "github", "status": "connected"}],
        "tools": [],
    }


def pair(index: int) -> list[dict]:
    return [
        {
            "type": "assistant",
            "message": {
                "content": [
                    {"type": "tool_use", "id": f"t{index}", "name": "Bash", "input": {"c": "x"}}
                ]
            },
        },
        {
            "type": "user",
            "message": {
                "content": [{"type": "tool_result", "tool_use_id": f"t{index}", "content": "same"}]
            },
        },
    ]


def start(tmp_path: Path, events: list[dict], *, then: str, **kwargs: object):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    stream = tmp_path / "stream.jsonl"
    stream.write_text("".join(json.dumps(e) + "\n" for e in events))
    saved = io.StringIO()
    watch = kwargs.pop("watch", None) or StreamWatch(loop_threshold=3)
    options: dict = {
        "prompt": "hello",
        "env": {"PATH": "/usr/bin:/bin"},
        "user": None,
        "cwd": tmp_path,
        "watch": watch,
        "events": saved,
        "loop_file": tmp_path / "loop-detected.json",
        "budget_seconds": 3600.0,
        "stderr_path": tmp_path / "stderr.log",
    }
    options.update(kwargs)
    session = run_session([sys.executable, str(script), str(stream), then], **options)
    return session, saved.getvalue()


def test_a_loop_is_stopped_with_sigterm_and_the_reason_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [init(), *pair(1), *pair(2), *pair(3), *pair(4)]
    session, saved = start(tmp_path, events, then="wait")
    # The kill is in the step log too (MISSION L1), as an error annotation.
    assert session.stop is not None
    assert f"error: Stopping Claude Code (loop): {session.stop.reason}" in (capsys.readouterr().err)
    assert session.exit_code == 143
    assert session.stop is not None and session.stop.kind == "loop"
    stopped = [json.loads(line) for line in saved.splitlines() if '"type": "tusk"' in line]
    assert stopped == [
        {"type": "tusk", "subtype": "stopped", "kind": "loop", "text": session.stop.reason}
    ]


def test_a_session_that_ends_by_itself_keeps_every_line(tmp_path: Path) -> None:
    result = {"type": "result", "subtype": "success", "is_error": False, "session_id": "s-1"}
    session, saved = start(tmp_path, [init(), *pair(1), result], then="exit")
    assert session.exit_code == 0 and session.stop is None
    assert session.watch.result == result and len(saved.splitlines()) == 4


def test_the_wall_clock_budget_stops_a_stalled_session(tmp_path: Path) -> None:
    watch = StreamWatch(loop_threshold=3)
    # Time jumps past the budget once the child is up and has spoken.
    session, saved = start(
        tmp_path,
        [init()],
        then="wait",
        budget_seconds=60.0,
        watch=watch,
        clock=lambda: 10_000.0 if watch.events else 0.0,
        poll_seconds=0.01,
    )
    assert session.exit_code == 143
    assert session.stop is not None and session.stop.kind == "timeout"
    assert '"kind": "timeout"' in saved


def test_the_mcp_servers_loop_report_stops_the_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "loop-detected.json").write_text('{"old": true}')  # from an earlier pass
    script = tmp_path / "writer.py"
    # The stand-in writes the report itself after its init line, as the server would.
    script.write_text(
        CHILD.replace(
            'if sys.argv[2] == "wait":',
            'open(sys.argv[3], "w").write(\'{"tool": "get_issue", "repeats": 6}\')\n'
            'if sys.argv[2] == "wait":',
        )
    )
    stream = tmp_path / "stream.jsonl"
    stream.write_text(json.dumps(init()) + "\n")
    watch = StreamWatch(loop_threshold=6)
    session = run_session(
        [sys.executable, str(script), str(stream), "wait", str(tmp_path / "loop-detected.json")],
        prompt="",
        env={"PATH": "/usr/bin:/bin"},
        user=None,
        cwd=tmp_path,
        watch=watch,
        events=io.StringIO(),
        loop_file=tmp_path / "loop-detected.json",
        budget_seconds=3600.0,
        stderr_path=tmp_path / "stderr.log",
        poll_seconds=0.01,
    )
    assert session.exit_code == 143
    assert session.stop is not None and session.stop.kind == "mcp_loop"
    assert '"repeats": 6' in session.stop.reason
    assert "error: Stopping Claude Code (mcp_loop): " in capsys.readouterr().err


def test_an_old_loop_report_does_not_stop_a_new_session(tmp_path: Path) -> None:
    (tmp_path / "loop-detected.json").write_text('{"old": true}')
    result = {"type": "result", "subtype": "success", "is_error": False}
    session, _ = start(tmp_path, [init(), result], then="exit", poll_seconds=0.01)
    assert session.stop is None and session.exit_code == 0


def test_a_disconnected_mcp_server_stops_at_init(tmp_path: Path) -> None:
    failed = {**init(), "mcp_servers": [{"name": "github", "status": "failed"}]}
    session, _ = start(tmp_path, [failed, *pair(1)], then="wait")
    assert session.stop is not None and session.stop.kind == "mcp_not_connected"
    assert session.exit_code == 143


def test_a_leftover_process_holding_the_stream_open_cannot_hang_the_run(
    tmp_path: Path, agent_user: str
) -> None:
    # Claude Code exits, but a process the agent started in a new session keeps
    # the stream's write end: the supervisor must end it, not wait for EOF forever.
    entry = pwd.getpwnam(agent_user)
    agent = Principal(agent_user, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir))
    line = json.dumps(init())
    ticks = itertools.count()
    outcome: dict = {}

    def session() -> None:
        outcome["run"] = run_session(
            ["/bin/sh", "-c", f"echo '{line}'; setsid sleep 1000 & exit 0"],
            prompt="",
            env={"PATH": "/usr/bin:/bin"},
            user=agent,
            cwd=Path("/"),
            watch=StreamWatch(loop_threshold=6),
            events=io.StringIO(),
            loop_file=tmp_path / "loop-detected.json",
            budget_seconds=1e12,
            stderr_path=tmp_path / "stderr.log",
            clock=lambda: next(ticks) * 100.0,  # every look at the clock: 100 s later
            poll_seconds=0.01,
        )

    worker = threading.Thread(target=session, daemon=True)
    worker.start()
    worker.join(timeout=30)
    hung = worker.is_alive()
    end_processes_of(agent)  # lets a hung session end, so the test run goes on
    worker.join(timeout=10)
    assert not hung, "the supervisor waited for a stream a leftover process held open"
    assert outcome["run"].exit_code == 0


def test_a_session_silent_past_the_stall_time_with_no_tool_in_flight_is_ended(
    tmp_path: Path,
) -> None:
    watch = StreamWatch(loop_threshold=3)
    ticks = [0.0]

    def clock() -> float:
        """The stream speaks (init), then falls silent: each look is 100 s later."""
        if watch.events:
            ticks[0] += 100
        return ticks[0]

    session, saved = start(
        tmp_path,
        [init()],
        then="wait",
        watch=watch,
        stall_seconds=600.0,
        clock=clock,
        poll_seconds=0.01,
    )
    assert session.exit_code == 143
    assert session.stop is not None and session.stop.kind == "stalled"
    assert "no model answer and no tool call for 600 s" in session.stop.reason
    assert '"kind": "stalled"' in saved


def test_a_tool_call_in_flight_is_no_stall(tmp_path: Path) -> None:
    watch = StreamWatch(loop_threshold=3)
    busy = [init(), pair(1)[0]]  # a tool_use whose result has not come back
    ticks = [0.0]

    def clock() -> float:
        if watch.events >= 2:
            ticks[0] += 100
        return ticks[0]

    session, _ = start(
        tmp_path,
        busy,
        then="wait",
        watch=watch,
        stall_seconds=600.0,
        budget_seconds=5_000.0,
        clock=clock,
        poll_seconds=0.01,
    )
    assert session.stop is not None and session.stop.kind == "timeout"  # never "stalled"
