"""The endpoint answers only this run's agent (its bearer secret), and only with the
tools of the pass the supervisor named (``RUN_DIR/pass.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.mcp.mcp_harness import agent_session
from tusk.contracts.passes import PASS_FILE, parse_pass, write_pass

pytestmark = pytest.mark.anyio

BEARER = "run-secret-0123456789abcdef"


def audit(running: Any) -> list[dict[str, Any]]:
    path = running.audit_path
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def initialize(url: str, headers: dict[str, str]) -> requests.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "curl", "version": "1"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream", **headers}
    return requests.post(url, json=body, headers=headers, timeout=10)


async def test_requests_without_the_runs_bearer_get_401_and_are_audited(start_mcp: Any) -> None:
    running = start_mcp(bearer=BEARER)
    anonymous = initialize(running.url, {})
    wrong = initialize(running.url, {"Authorization": "Bearer another-runs-secret-000000"})
    assert anonymous.status_code == wrong.status_code == 401
    assert anonymous.headers["www-authenticate"] == "Bearer"
    refused = [r for r in audit(running) if r["code"] == "UNAUTHORIZED"]
    assert [r["reason"] for r in refused] == [
        "HTTP 401: no bearer secret",
        "HTTP 401: a wrong bearer secret",
    ]
    assert all(r["decision"] == "refused" for r in refused)
    assert BEARER not in running.audit_path.read_text()
    async with agent_session(running.url, bearer=BEARER) as agent:
        await agent.ok("get_issue", repo="alice/widgets", number=1)


async def test_the_history_pass_may_call_history_and_nothing_else(
    start_mcp: Any, tmp_path: Path
) -> None:
    pass_file = tmp_path / PASS_FILE
    running = start_mcp(pass_file=pass_file)
    write_pass(tmp_path, "Main session", None)
    async with agent_session(running.url) as agent:
        await agent.ok("get_issue", repo="alice/widgets", number=1)
        write_pass(tmp_path, "history", ["history"])
        text = await agent.refused(
            "create_comment", "FORBIDDEN_OPERATION", repo="alice/widgets", number=1, body="x"
        )
        assert "the history pass allows only history" in text
        await agent.refused("get_issue", "FORBIDDEN_OPERATION", repo="alice/widgets", number=1)
        await agent.ok("history", text="Fixed the typo.")
    forbidden = [r for r in audit(running) if r["code"] == "FORBIDDEN_OPERATION"]
    assert [(r["tool"], r["decision"]) for r in forbidden] == [
        ("create_comment", "refused"),
        ("get_issue", "refused"),
    ]


async def test_without_a_word_from_the_supervisor_every_tool_is_refused(
    start_mcp: Any, tmp_path: Path
) -> None:
    running = start_mcp(pass_file=tmp_path / PASS_FILE)
    async with agent_session(running.url) as agent:
        text = await agent.refused("history", "FORBIDDEN_OPERATION", text="x")
        assert "no pass is running" in text
        (tmp_path / PASS_FILE).write_text("{not json")
        await agent.refused("history", "FORBIDDEN_OPERATION", text="x")


@pytest.mark.parametrize(
    "text",
    ['{"pass": 1}', '{"pass": "p", "tools": "history"}', '{"pass": "p", "tools": [1]}', "[]"],
)
def test_a_malformed_pass_file_names_no_pass(text: str) -> None:
    assert parse_pass(text) is None


async def test_no_request_renames_its_client_with_a_forwarded_header(
    start_mcp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing proxies the loopback endpoint: X-Forwarded-For from a local process is
    # not taken as the client's address.
    from tusk.mcp.server import transport

    clients: list[Any] = []
    real = transport.BearerGate.__call__

    async def watched(self: Any, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            clients.append(scope["client"])
        await real(self, scope, receive, send)

    monkeypatch.setattr(transport.BearerGate, "__call__", watched)
    running = start_mcp(bearer=BEARER)
    assert initialize(running.url, {"X-Forwarded-For": "203.0.113.7"}).status_code == 401
    assert clients and clients[0][0] == "127.0.0.1"
