"""The poller and ``@bot undo``: a command dispatched as ``tusk-undo``, never a task."""

from __future__ import annotations

from typing import Any

from poller_helpers import REPO, issue, said, scenario

from tusk.poller.core import PollState


def test_undo_is_dispatched_as_an_undo_for_anyone_and_acknowledged(harness: Any) -> None:
    comments = [said("alice", "@tusk-bot fix it"), said("mallory", "@tusk-bot undo")]
    h = harness(scenario(issues=[issue(1, comments)]))
    _, report = h.poller.cycle(PollState())
    sent = h.sent()
    assert [doc.trigger.body for doc in sent.tasks] == ["@tusk-bot fix it"]
    [undo] = sent.undos
    assert (undo.actor, undo.repo, undo.comment_type) == ("mallory", REPO, "issue_comment")
    assert any(line.startswith("dispatched undo ") for line in report.lines())
    assert len(report.acknowledged) == 2  # the 👀 says it was dispatched, once


def test_an_undo_is_not_sent_twice(harness: Any, local_github: Any) -> None:
    h = harness(scenario(issues=[issue(1, [said("alice", "@tusk-bot undo")])]))
    h.poller.cycle(PollState())
    # A new mention makes the thread unread again; a fresh poller reads it whole.
    local_github.gateway("mallory").post(
        f"/repos/{REPO}/issues/1/comments", json={"body": "@tusk-bot thanks"}
    )
    _, report = harness_again(h).cycle(PollState())
    assert len(h.sent().undos) == 1, report.lines()


def harness_again(h: Any) -> Any:
    from poller_helpers import make_poller

    return make_poller(h.github, h.settings).poller
