"""The bot's fork on real GitHub: found by its parent whatever its name, created as
`name-1` when the name is taken, and waited for as long as configured."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.mcp.mcp_harness import BOT, agent_session, scenario
from tests.mcp.server.test_server import git, make_workspace
from tusk.contracts.config import Settings

pytestmark = pytest.mark.anyio


def branches_of(local_github: Any, full_name: str) -> set[str]:
    listed = local_github.gateway("alice").get(f"/repos/{full_name}/branches")
    return {b["name"] for b in listed}


def with_repos(*repos: dict[str, Any]) -> dict[str, Any]:
    world = scenario()
    world["repos"] += list(repos)
    return world


UNRELATED = {"name": f"{BOT}/widgets", "description": "the bot's own widgets, not a fork"}


async def test_an_existing_fork_under_another_name_is_found_by_its_parent(
    start_mcp, local_github, tmp_path
) -> None:
    local_github.load(
        with_repos(UNRELATED, {"name": f"{BOT}/widgets-renamed", "fork_of": "alice/widgets"})
    )
    work = make_workspace(local_github, tmp_path)
    running = start_mcp(workspace=work)
    async with agent_session(running.url) as agent:
        fork = json.loads(await agent.ok("get_my_fork", repo="alice/widgets"))
        assert fork["fork"]["full_name"] == f"{BOT}/widgets-renamed"
        text = await agent.ok("push_branch", branch="tusk/fix")
        assert f"{BOT}/widgets-renamed" in text
        await agent.ok(
            "create_pull_request",
            repo="alice/widgets",
            title="Fix typo",
            body="Fixes #1",
            head=f"{BOT}:tusk/fix",
            base="main",
        )
    assert "tusk/fix" in branches_of(local_github, f"{BOT}/widgets-renamed")
    forks = [e for e in local_github.journal() if e["path"].endswith("/forks")]
    assert forks == []  # found, not forked again


async def test_a_new_fork_named_name_1_is_the_one_pushed_to(
    start_mcp, local_github, tmp_path
) -> None:
    local_github.load(with_repos(UNRELATED))
    work = make_workspace(local_github, tmp_path)
    running = start_mcp(workspace=work)
    async with agent_session(running.url) as agent:
        text = await agent.ok("push_branch", branch="tusk/fix")
        assert f"{BOT}/widgets-1" in text
        git(["commit", "--quiet", "--allow-empty", "-m", "more"], work)
        await agent.ok("push_branch", branch="tusk/fix")  # the second push finds widgets-1
        fork = json.loads(await agent.ok("get_my_fork", repo="alice/widgets"))
        assert fork["fork"]["full_name"] == f"{BOT}/widgets-1"
    assert "tusk/fix" in branches_of(local_github, f"{BOT}/widgets-1")
    assert "tusk/fix" not in branches_of(local_github, f"{BOT}/widgets")
    forks = [e for e in local_github.journal() if e["path"].endswith("/forks")]
    assert len(forks) == 1


async def test_a_slow_fork_is_waited_for_as_long_as_configured_with_backoff(
    start_mcp, local_github, tmp_path
) -> None:
    world = scenario()
    world["settings"] = {"fork_ready_after_reads": 1000}  # never ready within the wait
    local_github.load(world)
    work = make_workspace(local_github, tmp_path)
    waits: list[float] = []
    running = start_mcp(workspace=work, sleep=waits.append, agent={"fork_wait_seconds": 40})
    async with agent_session(running.url) as agent:
        text = await agent.refused("push_branch", "PUSH_FAILED", branch="tusk/fix")
    assert "not ready after 40 s" in text and "agent.fork_wait_seconds" in text
    assert waits[:6] == [0.5, 1.0, 2.0, 4.0, 8.0, 15.0]  # backoff, capped at 15 s
    assert sum(waits) == 40


async def test_the_fork_wait_defaults_to_five_minutes() -> None:
    settings = Settings.model_validate({"bot": BOT, "control_repo": "a/b", "allowed_users": ["a"]})
    assert settings.agent.fork_wait_seconds == 300


async def test_the_fork_wait_ends_on_the_clock_too() -> None:
    """With a clock that moves (a real one, here injected), the budget is spent by time
    even when the sleeps themselves are short: nothing waits past the configured wait."""
    from tusk.mcp.push.git_push import ForkWait

    now = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds + 10.0  # each look itself takes ten seconds

    wait = ForkWait(60.0, clock=lambda: now[0], sleep=sleep)
    looks = 0
    while wait.another("the fork is not ready"):
        looks += 1
    # Looks at 10.5, 21.5, 33.5, 47.5 and 65.5 s: the clock, not the 15.5 s slept, ends it.
    assert slept == [0.5, 1.0, 2.0, 4.0, 8.0] and looks == 5 and now[0] == 65.5
    assert "not ready after 60 s" in wait.gave_up
