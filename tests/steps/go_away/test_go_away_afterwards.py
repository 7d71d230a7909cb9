"""G4, end to end: after a go-away the poller dispatches nothing for the blocked
repositories and users, and the MCP server's policy refuses every write to them.

The go-away request comes from the poller's own dispatch, so the whole loop runs:
mention → poller → tusk-go-away → go-away → blocklist issue → poller and MCP."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from go_away_world import BOT, scenario, settings
from mcp import Client
from pydantic import SecretStr

from tusk.contracts.models import (
    GO_AWAY_EVENT_TYPE,
    ContextDocument,
    GoAwayRequest,
    PermissionConfig,
    Trigger,
)
from tusk.contracts.raw_context import RawContext, Thread
from tusk.issues.state import StateStore
from tusk.mcp.gate.policy import Refused, RunState, check_write
from tusk.mcp.server import transport
from tusk.mcp.server import wiring as mcp_server
from tusk.mcp.server.wiring import policy_config
from tusk.poller.core import PollState
from tusk.poller.cycle import Poller
from tusk.steps.go_away import main

NOW = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)


def poller(local_github: Any) -> Poller:
    store = StateStore(local_github.gateway("bot-read"), settings())
    return Poller(
        settings=settings(),
        bot=local_github.gateway("bot-read"),
        dispatcher=local_github.gateway("dispatch"),
        read_blocklist=store.read_blocklist,
        clock=lambda: NOW,
    )


def dispatched(local_github: Any, event_type: str) -> list[dict[str, Any]]:
    return [d for d in local_github.dispatches() if d["event_type"] == event_type]


def context(repo: str, number: int) -> ContextDocument:
    return ContextDocument(
        jobid="alice-widgets-ic-later",
        repo=repo,
        actor="alice",
        trust_level="owner",
        permission_config=PermissionConfig(),
        trigger=Trigger(
            type="issue_comment",
            id="1",
            url=f"https://github.com/{repo}/issues/{number}#issuecomment-1",
            number=number,
            author="alice",
            body=f"@{BOT} one more thing",
            created_at=NOW,
        ),
        raw=RawContext(kind="issue", thread=Thread()),
        timestamp=NOW,
    )


@pytest.fixture
def after_go_away(local_github: Any) -> Any:
    """bob's "@bot go away" in alice/widgets, carried through the poller's dispatch."""
    local_github.load(scenario())
    _, report = poller(local_github).cycle(PollState())
    assert report.errors == []
    (go_away,) = dispatched(local_github, GO_AWAY_EVENT_TYPE)
    request = GoAwayRequest.model_validate(go_away["client_payload"])
    assert (request.actor, request.repo) == ("bob", "alice/widgets")
    code = main.execute(
        request,
        gateway=local_github.gateway("agent"),
        settings=settings(),
        reaction="+1",
        sleep=lambda seconds: None,
    )
    assert code == 0
    return local_github


def test_poller_dispatches_nothing_for_blocked_repositories_and_users(after_go_away: Any) -> None:
    github = after_go_away
    shards_before = len(dispatched(github, "tusk-shard"))
    alice = github.gateway("alice")
    # An allowed user asks again in the repository bob sent the bot away from, and in bob's own.
    alice.post("/repos/alice/widgets/issues/1/comments", json={"body": f"@{BOT} one more thing"})
    alice.post("/repos/bob/tools/issues/1/comments", json={"body": f"@{BOT} and here?"})

    _, report = poller(github).cycle(PollState())

    assert report.errors == []
    assert len(dispatched(github, "tusk-shard")) == shards_before
    assert report.dispatched == []
    assert any("alice/widgets is on the blocklist" in line for line in report.skipped)
    assert any("bob/tools is on the blocklist" in line for line in report.skipped)


def test_poller_still_dispatches_for_repositories_nobody_blocked(after_go_away: Any) -> None:
    github = after_go_away
    github.gateway("alice").post(
        "/repos/alice/other/issues/1/comments", json={"body": f"@{BOT} please look"}
    )
    _, report = poller(github).cycle(PollState())
    assert len(report.dispatched) == 1


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("create_comment", {"repo": "alice/widgets", "number": 1, "body": "Back again"}),
        ("create_issue", {"repo": "alice/widgets", "title": "New", "body": "x"}),
        ("create_comment", {"repo": "bob/tools", "number": 1, "body": "Hello"}),
        (
            "create_pull_request",
            {"repo": "bob/tools", "title": "t", "head": "tusk/x", "base": "main"},
        ),
    ],
)
def test_mcp_server_refuses_every_write_to_them(
    after_go_away: Any, tool: str, args: dict[str, Any]
) -> None:
    # The MCP server reads the blocklist once at start, with the read token (M7).
    blocklist = StateStore(after_go_away.gateway("bot-read"), settings()).read_blocklist()
    config = policy_config(
        settings(), context("alice/widgets", 1), log_issue_url="https://x/1", blocklist=blocklist
    )
    with pytest.raises(Refused) as refused:
        check_write(tool, args, config, RunState())
    assert refused.value.code == "BLOCKED_TARGET"


def test_mcp_server_still_allows_writes_elsewhere(after_go_away: Any) -> None:
    blocklist = StateStore(after_go_away.gateway("bot-read"), settings()).read_blocklist()
    config = policy_config(
        settings(), context("alice/other", 1), log_issue_url="https://x/1", blocklist=blocklist
    )
    check_write(
        "create_comment", {"repo": "alice/other", "number": 1, "body": "Hi"}, config, RunState()
    )


@pytest.mark.anyio
async def test_running_mcp_server_refuses_a_comment_there_over_http(
    after_go_away: Any, tmp_path: Any
) -> None:
    github = after_go_away
    # Built as `tusk mcp serve` builds it: the blocklist read once at start.
    blocklist = StateStore(github.gateway("bot-read"), settings()).read_blocklist()
    config = policy_config(
        settings(), context("alice/widgets", 1), log_issue_url="https://x/1", blocklist=blocklist
    )
    runtime = mcp_server.build_runtime(
        settings=settings(),
        config=config,
        scope=mcp_server.read_scope(settings(), context("alice/widgets", 1)),
        read_gateway=github.gateway("bot-read"),
        write_gateway=github.gateway("agent"),
        run_dir=tmp_path / "run",
        secrets=(SecretStr("agent"), SecretStr("bot-read")),
    )
    url, stop = transport.start_in_thread(mcp_server.build_server(runtime))
    before = github.state()["repos"]["alice/widgets"]["issues"]["1"]["comments"]
    try:
        async with Client(url) as client:
            result = await client.call_tool(
                "create_comment", {"repo": "alice/widgets", "number": 1, "body": "Back again"}
            )
    finally:
        stop()
    assert result.is_error
    assert "BLOCKED_TARGET" in str(result.content)
    assert github.state()["repos"]["alice/widgets"]["issues"]["1"]["comments"] == before
