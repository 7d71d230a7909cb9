"""Go-away is recognised wherever a short message asks the bot to leave, from anyone."""

from __future__ import annotations

from typing import Any

import pytest
from poller_helpers import SETTINGS, issue, said, scenario

from tusk.poller.core import PollState

ASKS = [
    "@tusk-bot please go away",
    "@tusk-bot, go away please",
    "please go away @tusk-bot",
    "@tusk-bot could you go away?",
    "@tusk-bot\n\nplease go away",
]


@pytest.mark.parametrize("body", ASKS)
def test_a_stranger_asking_the_bot_to_leave_dispatches_go_away(harness: Any, body: str) -> None:
    """mallory is in no allowlist: the request still reaches the go-away workflow."""
    h = harness(scenario(issues=[issue(1, [said("mallory", body)])]))
    _, report = h.poller.cycle(PollState())
    sent = h.sent()
    assert sent.tasks == [], report.lines()
    assert [(r.actor, r.comment_type) for r in sent.go_aways] == [("mallory", "issue_comment")]
    assert not any("allowed_users" in line for line in report.skipped)


def test_a_bot_account_asking_the_bot_to_leave_is_heard(harness: Any) -> None:
    """allow_bot_accounts is off; leaving is asked of anyone, so it comes first."""
    h = harness(scenario(issues=[issue(1, [said("renovate[bot]", "@tusk-bot please go away")])]))
    h.poller.cycle(PollState())
    assert [r.actor for r in h.sent().go_aways] == ["renovate[bot]"]


def test_the_bots_own_go_away_text_is_never_a_request(harness: Any) -> None:
    """The bot's footer tells people how to send it away; its own text never does."""
    h = harness(
        scenario(
            issues=[
                issue(
                    1,
                    [said("alice", "@tusk-bot fix it"), said("tusk-bot", "@tusk-bot go away")],
                )
            ]
        ),
        SETTINGS,
    )
    h.poller.cycle(PollState())
    sent = h.sent()
    assert sent.go_aways == [] and [d.actor for d in sent.tasks] == ["alice"]
