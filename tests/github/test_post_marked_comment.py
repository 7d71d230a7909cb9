"""``post_marked_comment``: the bot's marked comment made once, against the local GitHub.
A comment whose answer was lost is found by its nonce, not posted twice; a rerun that
looks first finds the comment an earlier run made; a comment someone else wrote with
the same marker is not taken for the bot's."""

from __future__ import annotations

from typing import Any

import pytest

from tusk.github.once import post_marked_comment
from tusk.text.markers import render_marker

BOT = "tusk-bot"
REPO = "alice/widgets"
SCENARIO: dict[str, Any] = {
    "users": [{"login": BOT}, {"login": "alice"}],
    "tokens": {
        "bot": {"user": BOT, "scopes": ["repo"]},
        "alice": {"user": "alice", "scopes": ["repo"]},
    },
    "repos": [
        {
            "name": REPO,
            "default_branch": "main",
            "branches": [{"name": "main"}],
            "collaborators": {BOT: "write"},
            "issues": [{"number": 1, "author": "alice", "title": "t", "body": "b"}],
        }
    ],
}


@pytest.fixture
def github(local_github: Any) -> Any:
    local_github.load(SCENARIO)
    return local_github


def marked(nonce: str, text: str = "hello") -> str:
    return f"{render_marker('progress', {'jobid': 'job-1', 'nonce': nonce})}\n{text}"


def comments(github: Any) -> list[dict[str, Any]]:
    return list(github.gateway("alice").get(f"/repos/{REPO}/issues/1/comments"))


def post(github: Any, nonce: str, **kwargs: Any) -> dict[str, Any]:
    gateway = github.gateway("bot")
    gateway.sleep = lambda _: None
    return post_marked_comment(
        gateway, REPO, 1, marked(nonce), kind="progress", nonce=nonce, bot=BOT, **kwargs
    )


def test_a_comment_whose_answer_was_lost_is_found_not_posted_twice(github: Any) -> None:
    github.add_fault("POST", rf"^/repos/{REPO}/issues/1/comments$", status=502, lands=True)
    made = post(github, "n1")
    [only] = comments(github)
    assert made["id"] == only["id"] and only["user"]["login"] == BOT


def test_a_rerun_that_looks_first_finds_the_earlier_comment(github: Any) -> None:
    first = post(github, "n2")
    again = post(github, "n2", look_first=True)
    assert again["id"] == first["id"] and len(comments(github)) == 1


def test_a_look_trusts_only_the_bots_comment(github: Any) -> None:
    github.gateway("alice").post(f"/repos/{REPO}/issues/1/comments", json={"body": marked("n3")})
    made = post(github, "n3", look_first=True)
    assert made["user"]["login"] == BOT and len(comments(github)) == 2
