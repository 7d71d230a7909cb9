"""Only a thread that may hold a new mention costs its full context; no mention is lost.

The local GitHub keeps a thread's ``reason`` at ``mention`` once the bot was
mentioned (as GitHub does), so a plain reply makes an old mention thread
unread again. These tests drive the poller through such threads and check
both that every real mention is dispatched (in a comment, an edited comment,
an edited body, a review comment, a discussion) and what the threads without
one cost.
"""

from __future__ import annotations

from typing import Any

from poller_helpers import BOT, REPO, SETTINGS, issue, make_poller, said, scenario

from tusk.poller.core import PollState

MENTION = "@tusk-bot please fix the typo"


class Journal:
    """The local GitHub's requests from a point on."""

    def __init__(self, github: Any) -> None:
        self.github = github
        self.start = len(github.journal())

    def since(self) -> list[dict[str, Any]]:
        return self.github.journal()[self.start :]

    def graphql(self, marker: str) -> list[dict[str, Any]]:
        return [
            r
            for r in self.since()
            if r["path"] == "/graphql" and marker in str((r["body"] or {}).get("query", ""))
        ]

    def contexts(self) -> list[dict[str, Any]]:
        """The full context's main queries (only they ask for the bot's fork)."""
        return self.graphql("botFork")

    def looks(self) -> list[dict[str, Any]]:
        return self.graphql("t0: repository")


def read_once(harness: Any, scn: dict[str, Any]) -> tuple[Any, PollState, Journal]:
    """Load ``scn`` and poll once: the bot reads its mentions. The journal starts after."""
    with_bob(scn)
    h = harness(scn)
    state, report = h.poller.cycle(PollState())
    assert report.errors == []
    assert not any(t["unread"] for t in h.threads())
    return h, state, Journal(h.github)


def with_bob(scn: dict[str, Any]) -> dict[str, Any]:
    scn["tokens"]["bob"] = {"user": "bob", "scopes": ["repo"]}
    return scn


def post(github: Any, who: str, number: int, body: str) -> dict[str, Any]:
    """A comment, and then a poll interval passes: a thread updated in the second GitHub
    lists it is left unread for the next poll (``notifications.too_fresh``)."""
    created = github.gateway(who).post(
        f"/repos/{REPO}/issues/{number}/comments", json={"body": body}
    )
    github.advance(60)
    return created


def test_a_reply_without_a_mention_costs_one_look_and_no_context(
    harness: Any, local_github: Any
) -> None:
    h, state, journal = read_once(harness, scenario(issues=[issue(1, [said("alice", MENTION)])]))
    post(local_github, "alice", 1, "Thanks, that works.")
    (thread,) = [t for t in h.threads() if t["unread"]]
    assert thread["reason"] == "mention" and thread["last_read_at"]  # sticky, read before
    _, report = h.poller.cycle(state)
    assert report.errors == [] and report.dispatched == []
    assert len(journal.looks()) == 1
    assert journal.contexts() == []
    assert not any(t["unread"] for t in h.threads())
    paths = [(r["method"], r["path"]) for r in journal.since()]
    assert ("GET", f"/notifications/threads/{thread['id']}") not in paths  # no check before
    assert [p for p in paths if p[0] in ("PUT", "PATCH")] == [("PUT", "/notifications")]


def test_a_new_mention_in_a_thread_read_before_is_dispatched(
    harness: Any, local_github: Any
) -> None:
    h, state, journal = read_once(harness, scenario(issues=[issue(1, [said("alice", MENTION)])]))
    post(local_github, "bob", 1, "@tusk-bot and the other one")
    h.poller.cycle(state)
    assert [doc.trigger.body for doc in h.sent().tasks] == [MENTION, "@tusk-bot and the other one"]
    assert len(journal.contexts()) == 1
    assert not any(t["unread"] for t in h.threads())


def test_a_mention_added_by_editing_an_old_comment_is_dispatched(
    harness: Any, local_github: Any
) -> None:
    """The edit sits among the older comments; a later plain reply made the thread unread.
    The look sees every comment with its edit time, so the edit is not hidden by the reply."""
    comments = [said("alice", MENTION), said("bob", "I think it is in the README.")]
    h, state, journal = read_once(harness, scenario(issues=[issue(1, comments)]))
    listed = local_github.gateway("bob").get(f"/repos/{REPO}/issues/1/comments")
    older = listed[1]["id"]
    local_github.gateway("bob").patch(
        f"/repos/{REPO}/issues/comments/{older}",
        json={"body": "I think it is in the README. @tusk-bot can you check?"},
    )
    post(local_github, "alice", 1, "Right.")
    h.poller.cycle(state)
    bodies = [doc.trigger.body for doc in h.sent().tasks]
    assert bodies[-1] == "I think it is in the README. @tusk-bot can you check?"
    assert len(journal.contexts()) == 1


def test_a_mention_added_by_editing_the_body_is_dispatched(harness: Any, local_github: Any) -> None:
    h, state, _ = read_once(harness, scenario(issues=[issue(1, [said("alice", MENTION)])]))
    local_github.gateway("alice").patch(
        f"/repos/{REPO}/issues/1", json={"body": "Something is off. @tusk-bot look at the body"}
    )
    h.poller.cycle(state)
    last = h.sent().tasks[-1]
    assert last.trigger.type == "issue_body"
    assert last.trigger.body == "Something is off. @tusk-bot look at the body"


def pull_request() -> dict[str, Any]:
    """Pull request 2, whose conversation mentions the bot; a fresh copy per test."""
    return {
        "number": 2,
        "author": "bob",
        "title": "Faster widgets",
        "body": "Makes them faster.",
        "head": "faster",
        "base": "main",
        "files": {"README.md": "# Faster widgets\n"},
        "comments": [said("alice", MENTION)],
    }


