"""Go-away checks its work: the pull requests it expected closed with the fork are read
back, and those GitHub left open are closed by the bot (their author)."""

from __future__ import annotations

from typing import Any

import pytest
from go_away_world import BOT, open_fork_pull, request, scenario
from test_go_away_local_github import go_away_log, repo_state, run_go_away


def load(local_github: Any, *, fork_deletion_closes_pulls: bool) -> Any:
    world = scenario(everyone_asks=True)
    world["settings"] = {"fork_deletion_closes_pulls": fork_deletion_closes_pulls}
    local_github.load(world)
    return local_github


@pytest.mark.parametrize("closes", [True, False])
def test_every_pull_request_from_the_fork_ends_closed_whatever_github_does(
    local_github: Any, closes: bool
) -> None:
    world = load(local_github, fork_deletion_closes_pulls=closes)
    pull = open_fork_pull(world.gateway("agent"))

    assert run_go_away(world, request("bob")) == 0

    assert repo_state(world, f"{BOT}/widgets") is None
    assert repo_state(world, "alice/widgets")["issues"][str(pull["number"])]["state"] == "closed"
    patches = [
        e
        for e in world.journal()
        if e["method"] == "PATCH" and e["path"] == f"/repos/alice/widgets/pulls/{pull['number']}"
    ]
    assert len(patches) == (0 if closes else 1)  # closed by the bot only when left open
    body = go_away_log(world)["body"]
    assert f"`{pull['html_url']}`" in body
    left_open = "still open after the fork went, closed by the bot"
    assert (left_open in body) is not closes
    assert "## Problems\n\nNone." in body


def test_the_report_says_what_github_keeps(local_github: Any) -> None:
    world = load(local_github, fork_deletion_closes_pulls=True)
    assert run_go_away(world, request("bob")) == 0
    body = go_away_log(world)["body"]
    assert "### What GitHub keeps" in body
    assert 'leaves a "deleted a comment" event in its thread\'s timeline' in body
    assert "Submitted reviews cannot be deleted: their bodies stay" in body


def test_a_pull_request_that_cannot_be_closed_is_a_problem_with_what_to_do(
    local_github: Any,
) -> None:
    world = load(local_github, fork_deletion_closes_pulls=False)
    pull = open_fork_pull(world.gateway("agent"))
    world.add_fault(
        "PATCH", rf"^/repos/alice/widgets/pulls/{pull['number']}$", status=502, count=None
    )

    assert run_go_away(world, request("bob")) == 1

    body = go_away_log(world)["body"]
    assert f"could not make sure {pull['html_url']} is closed" in body
    assert f"Close {pull['html_url']} by hand" in body


@pytest.mark.parametrize("words", ["@tusk-bot, please go away", "please go away @tusk-bot"])
def test_go_away_verifies_any_short_request_to_leave(local_github: Any, words: str) -> None:
    """The go-away step reads the request back with the poller's grammar: what the poller
    dispatched as a go-away verifies as one."""
    world = scenario()
    for repo in world["repos"]:
        for issue in repo.get("issues", []):
            for comment in issue.get("comments", []):
                if comment.get("id") == 503:
                    comment["body"] = words
    local_github.load(world)
    assert run_go_away(local_github, request("bob")) == 0
    assert "## Problems\n\nNone." in go_away_log(local_github)["body"]
