"""Whether an approval comment may act (pure): every case that is not a clear, current
approval by someone allowed is a refusal with its reason."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tusk.github.rights import Rights, Role, judge
from tusk.steps.apply.decide import Comment, Pending, decide
from tusk.text.commands import ApprovalCommand

NOW = datetime(2026, 1, 5, tzinfo=UTC)
D1, D2 = "sha256:" + "1" * 64, "sha256:" + "2" * 64
LATER = NOW + timedelta(days=2)


def rights(role: str | None, login: str = "alice") -> dict[str, Rights]:
    """The same rights over every set: ``role`` on the thread's repository (None: unread)."""
    why = "" if role else "GitHub shows collaborators' roles only to accounts with push access"
    verdict = judge(
        login,
        roles=[Role("alice/widgets", role, why)],
        requester=None,
        requester_may=False,
    )
    return {D1: verdict, D2: verdict}


def verdict(comment: Comment, pending: list[Pending], role: str | None = "write") -> str:
    got = decide(
        comment, actor="alice", allowed=["alice"], rights=rights(role), pending=pending, now=NOW
    )
    return f"{got.act} {got.digest}".strip() if got.act != "refuse" else f"refuse: {got.reason}"


def said(
    verb: str = "apply", digest: str | None = D1, *, author: str = "alice", edited: bool = False
) -> Comment:
    return Comment(author, ApprovalCommand(verb, digest), edited)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("comment", "pending", "role", "expected"),
    [
        (said(), [Pending(D1, expires_at=LATER)], "write", f"apply {D1}"),
        (said(digest=None), [Pending(D1, expires_at=LATER)], "admin", f"apply {D1}"),
        (said("discard", None), [Pending(D1)], "maintain", f"discard {D1}"),
        (said(author="mallory"), [Pending(D1)], "write", "refuse: the comment is by mallory"),
        (said(edited=True), [Pending(D1)], "write", "refuse: the comment was edited"),
        (Comment("alice", None, False), [Pending(D1)], "write", "refuse: the comment no longer"),
        (said(), [Pending(D1)], "read", "refuse: alice has no write access"),
        (said(), [Pending(D1)], None, "refuse: alice has no write access"),
        (said(digest=D2), [Pending(D1)], "write", f"refuse: no staged set with digest {D2}"),
        (said(digest=None), [Pending(D1), Pending(D2)], "write", "refuse: 2 staged sets wait"),
        (said(digest=None), [], "write", "refuse: no staged set waits"),
        (said(), [Pending(D1, "applied")], "write", f"refuse: the set {D1} was already applied"),
        (said(), [Pending(D1, "discarded")], "write", "refuse: the set"),
        (said(), [Pending(D1, expires_at=NOW)], "write", f"refuse: the set {D1} expired"),
        (said("discard", None), [Pending(D1, expires_at=NOW)], "write", f"discard {D1}"),
    ],
)
def test_decide(comment: Comment, pending: list[Pending], role: str | None, expected: str) -> None:
    assert verdict(comment, pending, role).startswith(expected)


def test_someone_not_allowed_may_not_approve_even_with_write_access() -> None:
    got = decide(
        said(author="bob"),
        actor="bob",
        allowed=["alice"],
        rights=rights("admin", "bob"),
        pending=[Pending(D1)],
        now=NOW,
    )
    assert got.act == "refuse" and "not one of the users allowed" in got.reason


def test_the_requester_may_discard_their_run_but_never_apply_it_without_write() -> None:
    own = {D1: judge("erin", roles=[], requester="erin")}
    erin = Comment("erin", ApprovalCommand("discard", None), False)
    got = decide(erin, actor="erin", allowed=["alice"], rights=own, pending=[Pending(D1)], now=NOW)
    assert (got.act, got.digest) == ("discard", D1)
    applying = Comment("erin", ApprovalCommand("apply", D1), False)
    got = decide(
        applying,
        actor="erin",
        allowed=["erin"],
        rights=rights(None, "erin"),
        pending=[Pending(D1)],
        now=NOW,
    )
    assert got.act == "refuse" and "erin has no write access GitHub confirms" in got.reason


def test_write_access_to_the_thread_alone_does_not_apply_a_set_that_writes_elsewhere() -> None:
    both = judge(
        "alice",
        roles=[Role("alice/widgets", "write"), Role("acme/tools", "read")],
        requester=None,
        requester_may=False,
    )
    got = decide(
        said(), actor="alice", allowed=["alice"], rights={D1: both}, pending=[Pending(D1)], now=NOW
    )
    assert got.act == "refuse" and "role read on acme/tools" in got.reason
    assert "Who can: someone GitHub shows with write access to alice/widgets, acme/tools" in (
        got.reason
    )