def review_readme(local_github: Any, body: str) -> None:
    """alice reviews pull request 2 with one comment on README.md's first line."""
    local_github.gateway("alice").post(
        f"/repos/{REPO}/pulls/2/reviews",
        json={
            "event": "COMMENT",
            "body": "",
            "comments": [{"path": "README.md", "line": 1, "body": body}],
        },
    )


def test_a_mention_in_a_review_comment_of_a_pull_request_read_before_is_dispatched(
    harness: Any, local_github: Any
) -> None:
    h, state, journal = read_once(harness, scenario(pulls=[pull_request()]))
    review_readme(local_github, "@tusk-bot reword this line")
    h.poller.cycle(state)
    last = h.sent().tasks[-1]
    assert (last.trigger.type, last.trigger.body) == (
        "review_comment",
        "@tusk-bot reword this line",
    )
    assert len(journal.looks()) == 1


def test_a_plain_review_in_a_pull_request_read_before_costs_no_context(
    harness: Any, local_github: Any
) -> None:
    h, state, journal = read_once(harness, scenario(pulls=[pull_request()]))
    review_readme(local_github, "nice")
    _, report = h.poller.cycle(state)
    assert report.dispatched == [] and journal.contexts() == []
    assert not any(t["unread"] for t in h.threads())


def test_a_mention_in_a_discussion_read_before_is_dispatched(
    harness: Any, local_github: Any
) -> None:
    discussion = {
        "number": 3,
        "author": "alice",
        "title": "Ideas",
        "body": "What next?",
        "category": "Ideas",
        "comments": [{"author": "alice", "body": MENTION}],
    }
    h, state, _ = read_once(harness, scenario(discussions=[discussion]))
    alice = local_github.gateway("alice")
    found = alice.graphql(
        '{ repository(owner: "alice", name: "widgets") { discussion(number: 3) { id } } }'
    )
    mutation = """mutation($id: ID!, $body: String!) {
      addDiscussionComment(input: {discussionId: $id, body: $body}) { comment { body } } }"""
    alice.graphql(
        mutation,
        {"id": found["repository"]["discussion"]["id"], "body": "@tusk-bot summarise this"},
    )
    h.poller.cycle(state)
    last = h.sent().tasks[-1]
    assert (last.trigger.type, last.trigger.body) == (
        "discussion_comment",
        "@tusk-bot summarise this",
    )


def test_threads_the_bot_opened_or_commented_on_cost_nothing_but_the_mark(
    harness: Any, local_github: Any
) -> None:
    """reason author and comment: a mention would have made them mention."""
    opened = issue(1, [], body="Found while working.", author=BOT)
    commented = issue(2, [said(BOT, "On it.")])
    h = harness(with_bob(scenario(issues=[opened, commented])))
    post(local_github, "bob", 1, "I can reproduce this.")
    post(local_github, "alice", 2, "Any news?")
    reasons = sorted(t["reason"] for t in h.threads() if t["unread"])
    assert reasons == ["author", "comment"]
    journal = Journal(local_github)
    _, report = h.poller.cycle(PollState())
    assert report.errors == [] and report.dispatched == []
    assert journal.looks() == [] and journal.contexts() == []
    assert not any(t["unread"] for t in h.threads())


def test_a_thread_too_long_for_one_look_gets_its_full_context(
    harness: Any, local_github: Any
) -> None:
    comments = [said("bob", f"note {i}") for i in range(120)] + [said("alice", MENTION)]
    h, state, journal = read_once(harness, scenario(issues=[issue(1, comments)]))
    post(local_github, "alice", 1, "@tusk-bot one more thing")
    h.poller.cycle(state)
    assert h.sent().tasks[-1].trigger.body == "@tusk-bot one more thing"
    assert len(journal.looks()) == 1 and len(journal.contexts()) == 1


def test_a_failed_look_falls_back_to_the_full_context(harness: Any, local_github: Any) -> None:
    h, state, _ = read_once(harness, scenario(issues=[issue(1, [said("alice", MENTION)])]))
    post(local_github, "alice", 1, "@tusk-bot again")
    local_github.add_fault("POST", r"^/graphql$", status=502, count=3)
    h.poller.cycle(state)
    assert h.sent().tasks[-1].trigger.body == "@tusk-bot again"


def test_a_failed_thread_stays_unread_while_the_others_are_marked(
    harness: Any, local_github: Any
) -> None:
    """Each repository is marked up to just before its oldest failed thread."""
    scn = scenario(issues=[issue(1, [said("alice", MENTION)]), issue(2, [said("alice", MENTION)])])
    gadgets = {"name": "alice/gadgets", "collaborators": {BOT: "write"}}
    scn["repos"].append({**gadgets, "issues": [issue(1, [said("alice", MENTION)])]})
    h = harness(scn)
    # The newest thread (gadgets, listed first) is dispatched first, and fails.
    control = SETTINGS.control_repo
    local_github.add_fault("POST", f"/repos/{control}/dispatches", status=422, count=1)
    state, report = h.poller.cycle(PollState())
    assert len(report.errors) == 1 and "alice/gadgets" in report.errors[0]
    unread = [t["repository"]["full_name"] for t in h.threads() if t["unread"]]
    assert unread == ["alice/gadgets"]
    assert state.last_modified is None
    again = make_poller(local_github)
    again.poller.cycle(state)
    assert not any(t["unread"] for t in again.threads())
    assert len(set(again.sent().jobids)) == 3
