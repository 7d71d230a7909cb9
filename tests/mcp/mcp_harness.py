"""Helpers for the MCP server tests: the scenario, settings, context, and the model's side
of an MCP session (the SDK's client over streamable HTTP)."""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2 as httpx
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tusk.contracts.config import Settings
from tusk.contracts.models import ContextDocument, PermissionConfig, Trigger
from tusk.mcp.server.runtime import Runtime

BOT = "tusk-bot"
# Long, token-shaped names: the sandbox's token string is its name, and the
# server only scrubs strings long enough not to be ordinary words.
AGENT_TOKEN = "agent-token-4f1c9e2b7d6a"
READ_TOKEN = "read-token-8e3b1d0c5a9f"
LOG_URL = "https://github.com/alice/tusk-control/issues/77"
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def scenario(*, with_fork: bool = False) -> dict[str, Any]:
    fork = [{"name": f"{BOT}/widgets", "fork_of": "alice/widgets"}] if with_fork else []
    return {
        "users": [{"login": BOT}, {"login": "alice"}, {"login": "bob"}],
        "tokens": {
            "alice": {"user": "alice", "scopes": ["repo"]},
            READ_TOKEN: {"user": BOT, "scopes": ["repo"], "read_only": True},
            AGENT_TOKEN: {"user": BOT, "scopes": ["repo", "workflow"]},
        },
        "repos": [
            {
                "name": "alice/widgets",
                "default_branch": "main",
                "branches": [{"name": "main"}],
                "files": {"README.md": "# Widgets\n", ".github/workflows/ci.yml": "on: push\n"},
                "issues": [
                    {
                        "number": 1,
                        "author": "alice",
                        "title": "Typo in README",
                        "body": "Widgets is mispelled",
                        "comments": [
                            {"author": "alice", "body": f"@{BOT} please fix it"},
                            {"author": BOT, "body": "An answer from an earlier run"},
                        ],
                    },
                    {"number": 2, "author": "alice", "title": "Second", "body": "another"},
                ],
                "pulls": [
                    {
                        "number": 3,
                        "author": "bob",
                        "title": "Add gizmo",
                        "body": "Adds a gizmo",
                        "head": "gizmo",
                        "base": "main",
                        "files": {"gizmo.py": "print('gizmo')\n"},
                        "reviews": [
                            {
                                "author": "alice",
                                "body": "Nearly",
                                "state": "COMMENTED",
                                "comments": [{"body": "Rename it", "path": "gizmo.py", "line": 1}],
                            }
                        ],
                    }
                ],
                "has_discussions": True,
                "discussions": [
                    {
                        "number": 4,
                        "author": "alice",
                        "title": "Ideas",
                        "body": "What next?",
                        "category": "General",
                        "comments": [
                            {
                                "author": "bob",
                                "body": "More widgets",
                                "replies": [{"author": "alice", "body": "Agreed"}],
                            }
                        ],
                    }
                ],
            },
            {
                "name": "alice/tusk-control",
                "default_branch": "main",
                "branches": [{"name": "main"}],
                "collaborators": {BOT: "write"},
            },
            {
                "name": "bob/gadgets",
                "default_branch": "main",
                "branches": [{"name": "main"}],
                "issues": [{"number": 1, "author": "bob", "title": "Gadget", "body": "b"}],
            },
            {  # private, unrelated to the task, but the bot's tokens can read it
                "name": "bob/private-notes",
                "private": True,
                "default_branch": "main",
                "branches": [{"name": "main"}],
                "collaborators": {BOT: "read"},
                "files": {"passwords.txt": "hunter2\n"},
                "issues": [{"number": 1, "author": "bob", "title": "Gadget plans", "body": "p"}],
            },
            *fork,
        ],
    }


def settings(**overrides: Any) -> Settings:
    data: dict[str, Any] = {
        "bot": BOT,
        "control_repo": "alice/tusk-control",
        "allowed_users": ["alice"],
    }
    data.update(overrides)
    return Settings.model_validate(data)


def context(
    permissions: PermissionConfig | None = None,
    *,
    raw: dict[str, Any] | None = None,
    body: str = f"@{BOT} please fix it",
) -> ContextDocument:
    return ContextDocument(
        jobid="job-widgets-1",
        repo="alice/widgets",
        actor="alice",
        trust_level="owner",
        permission_config=permissions or PermissionConfig(),
        trigger=Trigger(
            type="issue_comment",
            id="1001",
            url="https://github.com/alice/widgets/issues/1#issuecomment-1001",
            number=1,
            author="alice",
            body=body,
            created_at=NOW,
        ),
        raw={"kind": "issue", "thread": {}, **(raw or {})},
        timestamp=NOW,
    )


@dataclass
class Running:
    url: str
    runtime: Runtime
    run_dir: Path
    pusher: Any = None

    @property
    def audit_path(self) -> Path:
        return self.run_dir / "audit.jsonl"


class ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Agent:
    """The model's side of the session: calls tools, sees what Claude Code would see."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.outputs: list[str] = []

    async def call(self, tool: str, **args: Any) -> tuple[bool, str]:
        result = await self.client.call_tool(tool, args)
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        self.outputs.append(text)
        return bool(result.is_error), text

    async def ok(self, tool: str, **args: Any) -> str:
        is_error, text = await self.call(tool, **args)
        assert not is_error, f"{tool} failed: {text}"
        return text

    async def refused(self, tool: str, code: str, **args: Any) -> str:
        is_error, text = await self.call(tool, **args)
        assert is_error, f"{tool} was not refused: {text}"
        assert text.startswith(f"{code}: "), f"expected {code}, got: {text}"
        return text


@asynccontextmanager
async def agent_session(url: str, bearer: str | None = None) -> Any:
    """``async with agent_session(url) as agent``: one MCP session over streamable HTTP,
    with ``Authorization: Bearer <bearer>`` on every request when given."""
    if bearer is None:
        async with Client(url) as client:
            yield Agent(client)
        return
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=60)
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        yield Agent(client)
