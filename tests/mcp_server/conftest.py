"""Run the MCP server for real: uvicorn on 127.0.0.1 in a thread, the local GitHub behind it,
and the SDK's own client talking streamable HTTP to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from pydantic import SecretStr
from tusk.mcp_server import server as mcp_server
from tusk.mcp_server.runtime import Runtime

from tusk.config import Settings
from tusk.contracts import Blocklist, ContextDocument, PermissionConfig, Trigger

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


def context(permissions: PermissionConfig | None = None) -> ContextDocument:
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
            body=f"@{BOT} please fix it",
            created_at=NOW,
        ),
        raw={},
        timestamp=NOW,
    )


@dataclass
class Running:
    url: str
    runtime: Runtime
    run_dir: Path

    @property
    def audit_path(self) -> Path:
        return self.run_dir / "audit.jsonl"


class ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


serve_in_thread = mcp_server.start_in_thread


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def start_mcp(local_github: Any, tmp_path: Path) -> Iterator[Callable[..., Running]]:
    """Start a server for one run; keyword arguments tune the run's settings and policy."""
    stops: list[Callable[[], None]] = []
    local_github.load(scenario())

    def start(
        *,
        permissions: PermissionConfig | None = None,
        blocklist: Blocklist | None = None,
        workspace: Path | None = None,
        clock: Callable[[], float] | None = None,
        **setting_overrides: Any,
    ) -> Running:
        from tusk.state import StateStore

        cfg_settings = settings(**setting_overrides)
        ctx = context(permissions)
        run_dir = tmp_path / f"run{len(stops)}"
        read_gw = local_github.gateway(READ_TOKEN)
        write_gw = local_github.gateway(AGENT_TOKEN)
        writer = StateStore(write_gw, cfg_settings)
        found = (
            blocklist
            if blocklist is not None
            else StateStore(read_gw, cfg_settings).read_blocklist()
        )
        config = mcp_server.policy_config(cfg_settings, ctx, log_issue_url=LOG_URL, blocklist=found)
        runtime = mcp_server.build_runtime(
            settings=cfg_settings,
            config=config,
            read_gateway=read_gw,
            write_gateway=write_gw,
            run_dir=run_dir,
            secrets=(SecretStr(AGENT_TOKEN), SecretStr(READ_TOKEN)),
            workspace=workspace,
            append_entry=lambda kind, text: writer.append_entry(kind, text, jobid=ctx.jobid),  # type: ignore[arg-type]
            clock=clock,
        )
        pusher = mcp_server.build_pusher(
            runtime, read_token=SecretStr(READ_TOKEN), write_token=SecretStr(AGENT_TOKEN)
        )
        url, stop = serve_in_thread(mcp_server.build_server(runtime, pusher=pusher))
        stops.append(stop)
        return Running(url=url, runtime=runtime, run_dir=run_dir)

    yield start
    for stop in stops:
        stop()


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


def agent_session(url: str) -> Any:
    """``async with agent_session(url) as agent``: one MCP session over streamable HTTP."""
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def session() -> Any:
        async with Client(url) as client:
            yield Agent(client)

    return session()
