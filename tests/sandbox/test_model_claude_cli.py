"""Acceptance: the real Claude Code CLI, pointed at the scripted model, calls a
tool of a small MCP server over streamable HTTP, and both sides agree on it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from mcp.server.mcpserver import MCPServer

from tusk.sandbox.model_testing import ScriptedModel

REPO = Path(__file__).resolve().parents[2]
CLAUDE = REPO / "node_modules" / ".bin" / "claude"
TOOL = "mcp__probe__lookup"

pytestmark = pytest.mark.slow


@dataclass
class Probe:
    url: str
    calls: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def probe_mcp() -> Iterator[Probe]:
    """A one-tool MCP server (official SDK) over streamable HTTP on 127.0.0.1."""
    server = MCPServer("probe")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    probe = Probe(url=f"http://127.0.0.1:{sock.getsockname()[1]}/mcp")

    @server.tool(structured_output=False)
    def lookup(word: str) -> str:
        """Look a word up in the glossary."""
        probe.calls.append({"word": word})
        return f"definition of {word}: a long tooth"

    http = uvicorn.Server(uvicorn.Config(server.streamable_http_app(), log_level="warning"))
    thread = threading.Thread(target=http.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not http.started:
        assert thread.is_alive() and time.monotonic() < deadline, "MCP server did not start"
        time.sleep(0.02)
    yield probe
    http.should_exit = True
    thread.join(timeout=10)


def run_claude(
    prompt: str, *, model_url: str, mcp_url: str, home: Path, extra: list[str] | None = None
) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[str]]:
    assert CLAUDE.exists(), "node_modules/.bin/claude is missing: run `npm ci`"
    config = home / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"probe": {"type": "http", "url": mcp_url}}}))
    env = {
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "ENABLE_TOOL_SEARCH": "false",
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    argv = [str(CLAUDE), "-p", prompt, "--output-format", "stream-json", "--verbose"]
    argv += ["--setting-sources", "", "--mcp-config", str(config), "--strict-mcp-config"]
    argv += [*(extra or []), "--allowedTools", TOOL]
    done = subprocess.run(
        argv, env=env, cwd=home, capture_output=True, text=True, timeout=180, check=False
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return events, done


def blocks_of(events: list[dict[str, Any]], kind: str, block_type: str) -> list[dict[str, Any]]:
    return [
        block
        for event in events
        if event.get("type") == kind
        for block in event["message"]["content"]
        if isinstance(block, dict) and block.get("type") == block_type
    ]


LOOKUP_SCRIPT = {
    "steps": [
        {"expect": {"tools_include": [TOOL], "prompt_contains": "Look up tusk"}},
        {"tool_use": {"name": TOOL, "input": {"word": "tusk"}}},
        {"expect": {"last_tool_result_contains": "definition of tusk: a long tooth"}},
        {"text": "A tusk is a long tooth."},
    ]
}


def test_real_claude_code_calls_an_mcp_tool_the_scripted_model_asked_for(
    scripted_model: ScriptedModel, probe_mcp: Probe, tmp_path: Path
) -> None:
    url = scripted_model.start(LOOKUP_SCRIPT)
    events, done = run_claude(
        "Look up tusk in the glossary.", model_url=url, mcp_url=probe_mcp.url, home=tmp_path
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    init = next(e for e in events if e.get("subtype") == "init")
    assert {"name": "probe", "status": "connected", "source": "dynamic"} in init["mcp_servers"]
    (tool_use,) = blocks_of(events, "assistant", "tool_use")
    assert (tool_use["name"], tool_use["input"]) == (TOOL, {"word": "tusk"})
    (tool_result,) = blocks_of(events, "user", "tool_result")
    assert tool_result["tool_use_id"] == tool_use["id"]
    assert "definition of tusk: a long tooth" in json.dumps(tool_result["content"])
    assert not tool_result.get("is_error")
    result = events[-1]
    assert (result["type"], result["is_error"], result["result"]) == (
        "result",
        False,
        "A tusk is a long tooth.",
    )
    assert probe_mcp.calls == [{"word": "tusk"}]

    journal = scripted_model.journal()
    assert [(e["kind"], e["status"]) for e in journal] == [("tool_use", 200), ("text", 200)]
    assert journal[0]["response"][0]["id"] == tool_use["id"]
    last_message = journal[1]["request"]["messages"][-1]
    sent = [b for b in last_message["content"] if b.get("type") == "tool_result"]
    assert [b["tool_use_id"] for b in sent] == [tool_use["id"]]
    assert "definition of tusk" in json.dumps(sent[0]["content"])
    assert scripted_model.failures() == []


def test_one_script_drives_a_run_and_its_resume_turn_by_prompt(
    scripted_model: ScriptedModel, probe_mcp: Probe, tmp_path: Path
) -> None:
    url = scripted_model.start(
        {
            **LOOKUP_SCRIPT,
            "conversations": [
                {
                    "when_prompt_contains": "one-line summary",
                    "steps": [
                        {"expect": {"last_tool_result_contains": "definition of tusk"}},
                        {"text": "Looked up tusk."},
                    ],
                }
            ],
        }
    )
    first, done = run_claude(
        "Look up tusk in the glossary.", model_url=url, mcp_url=probe_mcp.url, home=tmp_path
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    session = first[-1]["session_id"]
    second, done = run_claude(
        "Write a one-line summary of the run.",
        model_url=url,
        mcp_url=probe_mcp.url,
        home=tmp_path,
        extra=["--resume", session],
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert second[-1]["result"] == "Looked up tusk."
    assert second[-1]["session_id"] == session
    assert [e["conversation"] for e in scripted_model.journal()] == [
        "default",
        "default",
        "one-line summary",
    ]


def user_line(text: str) -> str:
    content = [{"type": "text", "text": text}]
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}}) + "\n"


def test_a_message_streamed_after_a_turn_ends_is_a_user_message_of_the_same_session(
    scripted_model: ScriptedModel, probe_mcp: Probe, tmp_path: Path
) -> None:
    """What follow-ups rest on (docs/claude-code-streamed-input.md): with a streamed input
    a session outlives its first turn; a message written after the turn's ``result``
    starts the next turn of the same session, as a user message, with the whole history."""
    url = scripted_model.start(
        {
            "steps": [
                *LOOKUP_SCRIPT["steps"],
                {"expect": {"prompt_contains": "FOLLOW-UP: say it shorter"}},
                {"expect": {"last_tool_result_contains": "definition of tusk"}},
                {"text": "A long tooth."},
            ]
        }
    )
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"probe": {"type": "http", "url": probe_mcp.url}}}))
    env = {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "ENABLE_TOOL_SEARCH": "false",
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    argv = [str(CLAUDE), "-p", "--output-format", "stream-json", "--verbose"]
    argv += ["--input-format", "stream-json", "--replay-user-messages"]
    argv += ["--setting-sources", "", "--mcp-config", str(config), "--strict-mcp-config"]
    argv += ["--allowedTools", TOOL]
    process = subprocess.Popen(
        argv, env=env, cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(user_line("Look up tusk in the glossary."))
    process.stdin.flush()
    events: list[dict[str, Any]] = []
    try:
        for line in process.stdout:
            event = json.loads(line)
            events.append(event)
            if event.get("type") != "result":
                continue
            if sum(e.get("type") == "result" for e in events) == 1:
                process.stdin.write(user_line("FOLLOW-UP: say it shorter"))
                process.stdin.flush()
            else:
                process.stdin.close()  # no more input: the session ends
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()

    results = [e for e in events if e.get("type") == "result"]
    assert [r["result"] for r in results] == ["A tusk is a long tooth.", "A long tooth."]
    assert len({e["session_id"] for e in events if "session_id" in e}) == 1
    echoed = [b["text"] for b in blocks_of(events, "user", "text")]
    assert echoed == ["Look up tusk in the glossary.", "FOLLOW-UP: say it shorter"]
    last = scripted_model.journal()[-1]["request"]["messages"]
    assert last[-1]["role"] == "user"
    assert "FOLLOW-UP: say it shorter" in json.dumps(last[-1]["content"])
