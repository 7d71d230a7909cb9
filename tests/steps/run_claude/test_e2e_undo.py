"""Undo after a real run, end to end: the real Claude Code pushes a branch through the MCP
server (which records that its push created it, and at which commit), opens a pull request
and comments; then another push moves the branch. Undo takes back the run's pull request
and comment and leaves the branch with the other commit, saying why."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import SecretStr

from tests.steps.run_claude.conftest import AGENT_TOKEN, E2E
from tests.steps.run_claude.test_e2e import CONFIRM, GH, history_conversation, tool
from tusk.audit.chain import read_records
from tusk.contracts.config import Settings
from tusk.contracts.models import UndoRequest
from tusk.github.gateway import Gateway
from tusk.steps.undo.main import execute
from tusk.text.markers import first_marker

pytestmark = pytest.mark.e2e

BRANCH = "tusk/fix-typo"
FIX = {
    "steps": [
        tool(
            "Bash",
            command="sed -i 's/smal/small/' README.md && git checkout -q -b tusk/fix-typo"
            " && git commit -qam 'Fix typo'",
        ),
        tool(f"{GH}push_branch", branch=BRANCH),
        {"expect": {"last_tool_result_is_error": False}},
        tool(
            f"{GH}create_pull_request",
            repo="alice/widgets",
            title="Fix typo in README",
            body="Fixes #1",
            head=f"tusk-bot:{BRANCH}",
            base="main",
        ),
        {"expect": {"last_tool_result_is_error": False}},
        tool(f"{GH}create_comment", repo="alice/widgets", number=1, body="Opened a PR."),
        {"text": "Done."},
    ],
    "conversations": [CONFIRM, history_conversation()],
}


def head_of(e2e: E2E) -> str:
    return str(e2e.github.state()["repos"]["tusk-bot/widgets"]["branches"][BRANCH])


def test_undo_after_another_push_to_the_runs_branch_keeps_that_commit(e2e: E2E) -> None:
    assert e2e.run(FIX).outcome.kind == "completed"
    pushes = [r for r in read_records(e2e.tmp / "run" / "audit.jsonl") if r.tool == "push_branch"]
    assert [(r.branch, r.head) for r in pushes] == [("created", head_of(e2e))]

    bot = Gateway(api_url=e2e.github.url, token=SecretStr(AGENT_TOKEN), token_name="agent")
    other = bot.put(  # another run of the bot moves the branch on
        "/repos/tusk-bot/widgets/contents/NOTES.md",
        json={"message": "Another run's note", "content": "bm90ZQ==", "branch": BRANCH},
    ).body["commit"]["sha"]
    asked = (
        e2e.github.gateway("alice")
        .post("/repos/alice/widgets/issues/1/comments", json={"body": "@tusk-bot undo"})
        .body
    )
    request = UndoRequest(
        jobid="undo-e2e",
        actor="alice",
        repo="alice/widgets",
        trust_level="owner",
        comment_id=str(asked["id"]),
        comment_url=asked["html_url"],
        comment_type="issue_comment",
        timestamp=datetime.now(UTC),
    )
    settings = Settings(bot="tusk-bot", control_repo="alice/tusk-control", allowed_users=("alice",))
    assert execute(request, gateway=bot, settings=settings) == 0

    assert head_of(e2e) == other  # the other commit is still on the branch
    pulls = bot.get("/repos/alice/widgets/pulls", params={"state": "all"})
    assert [p["state"] for p in pulls if p["head"]["ref"] == BRANCH] == ["closed"]
    thread: list[dict[str, Any]] = e2e.issue_comments("alice/widgets", 1)
    assert not any(c["body"].startswith("Opened a PR.") for c in thread)
    [reply] = [c["body"] for c in thread if first_marker(c["body"], "undo")]
    assert f"/tusk-bot/widgets/tree/{BRANCH}" in reply
    assert "someone pushed to it since" in reply
