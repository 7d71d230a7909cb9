"""Writes go only where the run works, through the real server over streamable HTTP: the
tool result, the local GitHub's state (nothing written where refused) and the audit record."""

from __future__ import annotations

from typing import Any

import pytest

from tests.mcp.mcp_harness import BOT, agent_session
from tusk.audit import chain as audit
from tusk.contracts.models import PermissionConfig

pytestmark = pytest.mark.anyio


def issues(local_github: Any, repo: str) -> dict[str, Any]:
    return local_github.state()["repos"][repo]["issues"]


def last_record(running: Any) -> Any:
    return audit.read_records(running.audit_path)[-1]


async def test_an_issue_in_an_unrelated_public_repository_is_refused(
    start_mcp, local_github
) -> None:
    """Anyone may open an issue in a public repository: a run on a private one could publish
    what it read there."""
    running = start_mcp()
    before = issues(local_github, "bob/gadgets").keys()
    async with agent_session(running.url) as agent:
        text = await agent.refused(
            "create_issue", "OUT_OF_SCOPE", repo="bob/gadgets", title="notes", body="what I read"
        )
        await agent.refused(
            "create_comment", "OUT_OF_SCOPE", repo="bob/gadgets", number=1, body="hello"
        )
    assert "agent.write_repos" in text
    assert issues(local_github, "bob/gadgets").keys() == before
    assert issues(local_github, "bob/gadgets")["1"]["comments"] == []
    record = last_record(running)
    assert (record.decision, record.code) == ("refused", "OUT_OF_SCOPE")


async def test_another_runs_log_issue_takes_no_comment(start_mcp, local_github) -> None:
    running = start_mcp(agent={"write_repos": ["alice/tusk-control"]})  # not even configured
    log = local_github.gateway("alice").post(
        "/repos/alice/tusk-control/issues", json={"title": "[Agent Log] other run", "body": "x"}
    )
    number = log.body["number"]
    async with agent_session(running.url) as agent:
        await agent.refused(
            "create_comment", "OUT_OF_SCOPE", repo="alice/tusk-control", number=number, body="hi"
        )
        await agent.ok("memory", text="the memory tool still writes there")
    assert issues(local_github, "alice/tusk-control")[str(number)]["comments"] == []
    decisions = [(r.tool, r.decision, r.code) for r in audit.read_records(running.audit_path)]
    assert decisions[0] == ("create_comment", "refused", "OUT_OF_SCOPE")


async def test_a_repository_the_task_names_or_the_operator_lists_takes_writes(
    start_mcp, local_github
) -> None:
    running = start_mcp(body=f"@{BOT} please also file this in bob/gadgets#1")
    async with agent_session(running.url) as agent:
        await agent.ok("create_comment", repo="bob/gadgets", number=1, body="filed from the run")
    assert [c["author"] for c in issues(local_github, "bob/gadgets")["1"]["comments"]] == [BOT]
    assert last_record(running).decision == "allowed"


async def test_a_permission_marker_cannot_widen_the_write_scope(start_mcp, local_github) -> None:
    marker = PermissionConfig(repos=("alice/widgets", "bob/gadgets"), marker="repos")
    running = start_mcp(permissions=marker)
    async with agent_session(running.url) as agent:
        await agent.refused(
            "create_comment", "OUT_OF_SCOPE", repo="bob/gadgets", number=1, body="hello"
        )
        await agent.ok("create_comment", repo="alice/widgets", number=1, body="here is fine")
    assert issues(local_github, "bob/gadgets")["1"]["comments"] == []
