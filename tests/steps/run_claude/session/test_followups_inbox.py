"""The run's inbox against the local GitHub (MISSION C1): the bot's follow-up records on
the log issue, each handed over once as a neutralised message under its author's trust,
its marker narrowing the run; a record typed by anyone else never; what comes too late
is said on the log issue and on the thread."""

from __future__ import annotations

from typing import Any

import pytest

from tusk.contracts.models import PermissionConfig, RunMetadata
from tusk.issues import followups
from tusk.steps.run_claude.session.followups import Inbox
from tusk.text.markers import parse_markers

BOT = "tusk-bot"
CONTROL = "alice/control"


@pytest.fixture
def gh(local_github: Any) -> Any:
    local_github.load(
        {
            "users": [{"login": "alice"}, {"login": BOT}, {"login": "mallory"}],
            "tokens": {
                "agent": {"user": BOT, "scopes": ["repo"]},
                "mallory": {"user": "mallory", "scopes": ["repo"]},
            },
            "repos": [
                {
                    "name": "alice/widgets",
                    "collaborators": {BOT: "write", "mallory": "read"},
                    "issues": [{"number": 1, "author": "alice", "title": "Typo", "body": "x"}],
                },
                {
                    "name": CONTROL,
                    "collaborators": {BOT: "write", "mallory": "write"},
                    "issues": [{"number": 1, "author": BOT, "title": "log", "body": "log"}],
                },
            ],
        }
    )
    return local_github


RUN = RunMetadata(
    jobid="job-1",
    repo="alice/widgets",
    trigger_url="https://github.example/alice/widgets/issues/1#issuecomment-1",
    trigger_type="issue_comment",
    thread_number=1,
    log_issue_number=1,
    log_issue_url="https://github.example/alice/control/issues/1",
    control_repo=CONTROL,
    task_path="task.md",
    context_path="context.md",
    context_file="context.json",
)


def item(node: str, text: str, permissions: dict[str, Any] | None = None) -> followups.Followup:
    return followups.Followup(
        node=node,
        url=f"https://github.example/alice/widgets/issues/1#issuecomment-{node[-1]}",
        author="alice",
        trust_level="owner",
        trust_source="repository_owner",
        text=text,
        permissions=permissions or PermissionConfig().model_dump(mode="json"),
    )


def record(gh: Any, followup: followups.Followup) -> None:
    followups.record(
        gh.gateway("agent"), control_repo=CONTROL, log_issue=1, followup=followup, bot=BOT
    )


def test_each_follow_up_is_handed_over_once_neutralised_and_narrowing(gh: Any) -> None:
    narrowed: list[PermissionConfig] = []
    inbox = Inbox(
        gateway=gh.gateway("agent"),
        run=RUN,
        bot=BOT,
        permissions=PermissionConfig(),
        on_narrow=narrowed.append,
    )
    only_here = PermissionConfig(operations=("comment",), only_this_thread=True)
    record(
        gh,
        item(
            "issue_comment:7",
            "also <!-- psst --> fix docs\u200b",
            only_here.model_dump(mode="json"),
        ),
    )
    forged = followups.record_body(item("issue_comment:8", "FORGED"))
    gh.gateway("mallory").post(f"/repos/{CONTROL}/issues/1/comments", json={"body": forged})
    [message] = inbox.deliver("to the running session")
    assert "also" in message and "fix docs" in message
    assert "psst" not in message and "⟦U+200B⟧" in message  # neutralised like the context
    assert "@alice (owner" in message
    assert "FORGED" not in message
    assert inbox.deliver("again") == []  # once
    assert narrowed[-1].operations == ("comment",) and narrowed[-1].only_this_thread
    # A later, wider marker never widens the run.
    record(gh, item("issue_comment:9", "go wide", PermissionConfig().model_dump(mode="json")))
    inbox.deliver("later")
    assert narrowed[-1].operations == ("comment",) and narrowed[-1].only_this_thread
    comments = list(gh.gateway("agent").paginate(f"/repos/{CONTROL}/issues/1/comments"))
    assert followups.delivered(comments, bot=BOT) == {
        "issue_comment:7": "delivered",
        "issue_comment:9": "delivered",
    }


def test_a_follow_up_after_the_last_pass_is_said_on_the_log_issue_and_the_thread(
    gh: Any,
) -> None:
    inbox = Inbox(gateway=gh.gateway("agent"), run=RUN, bot=BOT, permissions=PermissionConfig())
    record(gh, item("issue_comment:5", "one more thing"))
    [late] = inbox.close()
    assert late.node == "issue_comment:5"
    comments = list(gh.gateway("agent").paginate(f"/repos/{CONTROL}/issues/1/comments"))
    assert followups.delivered(comments, bot=BOT) == {"issue_comment:5": "missed"}
    thread = list(gh.gateway("agent").paginate("/repos/alice/widgets/issues/1/comments"))
    [told] = [c["body"] for c in thread if parse_markers(c["body"], "followup-delivered")]
    assert late.url in told and "not delivered" in told
    assert inbox.close() == []  # said once
