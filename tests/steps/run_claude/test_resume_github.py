"""run-claude reads the thread's earlier runs from the local GitHub and resumes only from a
record its audit log names and that hashes to it (C3)."""

from __future__ import annotations

from typing import Any

import pytest

from tusk.audit.on_issue import audit_comments
from tusk.contracts.config import Settings
from tusk.contracts.models import RunMetadata
from tusk.steps.run_claude import resume
from tusk.steps.run_claude.proxy import conversation
from tusk.steps.run_claude.proxy.conversation import ConversationRecord, Turn
from tusk.text.markers import render_marker

BOT = "tusk-bot"
CONTROL = "alice/control"
SETTINGS = Settings(bot=BOT, control_repo=CONTROL, allowed_users=("alice",))
RECORD = ConversationRecord(
    "job-1", (Turn("user", ("> @tusk-bot fix it",)), Turn("assistant", ("Fixed it.",)))
)


@pytest.fixture
def gh(local_github: Any) -> Any:
    local_github.load(
        {
            "users": [{"login": "alice"}, {"login": BOT}],
            "tokens": {"agent": {"user": BOT, "scopes": ["repo"]}},
            "repos": [
                {"name": "alice/widgets", "collaborators": {BOT: "write"}},
                {"name": CONTROL, "collaborators": {BOT: "write"}, "labels": ["workflow"]},
            ],
        }
    )
    return local_github


def log_issue(gh: Any, jobid: str) -> int:
    created = (
        gh.gateway("agent")
        .post(
            f"/repos/{CONTROL}/issues",
            json={
                "title": "[Agent Log] alice/widgets #7 — 2026-01-01 00:00",
                "body": render_marker("job", {"jobid": jobid, "repo": "alice/widgets"})
                + "\n# Task",
                "labels": ["workflow"],
            },
        )
        .body
    )
    return int(created["number"])


def comment(gh: Any, number: int, body: str) -> None:
    gh.gateway("agent").post(f"/repos/{CONTROL}/issues/{number}/comments", json={"body": body})


def write_up(gh: Any, number: int, *, record: bool = True, digest: str | None = None) -> None:
    """What a finished run leaves: its conversation record, and its audit naming it."""
    if record:
        comment(gh, number, conversation.comment_body(RECORD))
    named = RECORD.digest() if digest is None else digest
    [audit] = audit_comments(
        "", jobid="job-1", run="n", records=0, head="0" * 64, log_url="x", conversation=named
    )
    comment(gh, number, audit)


def run_on_thread(number: int) -> RunMetadata:
    return RunMetadata(
        jobid="job-2",
        repo="alice/widgets",
        trigger_url="https://github.com/alice/widgets/issues/7#issuecomment-2",
        trigger_type="issue_comment",
        thread_number=7,
        log_issue_number=number,
        log_issue_url=f"https://github.com/{CONTROL}/issues/{number}",
        control_repo=CONTROL,
        task_path="task.md",
        context_path="context.md",
        context_file="context.json",
    )


def test_a_verified_record_is_resumed(gh: Any) -> None:
    first = log_issue(gh, "job-1")
    write_up(gh, first)
    found = resume.load(gh.gateway("agent"), SETTINGS, run_on_thread(log_issue(gh, "job-2")))
    assert [t.role for t in found.turns] == ["user", "assistant"]
    assert "Fixed it." in found.turns[1].text and f"#{first}" in found.note
    assert "#" not in found.thread_note


def test_the_first_run_on_a_thread_says_nothing(gh: Any) -> None:
    found = resume.load(gh.gateway("agent"), SETTINGS, run_on_thread(log_issue(gh, "job-2")))
    assert found == resume.Resume()


def test_earlier_runs_without_a_record_mean_a_fresh_start_said_so(gh: Any) -> None:
    log_issue(gh, "job-1")  # it never started its agent: no record, no audit
    found = resume.load(gh.gateway("agent"), SETTINGS, run_on_thread(log_issue(gh, "job-2")))
    assert found.turns == ()
    assert found.note.startswith("fresh start: the earlier runs on this thread kept no")


def test_a_record_named_but_gone_or_not_the_digest_means_a_fresh_start(gh: Any) -> None:
    gone = log_issue(gh, "job-1")
    write_up(gh, gone, record=False)  # the audit names a record someone deleted
    found = resume.load(gh.gateway("agent"), SETTINGS, run_on_thread(log_issue(gh, "job-2")))
    assert found.turns == () and "its record is missing from the log issue" in found.note


def test_resuming_off_reads_nothing(gh: Any) -> None:
    off = SETTINGS.model_copy(
        update={"limits": SETTINGS.limits.model_copy(update={"resume_chars": 0})}
    )
    first = log_issue(gh, "job-1")
    write_up(gh, first)
    before = len(gh.journal())
    assert resume.load(gh.gateway("agent"), off, run_on_thread(log_issue(gh, "job-2"))).turns == ()
    assert len([e for e in gh.journal()[before:] if e["method"] == "GET"]) == 0


def test_an_applied_sets_later_audit_parts_do_not_hide_the_records_digest(gh: Any) -> None:
    first = log_issue(gh, "job-1")
    write_up(gh, first)
    # Approval mode: the apply continues the run's chain in audit parts of its own.
    [applied] = audit_comments(
        "", jobid="job-1", run="apply", records=0, head="1" * 64, log_url="x"
    )
    comment(gh, first, applied)
    found = resume.load(gh.gateway("agent"), SETTINGS, run_on_thread(log_issue(gh, "job-2")))
    assert [t.role for t in found.turns] == ["user", "assistant"], found.note
