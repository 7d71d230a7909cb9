"""The sans-I/O core: poll state, trigger location and planning, without a network."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tusk.contracts.config import Settings
from tusk.contracts.models import BlockedRepo, BlockedUser, Blocklist, TaskWork
from tusk.contracts.raw_context import RawContext
from tusk.github.trust import TrustDecision
from tusk.poller.core import (
    Candidate,
    CommandWork,
    Node,
    NotificationsResponse,
    PollState,
    Skipped,
    after_cycle,
    locate_triggers,
    nodes_of,
    parse_thread,
    plan,
    poll,
)
from tusk.poller.jobids import job_id

SETTINGS = Settings(bot="tusk-bot", control_repo="alice/control", allowed_users=("alice", "bob"))
NOW = datetime(2026, 1, 2, 12, 0, tzinfo=UTC)
T0 = "2026-01-01T00:00:00Z"
EXTERNAL = TrustDecision("external", "permission_endpoint", "read")


def comment(
    id_: int, user: str, body: str, at: str = "2026-01-01T10:00:00Z", **extra: Any
) -> dict[str, Any]:
    return {
        "id": id_,
        "node_id": f"IC_{id_}",
        "user": {"login": user, "type": extra.pop("user_type", "User")},
        "body": body,
        "created_at": at,
        "updated_at": extra.pop("updated_at", at),
        "html_url": f"https://github.com/alice/widgets/issues/1#issuecomment-{id_}",
        **extra,
    }


def nodes(raw: dict[str, Any]) -> list[Node]:
    """``nodes_of`` over the contract the poller builds from ``raw``."""
    return nodes_of(RawContext.model_validate(raw))


def issue_raw(comments: list[dict[str, Any]], body: str = "A bug.") -> dict[str, Any]:
    return {
        "kind": "issue",
        "thread": {
            "number": 1,
            "node_id": "I_1",
            "title": "Typo",
            "body": body,
            "user": {"login": "alice", "type": "User"},
            "created_at": T0,
            "updated_at": T0,
            "html_url": "https://github.com/alice/widgets/issues/1",
        },
        "comments": comments,
    }


def test_304_keeps_the_date_and_yields_no_threads() -> None:
    state = PollState(last_modified="Thu, 01 Jan 2026 00:00:00 GMT", poll_interval=60)
    response = NotificationsResponse(304, (), state.last_modified, 120.0)
    new_state, threads = poll(state, response)
    assert threads == []
    assert new_state.last_modified == state.last_modified
    assert new_state.poll_interval == 120.0


def test_200_takes_last_modified_and_parses_threads() -> None:
    item = {
        "id": "7",
        "reason": "mention",
        "updated_at": "2026-01-01T10:00:00Z",
        "last_read_at": None,
        "repository": {"full_name": "alice/widgets"},
        "subject": {
            "type": "Issue",
            "title": "Typo",
            "url": "https://x/repos/alice/widgets/issues/12",
        },
    }
    new_state, threads = poll(PollState(), NotificationsResponse(200, (item,), "LM", None))
    assert new_state.last_modified == "LM"
    assert new_state.poll_interval == 60.0
    assert (
        threads[0].number == 12 and threads[0].kind == "issue" and threads[0].last_read_at is None
    )


def test_discussion_thread_without_url_has_no_number() -> None:
    thread = parse_thread(
        {
            "id": "8",
            "updated_at": T0,
            "repository": {"full_name": "alice/widgets"},
            "subject": {"type": "Discussion", "title": "Ideas", "url": None},
        }
    )
    assert thread.kind == "discussion" and thread.number is None and thread.title == "Ideas"


def test_a_thread_left_unread_forgets_the_date_so_the_next_poll_sees_it() -> None:
    state = PollState(last_modified="LM", poll_interval=90)
    assert after_cycle(state, all_threads_done=True) == state
    assert after_cycle(state, all_threads_done=False) == PollState(None, 90)


def test_three_new_mentions_in_one_thread_are_three_candidates_in_order() -> None:
    raw = issue_raw(
        [
            comment(3, "alice", "@tusk-bot third", "2026-01-01T12:00:00Z"),
            comment(1, "alice", "@tusk-bot first", "2026-01-01T10:00:00Z"),
            comment(2, "bob", "@tusk-bot second", "2026-01-01T11:00:00Z"),
        ]
    )
    candidates, skipped = locate_triggers(nodes(raw), since=None, settings=SETTINGS)
    assert [c.node.id for c in candidates] == ["1", "2", "3"]
    assert skipped == []


def test_only_nodes_changed_since_last_read_count() -> None:
    raw = issue_raw(
        [
            comment(1, "alice", "@tusk-bot old", "2026-01-01T10:00:00Z"),
            comment(2, "alice", "@tusk-bot new", "2026-01-01T12:00:00Z"),
            comment(
                3,
                "alice",
                "@tusk-bot edited",
                "2026-01-01T09:00:00Z",
                updated_at="2026-01-01T13:00:00Z",
            ),
        ],
        body="@tusk-bot in the body, long ago",
    )
    since = datetime(2026, 1, 1, 11, 0, tzinfo=UTC)
    candidates, _ = locate_triggers(nodes(raw), since=since, settings=SETTINGS)
    assert [c.node.id for c in candidates] == ["3", "2"]


def test_issue_body_mention_is_a_trigger() -> None:
    candidates, _ = locate_triggers(
        nodes(issue_raw([], body="@tusk-bot fix")), since=None, settings=SETTINGS
    )
    assert [(c.node.type, c.node.id) for c in candidates] == [("issue_body", "1")]


def test_self_and_bot_accounts_are_skipped_with_reasons() -> None:
    raw = issue_raw(
        [
            comment(1, "tusk-bot", "Done. `@tusk-bot go away` removes me; cc @tusk-bot"),
            comment(2, "renovate[bot]", "@tusk-bot rebase", user_type="Bot"),
        ]
    )
    candidates, skipped = locate_triggers(nodes(raw), since=None, settings=SETTINGS)
    assert candidates == []
    assert ["own text" in s.reason for s in skipped] == [True, False]
    assert "Bot account" in skipped[1].reason
    allowing = SETTINGS.model_copy(update={"allow_bot_accounts": True})
    candidates, _ = locate_triggers(nodes(raw), since=None, settings=allowing)
    assert [c.node.author for c in candidates] == ["renovate[bot]"]


def test_go_away_is_never_a_task() -> None:
    raw = issue_raw([comment(1, "mallory", "@tusk-bot go away")])
    (candidate,), _ = locate_triggers(nodes(raw), since=None, settings=SETTINGS)
    assert candidate.kind == "go_away"
    work = plan(
        candidate,
        repo="alice/widgets",
        trust=EXTERNAL,
        settings=SETTINGS,
        blocklist=Blocklist(),
        now=NOW,
    )
    assert isinstance(work, CommandWork) and work.job.kind == "go_away"
    assert work.request.actor == "mallory" and work.request.comment_id == "1"
    assert work.request.jobid == job_id("alice/widgets", "issue_comment", "1")


def _task(author: str = "alice", body: str = "@tusk-bot fix") -> Candidate:
    (candidate,), _ = locate_triggers(
        nodes(issue_raw([comment(5, author, body)])), since=None, settings=SETTINGS
    )
    return candidate


def test_unauthorized_author_is_skipped() -> None:
    work = plan(
        _task("mallory"),
        repo="alice/widgets",
        trust=EXTERNAL,
        settings=SETTINGS,
        blocklist=Blocklist(),
        now=NOW,
    )
    assert isinstance(work, Skipped) and "allowed_users" in work.reason


def test_blocked_repository_and_user_are_skipped() -> None:
    blocked_repo = Blocklist(repos=(BlockedRepo(repo="alice/widgets", by="carol", at=NOW),))
    blocked_owner = Blocklist(users=(BlockedUser(user="alice", at=NOW),))
    blocked_actor = Blocklist(users=(BlockedUser(user="bob", at=NOW),))
    for blocklist, who in (
        (blocked_repo, "alice"),
        (blocked_owner, "alice"),
        (blocked_actor, "bob"),
    ):
        work = plan(
            _task(who),
            repo="alice/widgets",
            trust=TrustDecision("owner", "repository_owner"),
            settings=SETTINGS,
            blocklist=blocklist,
            now=NOW,
        )
        assert isinstance(work, Skipped) and "blocklist" in work.reason


def test_task_carries_trust_permissions_and_trigger() -> None:
    work = plan(
        _task("bob", "@tusk-bot [permissions: no-pr] fix"),
        repo="alice/widgets",
        trust=TrustDecision("collaborator", "author_association", "MEMBER"),
        settings=SETTINGS,
        blocklist=Blocklist(),
        now=NOW,
    )
    assert isinstance(work, TaskWork)
    assert (work.trust_level, work.trust_source) == ("collaborator", "author_association")
    assert "pull_request" not in work.permission_config.operations
    assert (
        work.trigger.type == "issue_comment"
        and work.trigger.id == "5"
        and work.trigger.author == "bob"
    )


def test_repeated_go_away_already_in_force_is_not_dispatched_again() -> None:
    (candidate,), _ = locate_triggers(
        nodes(issue_raw([comment(1, "mallory", "@tusk-bot go away")])),
        since=None,
        settings=SETTINGS,
    )
    done = Blocklist(users=(BlockedUser(user="mallory", at=NOW),))
    work = plan(
        candidate,
        repo="alice/widgets",
        trust=EXTERNAL,
        settings=SETTINGS,
        blocklist=done,
        now=NOW,
    )
    assert isinstance(work, Skipped)


def test_body_counts_as_changed_only_when_the_body_itself_was_edited() -> None:
    """updated_at of an issue moves with every comment; last_edited_at only with the body."""
    raw = issue_raw([], body="@tusk-bot in the body, long ago")
    raw["thread"]["updated_at"] = "2026-01-01T12:00:00Z"  # a comment arrived
    since = datetime(2026, 1, 1, 11, 0, tzinfo=UTC)
    assert locate_triggers(nodes(raw), since=since, settings=SETTINGS)[0] == []
    raw["thread"]["last_edited_at"] = "2026-01-01T12:00:00Z"  # the body was edited
    (candidate,), _ = locate_triggers(nodes(raw), since=since, settings=SETTINGS)
    assert candidate.node.type == "issue_body"
