"""Pure decisions of a poll: what each unread thread needs, and how threads are marked read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tusk.contracts.models import BlockedRepo, Blocklist
from tusk.poller.activity import decided, look_query, seen_whole
from tusk.poller.core import Thread, triage
from tusk.poller.notifications import listing_second, plan_marks, too_fresh

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
READ = T0 - timedelta(hours=1)


def thread(
    id_: str = "1",
    *,
    repo: str = "alice/widgets",
    kind: str = "Issue",
    reason: str = "mention",
    number: int | None = 7,
    updated: int = 0,
    last_read: datetime | None = READ,
) -> Thread:
    return Thread(
        id=id_,
        repo=repo,
        subject_type=kind,
        title="Typo",
        number=number,
        reason=reason,
        updated_at=T0 + timedelta(seconds=updated),
        last_read_at=last_read,
    )


# --------------------------------------------------------------------------- triage


@pytest.mark.parametrize("reason", ["author", "comment", "subscribed", "manual"])
def test_a_reason_a_mention_would_have_replaced_needs_nothing(reason: str) -> None:
    result = triage(thread(reason=reason), Blocklist())
    assert result.look == "done" and reason in result.why


@pytest.mark.parametrize(
    "reason", ["mention", "team_mention", "assign", "review_requested", "state_change", "new"]
)
def test_any_other_reason_may_hide_a_mention(reason: str) -> None:
    assert triage(thread(reason=reason), Blocklist()).look == "probe"


def test_a_thread_never_read_gets_its_full_context_at_once() -> None:
    assert triage(thread(last_read=None), Blocklist()).look == "fetch"


def test_a_pull_request_read_before_gets_a_look() -> None:
    assert triage(thread(kind="PullRequest"), Blocklist()).look == "probe"


def test_a_discussion_has_no_number_to_look_at_and_is_fetched() -> None:
    assert triage(thread(kind="Discussion", number=None), Blocklist()).look == "fetch"


def test_other_subjects_and_blocked_repositories_need_nothing() -> None:
    assert triage(thread(kind="Release"), Blocklist()).look == "done"
    blocked = Blocklist(repos=(BlockedRepo(repo="alice/widgets", by="bob", at=T0.isoformat()),))
    assert triage(thread(), blocked).look == "done"


# --------------------------------------------------------------------------- marking read


def test_when_every_thread_was_handled_one_request_marks_the_inbox() -> None:
    listed = [thread("1", updated=5), thread("2", repo="bob/tools", updated=9), thread("3")]
    marks, kept = plan_marks(listed, failed=set())
    assert kept == []
    assert [(m.repo, m.cutoff) for m in marks] == [(None, T0 + timedelta(seconds=9))]
    assert {t.id for t in marks[0].threads} == {"1", "2", "3"}


def test_a_failed_thread_and_later_ones_of_its_repository_stay_unread() -> None:
    listed = [
        thread("old", updated=1),
        thread("failed", updated=5),
        thread("later", updated=8),
        thread("other", repo="bob/tools", updated=9),
    ]
    marks, kept = plan_marks(listed, failed={"failed"})
    by_repo = {m.repo: m for m in marks}
    assert by_repo["alice/widgets"].cutoff == T0 + timedelta(seconds=4)
    assert [t.id for t in by_repo["alice/widgets"].threads] == ["old"]
    assert by_repo["bob/tools"].cutoff == T0 + timedelta(seconds=9)
    assert {t.id for t in kept} == {"failed", "later"}


def test_a_repository_whose_only_thread_failed_gets_no_request() -> None:
    marks, kept = plan_marks([thread("a")], failed={"a"})
    assert marks == [] and [t.id for t in kept] == ["a"]


def test_nothing_listed_nothing_marked() -> None:
    assert plan_marks([], failed=set()) == ([], [])


# --------------------------------------------------------------------------- the look


def comments(count: int, *, more: bool = False) -> dict[str, Any]:
    nodes = [
        {
            "id": f"IC_{i}",
            "databaseId": i,
            "url": f"https://github.com/alice/widgets/issues/7#issuecomment-{i}",
            "body": f"comment {i}",
            "createdAt": "2026-01-01T11:30:00Z",
            "updatedAt": "2026-01-01T11:30:00Z",
            "author": {"__typename": "User", "login": "bob"},
            "authorAssociation": "NONE",
        }
        for i in range(count)
    ]
    return {"pageInfo": {"hasNextPage": more, "endCursor": "c"}, "nodes": nodes}


def answer(**connections: Any) -> dict[str, Any]:
    return {
        "thread": {
            "__typename": "Issue",
            "id": "I_7",
            "number": 7,
            "body": "A bug.",
            "url": "https://github.com/alice/widgets/issues/7",
            "createdAt": "2026-01-01T10:00:00Z",
            "updatedAt": "2026-01-01T11:30:00Z",
            "lastEditedAt": None,
            "author": {"__typename": "User", "login": "alice"},
            "authorAssociation": "OWNER",
            **connections,
        }
    }


def test_a_thread_seen_whole_is_laid_out_as_the_full_context_lays_it_out() -> None:
    raw = seen_whole(thread(), answer(comments=comments(3)))
    assert raw is not None
    assert raw.kind == "issue" and raw.thread.number == 7
    assert [c.body for c in raw.comments] == ["comment 0", "comment 1", "comment 2"]


def test_a_thread_with_a_longer_list_than_one_page_is_not_decided_by_the_look() -> None:
    assert seen_whole(thread(), answer(comments=comments(100, more=True))) is None


def test_a_review_with_more_comments_than_one_page_is_not_decided_by_the_look() -> None:
    review = {
        "databaseId": 1,
        "url": "u",
        "body": "",
        "state": "COMMENTED",
        "submittedAt": "2026-01-01T11:00:00Z",
        "createdAt": "2026-01-01T11:00:00Z",
        "updatedAt": "2026-01-01T11:00:00Z",
        "author": {"__typename": "User", "login": "bob"},
        "authorAssociation": "NONE",
        "comments": comments(100, more=True),
    }
    reviews = {"pageInfo": {"hasNextPage": False}, "edges": [{"cursor": "a"}], "nodes": [review]}
    pull = answer(comments=comments(1), reviews=reviews)
    pull["thread"]["__typename"] = "PullRequest"
    assert seen_whole(thread(kind="PullRequest"), pull) is None


@pytest.mark.parametrize("bad", [None, {}, {"thread": None}, {"thread": {"__typename": "Pull"}}])
def test_a_missing_or_unexpected_answer_is_not_decided_by_the_look(bad: Any) -> None:
    assert seen_whole(thread(), bad) is None


def test_one_look_asks_for_every_thread_under_its_own_alias() -> None:
    query, variables = look_query(
        [thread("1", number=7), thread("2", repo="bob/tools", kind="PullRequest", number=3)]
    )
    assert "t0: repository(owner: $o0, name: $n0)" in query
    assert "t1: repository(owner: $o1, name: $n1)" in query
    assert "... on PullRequest" in query and "reviews(first: 100" in query
    assert variables == {
        "o0": "alice",
        "n0": "widgets",
        "i0": 7,
        "o1": "bob",
        "n1": "tools",
        "i1": 3,
    }


def test_a_thread_updated_in_the_listings_own_second_is_not_marked_read() -> None:
    """updated_at has whole seconds: a mention later in the same second would not move the
    thread past the cutoff, so such a thread waits for the next poll instead."""
    listed = [thread("old", updated=0), thread("fresh", updated=5)]
    listed_at = T0 + timedelta(seconds=5, milliseconds=400)
    assert too_fresh(listed, listed_at) == {"fresh"}
    marks, kept = plan_marks(listed, failed=too_fresh(listed, listed_at))
    assert [t.id for t in kept] == ["fresh"]
    cutoff = T0 + timedelta(seconds=4)  # just before the fresh one, as for a failed thread
    assert [(m.cutoff, [t.id for t in m.threads]) for m in marks] == [(cutoff, ["old"])]


def test_an_answer_that_crossed_a_second_may_hold_a_listing_of_the_second_before() -> None:
    """Date says 12:00:06 but the listing may have been built at 12:00:05.9: a mention
    at 12:00:05.95 would be stamped 12:00:05, the listed thread's second, and a cutoff
    of 12:00:05 would mark it read unseen."""
    listed = [thread("old", updated=0), thread("fresh", updated=5)]
    date = T0 + timedelta(seconds=6)
    assert listing_second(date, round_trip=0.3) == T0 + timedelta(seconds=5)
    assert too_fresh(listed, listing_second(date, round_trip=0.3)) == {"fresh"}
    # A slow answer may hold a listing built even earlier.
    assert listing_second(date, round_trip=2.5) == T0 + timedelta(seconds=3)
    assert listing_second(None, round_trip=0.3) is None


def test_without_githubs_clock_nothing_counts_as_too_fresh() -> None:
    assert too_fresh([thread("a")], None) == set()


def test_an_answer_the_layout_code_cannot_read_leaves_the_thread_to_the_full_context() -> None:
    odd = answer(comments={"pageInfo": {"hasNextPage": False}, "nodes": ["not a comment"]})
    good = answer(comments=comments(2))
    body = {"data": {"t0": odd, "t1": good}}
    seen = decided([thread("odd"), thread("good")], body)
    assert list(seen) == ["good"]


def test_a_thread_with_an_error_in_the_look_is_left_to_the_full_context() -> None:
    body = {
        "data": {"t0": None, "t1": answer(comments=comments(1))},
        "errors": [{"type": "NOT_FOUND", "path": ["t0", "thread"], "message": "gone"}],
    }
    assert list(decided([thread("gone"), thread("here")], body)) == ["here"]
    assert decided([thread("x")], "not json") == {}
