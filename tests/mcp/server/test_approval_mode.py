"""Approval mode in the MCP server: every GitHub write kept for a person's approval, none
made; the history line (the control repository's own state) is still written."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.mcp_harness import BOT, LOG_URL, agent_session
from tests.mcp.server.test_server import comments, fork_branches, make_workspace, records
from tusk.approval.staging import read_operations
from tusk.contracts.models import PermissionConfig

pytestmark = pytest.mark.anyio


def writes_sent(local_github: Any, since: int) -> list[dict[str, Any]]:
    """Requests that change something (a git fetch is a POST that only reads)."""
    return [
        e
        for e in local_github.journal()[since:]
        if e.get("method") not in ("GET", "HEAD") and not e["path"].endswith("/git-upload-pack")
    ]


async def test_approval_required_keeps_every_write_and_makes_none(
    start_mcp, local_github, tmp_path: Path
) -> None:
    work = make_workspace(local_github, tmp_path)
    running = start_mcp(workspace=work, agent={"approval": "required"})
    before = comments(local_github)
    since = len(local_github.journal())
    async with agent_session(running.url) as agent:
        said = await agent.ok("create_comment", repo="alice/widgets", number=1, body="Fixed it.")
        await agent.ok("create_issue", repo="alice/widgets", title="Follow-up", body="later")
        pushed = await agent.ok("push_branch", branch="tusk/fix")
        await agent.ok(
            "create_pull_request",
            repo="alice/widgets",
            title="Fix typo",
            body="Fixes #1",
            head=f"{BOT}:tusk/fix",
            base="main",
        )
        # The policy still counts what was kept: a second PR is over the limit.
        await agent.refused(
            "create_pull_request",
            "LIMIT_EXCEEDED",
            repo="alice/widgets",
            title="Again",
            body="b",
            head="tusk/fix",
            base="main",
        )
    assert said.startswith("STAGED FOR APPROVAL") and pushed.startswith("STAGED FOR APPROVAL")
    assert comments(local_github) == before
    assert "tusk/fix" not in fork_branches(local_github)
    assert writes_sent(local_github, since) == []  # not one write reached GitHub
    kept = read_operations(running.run_dir)
    assert [op.tool for op in kept] == [
        "create_comment",
        "create_issue",
        "push_branch",
        "create_pull_request",
    ]
    comment = kept[0]
    assert comment.request["path"] == "/repos/alice/widgets/issues/1/comments"
    assert LOG_URL in comment.request["json"]["body"] and comment.nonce
    assert comment.nonce in comment.request["json"]["body"]  # the footer carries it
    push = kept[2]
    assert push.bundle is not None and push.diff_stat and "README.md" in push.diff_stat
    bundle = tmp_path / "kept.bundle"
    bundle.write_bytes(base64.b64decode(push.bundle))
    heads = subprocess.run(
        ["git", "bundle", "list-heads", str(bundle)], capture_output=True, text=True, check=True
    ).stdout
    sha = subprocess.run(
        ["git", "rev-parse", "tusk/fix"], cwd=work, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert heads.split() == [sha, "refs/heads/tusk/fix"]
    assert [r.decision for r in records(running)][:4] == ["staged"] * 4


async def test_a_marker_asks_for_approval_and_history_is_still_written(
    start_mcp, local_github
) -> None:
    running = start_mcp(permissions=PermissionConfig(approve=True))
    assert running.runtime.config.approval
    async with agent_session(running.url) as agent:
        await agent.ok("create_comment", repo="alice/widgets", number=1, body="Done.")
        line = await agent.ok("history", text="Answered alice/widgets#1.")
    assert "STAGED" not in line  # the control repository's own record is made
    assert [op.tool for op in read_operations(running.run_dir)] == ["create_comment"]
    assert (running.run_dir / "approval" / "run.json").is_file()


async def test_without_approval_writes_are_made_and_nothing_is_kept(
    start_mcp, local_github
) -> None:
    running = start_mcp(agent={"approval": ["bob/gadgets"]})  # another repository only
    assert not running.runtime.config.approval
    async with agent_session(running.url) as agent:
        said = await agent.ok("create_comment", repo="alice/widgets", number=1, body="Done.")
    assert "commented on alice/widgets#1" in said
    assert read_operations(running.run_dir) == []
