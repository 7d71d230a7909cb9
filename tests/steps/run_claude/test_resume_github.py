"""run-claude reads the thread's earlier runs from the local GitHub and resumes only from a
record its audit log names and that hashes to it (C3)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tusk.audit.chain import head_hash, with_conversation
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


def sealed(digest: str) -> tuple[str, list[Any]]:
    """A run's audit chain with its conversation record sealed onto it (no calls)."""
    return with_conversation(
        "", [], digest=digest, target="alice/widgets#7", time=datetime(2026, 1, 1, tzinfo=UTC)
    )


def write_up(
    gh: Any,
    number: int,
    *,
    record: bool = True,
    digest: str | None = None,
    marker: str | None = None,
    in_chain: bool = True,
) -> None:
    """What a finished run leaves: its conversation record, and its audit chain holding
    the record's digest (``in_chain``) and naming it in its markers (``marker``)."""
    if record:
        comment(gh, number, conversation.comment_body(RECORD))
    held = RECORD.digest() if digest is None else digest
    text, records = sealed(held) if in_chain else ("", [])
    [audit] = audit_comments(
        text,
        jobid="job-1",
        run="n",
        records=len(records),
        head=head_hash(records),
        log_url="x",
        conversation=held if marker is None else marker,
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
    text, records = sealed(RECORD.digest())
    [applied] = audit_comments(
        text, jobid="job-1", run="apply", records=1, head=head_hash(records), log_url="x"
    )
    comment(gh, first, applied)
    found = resume.load(gh.gateway("agent"), SETTINGS, run_on_thread(log_issue(gh, "job-2")))
    assert [t.role for t in found.turns] == ["user", "assistant"], found.note


def test_a_digest_only_in_the_markers_is_not_trusted(gh: Any) -> None:
    """A log issue written up before the chain held the digest (or one whose markers were
    given a digest the chain never held): a fresh start, said on the log issue and thread."""
    first = log_issue(gh, "job-1")
    write_up(gh, first, in_chain=False)
    found = resume.load(gh.gateway("agent"), SETTINGS, run_on_thread(log_issue(gh, "job-2")))
    assert found.turns == ()
    assert "its audit chain holds no digest for its record" in found.note
    assert found.thread_note.startswith("fresh start: the record of an earlier run")


def test_an_edited_digest_marker_means_a_fresh_start(gh: Any) -> None:
    """The markers name a forged record's digest: the chain still holds the real one, and
    the disagreement alone refuses the record, whichever of the two the comment matches."""
    forged = ConversationRecord("job-1", (Turn("user", ("x",)), Turn("assistant", ("PLANTED",))))
    first = log_issue(gh, "job-1")
    write_up(gh, first, marker=forged.digest())
    found = resume.load(gh.gateway("agent"), SETTINGS, run_on_thread(log_issue(gh, "job-2")))
    assert found.turns == () and "a marker was edited" in found.note


def test_a_record_not_the_chain_s_digest_means_a_fresh_start(gh: Any) -> None:
    """Record and markers agree with each other, but the chain (whose head the issue pins
    and an attestation signs) holds another digest."""
    first = log_issue(gh, "job-1")
    forged = ConversationRecord("job-1", (Turn("user", ("x",)), Turn("assistant", ("PLANTED",))))
    comment(gh, first, conversation.comment_body(forged))
    text, records = sealed(RECORD.digest())
    [audit] = audit_comments(
        text,
        jobid="job-1",
        run="n",
        records=1,
        head=head_hash(records),
        log_url="x",
        conversation=forged.digest(),
    )
    comment(gh, first, audit)
    found = resume.load(gh.gateway("agent"), SETTINGS, run_on_thread(log_issue(gh, "job-2")))
    assert found.turns == () and "PLANTED" not in repr(found)
