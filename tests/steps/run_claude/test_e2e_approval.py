"""End to end in approval mode: the real Claude Code works as usual, the MCP server keeps
every GitHub write, and the write-up posts the staged set on the log issue, where it
loads back by its digest. Nothing reaches the trigger's repository."""

from __future__ import annotations

import pytest

from tests.steps.run_claude.conftest import AGENT_TOKEN, E2E
from tests.steps.run_claude.test_e2e import CONFIRM, GH, history_conversation, tool
from tusk.approval.staged_set import read_set, set_digest
from tusk.text.markers import first_marker

pytestmark = pytest.mark.e2e

FIX_AND_REPORT = {
    "steps": [
        tool(
            "Bash",
            command="sed -i 's/smal/small/' README.md && git checkout -q -b tusk/fix-typo"
            " && git commit -qam 'Fix typo'",
        ),
        tool(f"{GH}push_branch", branch="tusk/fix-typo"),
        {"expect": {"last_tool_result_contains": "STAGED FOR APPROVAL"}},
        tool(
            f"{GH}create_pull_request",
            repo="alice/widgets",
            title="Fix typo in README",
            body="Fixes #1",
            head="tusk-bot:tusk/fix-typo",
            base="main",
        ),
        tool(
            f"{GH}create_comment",
            repo="alice/widgets",
            number=1,
            body="Opened a PR, @alice. See #1.",
        ),
        {"text": "Done."},
    ],
    "conversations": [CONFIRM, history_conversation()],
}


def test_approval_required_stages_everything_and_posts_the_set_on_the_log_issue(
    e2e: E2E,
) -> None:
    e2e.config = {"agent": {"linux_user": e2e.agent_user, "approval": "required"}}
    before = e2e.issue_comments("alice/widgets", 1)
    result = e2e.run(FIX_AND_REPORT)
    assert result.outcome.kind == "completed", result.outcome
    # Nothing written where the run was asked but the preview: no fork, no pull request.
    after = e2e.issue_comments("alice/widgets", 1)
    assert after[: len(before)] == before and len(after) == len(before) + 1
    preview = after[-1]
    repos = e2e.github.state()["repos"]
    assert "tusk-bot/widgets" not in repos
    assert not e2e.github.gateway(AGENT_TOKEN).get("/repos/alice/widgets/pulls")
    # The history line, the control repository's own record, is written.
    assert e2e.state_entries("history") == ["Fixed the README typo for alice/widgets#1."]
    # The log issue holds the set; it loads back by the digest its marker names.
    raw = list(
        e2e.github.gateway(AGENT_TOKEN).paginate("/repos/alice/tusk-control/issues/1/comments")
    )
    markers = [m for c in raw if (m := first_marker(c["body"].split("\n", 1)[-1], "approval"))]
    assert markers, [c["body"][:80] for c in raw]
    digest = markers[0]["digest"]
    staged = read_set(raw, digest=digest, bot="tusk-bot")
    assert set_digest(staged) == digest
    assert [op.tool for op in staged.operations] == [
        "push_branch",
        "create_pull_request",
        "create_comment",
    ]
    assert staged.reason == "agent.approval in tusk.yml"
    assert staged.operations[0].bundle and "README.md" in (staged.operations[0].diff_stat or "")
    assert (staged.expires_at - staged.created_at).days == 7
    # The preview: one bot comment on the thread, each write readable, nobody notified.
    assert preview["user"]["login"] == "tusk-bot"
    text = preview["body"]
    assert first_marker(text, "preview") == {
        "jobid": staged.jobid,
        "digest": digest,
        "control_repo": "alice/tusk-control",
        "log": 1,
    }
    assert "3 write(s) staged, none made" in text and digest in text
    assert f"`@tusk-bot apply {digest}`" in text and "`@tusk-bot discard`" in text
    assert "Fix typo in README" in text and "README.md" in text  # title and diff stat
    assert "> Opened a PR, `@alice`. See `#1`." in text  # quoted inert
    assert staged.log_issue_url in text
    # The staged writes' own nonces are not on the thread: the apply job's look-up
    # for a create can never mistake the preview for it.
    assert first_marker(text, "backlink") is None
    for op in staged.operations:
        assert not op.nonce or op.nonce not in text
    # The status says the writes wait for approval: never "Done" while nothing was made.
    status = e2e.status_comment("alice/widgets", 1)
    assert status is not None and "Waiting for approval" in status and "Done" not in status


def test_a_second_write_up_adds_no_second_set_or_preview(e2e: E2E) -> None:
    from pydantic import SecretStr

    from tusk.github.gateway import Gateway
    from tusk.steps.run_claude.writeup import publish as writeup

    e2e.config = {"agent": {"linux_user": e2e.agent_user, "approval": "required"}}
    result = e2e.run(FIX_AND_REPORT)
    assert result.outcome.kind == "completed", result.outcome
    log = "/repos/alice/tusk-control/issues/1/comments"
    gateway = e2e.github.gateway(AGENT_TOKEN)
    first = [c["id"] for c in gateway.paginate(log)]
    thread = [c["id"] for c in e2e.issue_comments("alice/widgets", 1)]
    again = Gateway(api_url=e2e.github.url, token=SecretStr(AGENT_TOKEN), token_name="agent")
    _, report = writeup.write_up(e2e.tmp / "run", again)
    assert report.complete, report.lines()
    assert [c["id"] for c in gateway.paginate(log)] == first
    assert [c["id"] for c in e2e.issue_comments("alice/widgets", 1)] == thread
