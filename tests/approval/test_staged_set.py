"""The staged set: one digest over the canonical set, carried on the log issue byte for
byte, and refused (fail closed) whenever what is found is not what was approved."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tusk.approval.staged_set import (
    SetProblem,
    StagedOperation,
    StagedSet,
    normal_digest,
    read_set,
    set_comments,
    set_digest,
)
from tusk.contracts.models import PermissionConfig

BOT = "tusk-bot"
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def staged(body: str = "Fixed it.", count: int = 1) -> StagedSet:
    ops = tuple(
        StagedOperation(
            seq=i,
            tool="create_comment",
            args={"repo": "alice/widgets", "number": 1, "body": body},
            target="alice/widgets#1",
            summary="comment on alice/widgets#1",
            request={
                "method": "POST",
                "path": "/repos/alice/widgets/issues/1/comments",
                "json": {"body": body + f" ```{i}``` @alice <!-- x -->"},
            },
            nonce=f"n{i}",
        )
        for i in range(count)
    )
    return StagedSet(
        jobid="job-widgets-1",
        repo="alice/widgets",
        trigger_url="https://github.com/alice/widgets/issues/1#issuecomment-1",
        thread_number=1,
        control_repo="alice/tusk-control",
        log_issue_number=7,
        log_issue_url="https://github.com/alice/tusk-control/issues/7",
        created_at=NOW,
        expires_at=NOW + timedelta(days=7),
        nonce_salt="salt",
        reason="agent.approval in tusk.yml",
        permissions=PermissionConfig(),
        operations=ops,
    )


def as_comments(bodies: list[str], author: str = BOT) -> list[dict[str, Any]]:
    return [{"user": {"login": author}, "body": body} for body in bodies]


def test_the_set_comes_back_from_its_comments_with_the_same_digest() -> None:
    one = staged()
    digest = set_digest(one)
    assert digest.startswith("sha256:") and len(digest) == 71
    assert read_set(as_comments(set_comments(one)), digest=digest, bot=BOT) == one


def test_a_large_set_is_split_and_joined_back() -> None:
    big = staged(body="x" * 30_000, count=5)
    bodies = set_comments(big)
    assert len(bodies) > 2 and all(len(b) <= 65_536 for b in bodies)
    found = read_set(as_comments(list(reversed(bodies))), digest=set_digest(big), bot=BOT)
    assert found == big


def test_any_change_to_the_set_changes_its_digest() -> None:
    assert set_digest(staged("Fixed it.")) != set_digest(staged("Fixed it!"))


def test_an_edited_part_does_not_load() -> None:
    one = staged()
    bodies = set_comments(one)
    tampered = [bodies[0].replace("Fixed it.", "Deleted it.")]
    with pytest.raises(SetProblem, match="does not hash to the approved digest"):
        read_set(as_comments(tampered), digest=set_digest(one), bot=BOT)


def test_parts_written_by_someone_else_than_the_bot_do_not_count() -> None:
    one = staged()
    with pytest.raises(SetProblem, match="no staged set"):
        read_set(as_comments(set_comments(one), author="mallory"), digest=set_digest(one), bot=BOT)


def test_another_digest_finds_nothing() -> None:
    one = staged()
    other = set_digest(staged("other"))
    with pytest.raises(SetProblem, match="no staged set"):
        read_set(as_comments(set_comments(one)), digest=other, bot=BOT)


def test_a_missing_part_is_named() -> None:
    big = staged(body="x" * 30_000, count=5)
    bodies = set_comments(big)
    with pytest.raises(SetProblem, match="part\\(s\\) 2 of the staged set are missing"):
        read_set(as_comments(bodies[:1] + bodies[2:]), digest=set_digest(big), bot=BOT)


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("sha256:" + "a" * 64, "sha256:" + "a" * 64),
        ("A" * 64, "sha256:" + "a" * 64),
        ("  sha256:" + "0" * 64 + " ", "sha256:" + "0" * 64),
        ("sha256:" + "a" * 63, None),
        ("sha256:" + "g" * 64, None),
        ("", None),
    ],
)
def test_a_digest_as_people_type_it(typed: str, expected: str | None) -> None:
    assert normal_digest(typed) == expected


def test_expiry_is_part_of_the_set() -> None:
    one = staged()
    assert not one.expired(NOW + timedelta(days=6, hours=23))
    assert one.expired(NOW + timedelta(days=7))
