"""A trigger is dispatched once (P8), whatever leaves its thread unread: the bot's 👀 on
the node, on GitHub, is the record that it was sent."""

from __future__ import annotations

from typing import Any

from poller_helpers import issue, make_poller, said, scenario

from tusk.poller.core import PollState

LATE = {"mark_read_late_listings": 5}  # each mark answers 202 and lands five listings later


def _late(scn: dict[str, Any]) -> dict[str, Any]:
    return {**scn, "settings": LATE}


def _three_polls(local_github: Any) -> list[list[str]]:
    """Three separate poll runs (no state between them, as after a lost cache)."""
    skipped = []
    for _ in range(3):
        _, report = make_poller(local_github).poller.cycle(PollState())
        skipped.append(report.skipped)
    return skipped


def test_a_thread_left_unread_and_polled_three_times_dispatches_once(
    harness: Any, local_github: Any
) -> None:
    h = harness(_late(scenario(issues=[issue(1, [said("alice", "@tusk-bot fix the typo")])])))
    skipped = _three_polls(local_github)
    assert [t["unread"] for t in h.threads()] == [True]  # every mark is still on its way
    assert len(local_github.dispatches()) == 1
    assert len(h.sent().tasks) == 1
    assert all(any("dispatched before" in s for s in lines) for lines in skipped[1:])
    reactions = local_github.gateway("alice").get("/repos/alice/widgets/issues/1/comments")
    assert reactions[0]["reactions"]["eyes"] == 1


def test_a_go_away_left_unread_and_polled_three_times_dispatches_once(
    harness: Any, local_github: Any
) -> None:
    h = harness(_late(scenario(issues=[issue(1, [said("mallory", "@tusk-bot please go away")])])))
    _three_polls(local_github)
    assert [r.actor for r in h.sent().go_aways] == ["mallory"]
    assert len(local_github.dispatches()) == 1


def test_a_review_and_a_discussion_comment_left_unread_dispatch_once(
    harness: Any, local_github: Any
) -> None:
    """Reviews and discussions get their 👀 over GraphQL; it is read back the same way."""
    pull = {
        "number": 2,
        "author": "alice",
        "title": "Faster widgets",
        "head": "fast",
        "base": "main",
        "reviews": [{"author": "alice", "state": "COMMENTED", "body": "@tusk-bot tidy this"}],
    }
    discussion = {
        "number": 3,
        "author": "alice",
        "title": "Ideas",
        "body": "Let us talk.",
        "comments": [{"author": "bob", "body": "@tusk-bot summarise, please"}],
    }
    scn = scenario(pulls=[pull], discussions=[discussion])
    scn["repos"][0]["branches"].append({"name": "fast"})
    h = harness(_late(scn))
    _three_polls(local_github)
    sent = h.sent()
    assert sorted(doc.trigger.type for doc in sent.tasks) == ["discussion_comment", "review"]
    assert len(local_github.dispatches()) == 2


def test_a_mark_answered_202_lands_later(harness: Any, local_github: Any) -> None:
    """The stand-in's late mark: 202 now, read after the listings it waits for."""
    h = harness(
        {
            **scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]),
            "settings": {"mark_read_late_listings": 1},
        }
    )
    bot = local_github.gateway("bot-read")
    answer = bot.request("PUT", "/notifications", json={"last_read_at": "2030-01-01T00:00:00Z"})
    assert answer.status == 202
    assert [t["unread"] for t in h.threads()] == [True]  # the first listing still shows it
    assert [t["unread"] for t in h.threads()] == [False]
