"""👀 on every dispatched mention, wherever it was written: a comment, an issue or
PR body, a review comment, a review, a discussion or a discussion comment."""

from __future__ import annotations

from typing import Any

from poller_helpers import BOT, REPO, issue, said, scenario, settle

from tusk.poller.core import PollState


def reactions(node: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["user"], r["content"]) for r in node.get("reactions", [])]


def test_comment_and_issue_body_mentions_get_eyes_from_the_bot(
    harness: Any, local_github: Any
) -> None:
    h = harness(
        scenario(
            issues=[
                issue(1, [said("alice", "@tusk-bot fix it"), said("bob", "thanks")]),
                issue(2, [], body="@tusk-bot please look"),
            ]
        )
    )
    _, report = h.poller.cycle(PollState())
    assert report.errors == [] and len(report.acknowledged) == 2
    issues = local_github.state()["repos"][REPO]["issues"]
    first = issues["1"]["comments"]
    assert reactions(first[0]) == [(BOT, "eyes")] and reactions(first[1]) == []
    assert reactions(issues["1"]) == []
    assert reactions(issues["2"]) == [(BOT, "eyes")]


def test_pull_request_body_review_and_review_comment_mentions_get_eyes(
    harness: Any, local_github: Any
) -> None:
    pull = {
        "number": 4,
        "author": "alice",
        "title": "Refactor",
        "body": "@tusk-bot please add tests",
        "head": "refactor",
        "base": "main",
        "files": {"widgets.py": "def widget():\n    return 3\n"},
        "reviews": [
            {
                "author": "bob",
                "body": "@tusk-bot also update the docs",
                "state": "COMMENTED",
                "comments": [
                    {
                        "author": "alice",
                        "body": "@tusk-bot rename this",
                        "path": "widgets.py",
                        "line": 1,
                    }
                ],
            }
        ],
    }
    h = harness(scenario(pulls=[pull]))
    # One run for the thread; the other two mentions are its follow-ups, each given 👀.
    reports = settle(h).reports
    assert all(r.errors == [] for r in reports)
    assert sum(len(r.acknowledged) for r in reports) == 3
    pr = local_github.state()["repos"][REPO]["issues"]["4"]
    assert reactions(pr) == [(BOT, "eyes")]
    (review,) = pr["pull"]["reviews"]
    assert reactions(review) == [(BOT, "eyes")]  # GraphQL addReaction: REST has no route
    (comment,) = pr["pull"]["review_comments"]
    assert reactions(comment) == [(BOT, "eyes")]


def test_discussion_body_and_comment_mentions_get_eyes_through_graphql(
    harness: Any, local_github: Any
) -> None:
    discussions = [
        {
            "number": 3,
            "author": "alice",
            "title": "Roadmap",
            "body": "@tusk-bot what next?",
            "category": "Ideas",
            "comments": [
                {
                    "author": "bob",
                    "body": "More widgets",
                    "replies": [{"author": "alice", "body": "@tusk-bot draft a plan"}],
                }
            ],
        }
    ]
    h = harness(scenario(discussions=discussions))
    reports = settle(h).reports
    assert all(r.errors == [] for r in reports)
    assert sum(len(r.acknowledged) for r in reports) == 2
    (discussion,) = local_github.state()["repos"][REPO]["discussions"].values()
    assert reactions(discussion) == [(BOT, "eyes")]
    (comment,) = discussion["comments"]
    assert reactions(comment) == []
    assert reactions(comment["replies"][0]) == [(BOT, "eyes")]


def test_a_refused_reaction_never_holds_up_the_dispatch(harness: Any, local_github: Any) -> None:
    h = harness(scenario(issues=[issue(1, [said("alice", "@tusk-bot fix it")])]))
    local_github.add_fault("POST", r"/reactions$", status=500, count=None)
    _, report = h.poller.cycle(PollState())
    assert report.errors == [] and len(h.sent().tasks) == 1
    assert report.acknowledged == [] and len(report.marked_read) == 1


def test_a_rate_limited_reaction_holds_up_no_dispatch_and_no_mark(
    harness: Any, local_github: Any
) -> None:
    """GitHub answers the bot's reactions with a secondary limit (403, retry-after): the
    gateway waits it out, but only once every trigger is dispatched and marked read."""
    h = harness(
        scenario(
            issues=[
                issue(1, [said("alice", "@tusk-bot fix it")]),
                issue(2, [said("bob", "@tusk-bot and this")]),
            ]
        )
    )
    limited = {"retry-after": "60"}
    local_github.add_fault("POST", r"/reactions$", status=403, headers=limited, count=None)
    _, report = h.poller.cycle(PollState())
    assert report.errors == [] and report.acknowledged == []
    assert len(h.sent().tasks) == 2 and len(report.marked_read) == 2
    steps = [
        "react" if e["path"].endswith("/reactions") else e["method"]
        for e in local_github.journal()
        if e["method"] in ("POST", "PUT")
    ]
    first_reaction = steps.index("react")
    assert "PUT" in steps[:first_reaction]  # the mark came first ...
    assert steps[first_reaction:] == ["react"] * len(steps[first_reaction:])  # ... then only 👀
