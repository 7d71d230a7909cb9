"""Discussion notifications in both of GitHub's eras: subject.url null (before late 2024)
or filled in with a URL that answers 404 (since): the mention is found either way."""

from __future__ import annotations

from typing import Any

import pytest
from poller_helpers import scenario

from tusk.poller.core import PollState, parse_thread


@pytest.mark.parametrize("populated", [True, False])
def test_a_discussion_mention_is_dispatched_whatever_subject_url_holds(
    harness: Any, populated: bool
) -> None:
    discussion = {
        "number": 7,
        "author": "alice",
        "title": "Ideas",
        "body": "Let us talk.",
        "comments": [{"author": "alice", "body": "@tusk-bot summarise this"}],
    }
    scn = {**scenario(discussions=[discussion]), "settings": {"discussion_subject_url": populated}}
    h = harness(scn)
    (listed,) = h.threads()
    thread = parse_thread(listed)
    assert thread.kind == "discussion"
    assert thread.number == (7 if populated else None)  # the number comes from the URL
    h.poller.cycle(PollState())
    (doc,) = h.sent().tasks
    assert (doc.trigger.type, doc.trigger.number) == ("discussion_comment", 7)
