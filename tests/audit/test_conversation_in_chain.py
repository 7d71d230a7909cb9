"""The conversation record's digest is a line of the run's audit chain: the head the log
issue pins (and an attestation signs) covers it, and ``tusk audit verify`` checks the
record and the markers against it. A log issue written up before keeps verifying."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.audit.test_audit_issue import audit_file
from tusk.audit.chain import conversation_digest, head_hash, read_records, with_conversation
from tusk.audit.on_issue import audit_comments, held_record, verify_comments
from tusk.steps.run_claude.proxy.conversation import ConversationRecord, Turn, comment_body
from tusk.steps.run_claude.writeup.publish import part_marker

JOB = "alice-widgets-ic-1"
RUN = "1001-1"
AT = datetime(2026, 1, 1, tzinfo=UTC)
RECORD = ConversationRecord(JOB, (Turn("user", ("fix it",)), Turn("assistant", ("Fixed.",))))
FORGED = ConversationRecord(JOB, (Turn("user", ("fix it",)), Turn("assistant", ("PLANTED",))))


def issue_comments(
    tmp_path: Path, *, record: ConversationRecord = RECORD, marker: str | None = None
) -> tuple[list[dict[str, Any]], list[Any]]:
    """A written-up run: three calls, the record's line sealed after them, the record's
    comment and the audit part (whose marker names ``marker``, the digest by default)."""
    text, records = audit_file(tmp_path, 3)
    text, records = with_conversation(
        text, records, digest=RECORD.digest(), target="alice/widgets#1", time=AT
    )
    [audit] = audit_comments(
        text,
        jobid=JOB,
        run=RUN,
        records=len(records),
        head=head_hash(records),
        log_url="https://github.com/alice/control/issues/7",
        conversation=marker or RECORD.digest(),
    )
    kept = f"{part_marker(JOB, 'conversation', RUN)}\n{comment_body(record)}"
    return [{"body": kept}, {"body": audit}], records


def test_the_record_s_line_extends_the_chain_and_verifies(tmp_path: Path) -> None:
    comments, records = issue_comments(tmp_path)
    assert records[-1].kind == "record" and records[-1].seq == 3
    assert conversation_digest(records) == RECORD.digest()
    _, verdict = verify_comments(comments)
    assert verdict.ok, verdict.message
    assert verdict.records == 4 and verdict.head == records[-1].hash
    held = held_record(comments, JOB)
    assert not isinstance(held, str) and (held.digest, held.run) == (RECORD.digest(), RUN)
    # The same line sealed again (a write-up done twice) is the same line.
    again = with_conversation("", [], digest=RECORD.digest(), target="alice/widgets#1", time=AT)
    assert again == with_conversation(
        "", [], digest=RECORD.digest(), target="alice/widgets#1", time=AT
    )


def test_the_sealed_line_reads_back_as_a_chain(tmp_path: Path) -> None:
    text, records = with_conversation(
        "", [], digest=RECORD.digest(), target="alice/widgets#1", time=AT
    )
    path = tmp_path / "audit.jsonl"
    path.write_text(text, encoding="utf-8")
    assert read_records(path) == records


def test_an_edited_digest_marker_fails_verification(tmp_path: Path) -> None:
    comments, _ = issue_comments(tmp_path, marker=FORGED.digest())
    _, verdict = verify_comments(comments)
    assert not verdict.ok and "a marker was edited" in verdict.message


def test_an_edited_record_fails_verification_even_with_its_marker_changed(tmp_path: Path) -> None:
    """The record and the markers rewritten to agree: the chain still holds the old digest."""
    comments, _ = issue_comments(tmp_path, record=FORGED)
    _, verdict = verify_comments(comments)
    assert not verdict.ok
    assert "conversation record on this issue is not the one the audit chain names" in (
        verdict.message
    )
    both, _ = issue_comments(tmp_path, record=FORGED, marker=FORGED.digest())
    assert not verify_comments(both)[1].ok


def test_a_removed_record_fails_verification(tmp_path: Path) -> None:
    comments, _ = issue_comments(tmp_path)
    _, verdict = verify_comments(comments[1:])
    assert not verdict.ok and "is not on this issue" in verdict.message


def test_a_log_issue_written_up_before_the_chain_held_the_digest_still_verifies(
    tmp_path: Path,
) -> None:
    """Old write-ups named the digest in the markers only: readable, and their record is
    simply not vouched for (a later run starts fresh; ``held_record`` says so)."""
    text, records = audit_file(tmp_path, 3)
    [audit] = audit_comments(
        text,
        jobid=JOB,
        run=RUN,
        records=len(records),
        head=head_hash(records),
        log_url="x",
        conversation=RECORD.digest(),
    )
    kept = f"{part_marker(JOB, 'conversation', RUN)}\n{comment_body(RECORD)}"
    comments = [{"body": kept}, {"body": audit}]
    assert verify_comments(comments)[1].ok
    held = held_record(comments, JOB)
    assert not isinstance(held, str) and held.digest is None
