"""Writes the agent could repeat or vary to escape the per-post limits, through the real
server over streamable HTTP; each test checks the tool result and the local GitHub's state."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.mcp.mcp_harness import agent_session
from tusk.audit import chain as audit

pytestmark = pytest.mark.anyio


def comment_body(local_github: Any, comment_id: int, repo: str = "alice/widgets") -> str:
    return local_github.gateway("alice").get(f"/repos/{repo}/issues/comments/{comment_id}")["body"]


def comment_id_of(text: str) -> int:
    return int(re.search(r"comment id (\d+)", text).group(1))


async def test_a_comment_is_edited_at_most_n_times_per_run(start_mcp, local_github) -> None:
    """A loop that varies its text escapes the identical-call detector; the edit cap does not."""
    running = start_mcp(limits={"edits_per_comment": 3})
    async with agent_session(running.url) as agent:
        made = await agent.ok("create_comment", repo="alice/widgets", number=1, body="v0")
        comment_id = comment_id_of(made)
        for version in (1, 2, 3):
            await agent.ok(
                "update_comment", repo="alice/widgets", comment_id=comment_id, body=f"v{version}"
            )
        text = await agent.refused(
            "update_comment",
            "LIMIT_EXCEEDED",
            repo="alice/widgets",
            comment_id=comment_id,
            body="v4",
        )
        assert "edited 3 time(s)" in text
    assert comment_body(local_github, comment_id).startswith("v3")
    decisions = [(r.tool, r.decision) for r in audit.read_records(running.audit_path)]
    assert decisions[-1] == ("update_comment", "refused")


async def test_edits_cannot_notify_more_people_than_one_post(start_mcp, local_github) -> None:
    """Each version mentioning five new people would notify them all: the cap holds over the
    comment's whole life in the run."""
    running = start_mcp(limits={"edits_per_comment": 5})
    start = len(local_github.journal())
    async with agent_session(running.url) as agent:
        made = await agent.ok(
            "create_comment", repo="alice/widgets", number=1, body="cc @ann @ben @cat"
        )
        comment_id = comment_id_of(made)
        # The same people again, and one more: still five over its life.
        await agent.ok(
            "update_comment",
            repo="alice/widgets",
            comment_id=comment_id,
            body="cc @ann @ben @cat @dan @eve",
        )
        text = await agent.refused(
            "update_comment",
            "LIMIT_EXCEEDED",
            repo="alice/widgets",
            comment_id=comment_id,
            body="now @fay",
        )
        assert "its earlier versions mentioned" in text
    assert comment_body(local_github, comment_id).startswith("cc @ann @ben @cat @dan @eve")
    patches = [e for e in local_github.journal()[start:] if e["method"] == "PATCH"]
    assert len(patches) == 1  # the refused edit never reached GitHub


async def test_a_run_has_a_total_write_cap_across_repositories(start_mcp, local_github) -> None:
    running = start_mcp(limits={"writes_per_run": 3}, agent={"write_repos": ["bob/gadgets"]})
    before = local_github.state()["repos"]["bob/gadgets"]["issues"]
    async with agent_session(running.url) as agent:
        await agent.ok("create_comment", repo="alice/widgets", number=1, body="one")
        await agent.ok("create_comment", repo="alice/widgets", number=2, body="two")
        await agent.ok("create_comment", repo="bob/gadgets", number=1, body="three")
        text = await agent.refused(
            "create_issue", "LIMIT_EXCEEDED", repo="bob/gadgets", title="four", body="b"
        )
        assert "across all repositories (3)" in text
        await agent.ok("history", text="commented three times, then hit the write cap")
    assert local_github.state()["repos"]["bob/gadgets"]["issues"].keys() == before.keys()


# --------------------------------------------------------------------------- go-away in flight


def go_away(local_github: Any, repo: str) -> None:
    """What the go-away workflow does to the blocklist, with the bot's token."""
    from datetime import UTC, datetime

    from tests.mcp.mcp_harness import AGENT_TOKEN, settings
    from tusk.contracts.models import BlockedRepo, Blocklist
    from tusk.issues.state import StateStore

    entry = BlockedRepo(repo=repo, by="alice", at=datetime(2026, 1, 1, tzinfo=UTC))
    StateStore(local_github.gateway(AGENT_TOKEN), settings()).update_blocklist(
        lambda old: Blocklist(repos=(*old.repos, entry), users=old.users)
    )


def blocklist_probes(local_github: Any, start: int) -> list[int]:
    """Statuses of the server's checks of the blocklist issues since ``start``."""
    return [
        e["status"]
        for e in local_github.journal()[start:]
        if e["method"] == "GET"
        and e["path"] == "/repos/alice/tusk-control/issues"
        and "tusk-blocklist" in json.dumps(e.get("query") or e.get("params") or e.get("path"))
    ]


async def test_a_go_away_during_the_run_stops_its_further_writes(start_mcp, local_github) -> None:
    from tests.mcp.mcp_harness import ManualClock

    go_away(local_github, "bob/unrelated")  # a blocklist issue exists before the run
    clock = ManualClock()
    running = start_mcp(clock=clock, agent={"write_repos": ["bob/gadgets"]})
    async with agent_session(running.url) as agent:
        await agent.ok("create_comment", repo="alice/widgets", number=1, body="working on it")
        start = len(local_github.journal())
        clock.now = 31  # the last check is older than 30 s: asked again, unchanged
        await agent.ok("create_comment", repo="bob/gadgets", number=1, body="a question")
        assert blocklist_probes(local_github, start) == [304]  # free, not a full read
        go_away(local_github, "alice/widgets")  # alice sends the bot away mid-run
        before = {n: comment_count(local_github, n) for n in (1, 2)}
        clock.now = 62
        text = await agent.refused(
            "create_comment", "BLOCKED_TARGET", repo="alice/widgets", number=2, body="done"
        )
        assert "while this run was working" in text
        # Not elsewhere either: the run is over.
        await agent.refused(
            "create_comment", "BLOCKED_TARGET", repo="bob/gadgets", number=1, body="more"
        )
        await agent.ok("history", text="stopped: the repository sent the bot away")
    assert {n: comment_count(local_github, n) for n in (1, 2)} == before
    stop = json.loads((running.run_dir / "go-away.json").read_text())
    assert stop["repo"] == "alice/widgets"
    refused = [r for r in audit.read_records(running.audit_path) if r.decision == "refused"]
    assert [r.code for r in refused] == ["BLOCKED_TARGET", "BLOCKED_TARGET"]


async def test_the_blocklist_is_reused_for_at_most_30_seconds(start_mcp, local_github) -> None:
    from tests.mcp.mcp_harness import ManualClock

    clock = ManualClock()
    running = start_mcp(clock=clock)
    async with agent_session(running.url) as agent:
        start = len(local_github.journal())
        clock.now = 5
        await agent.ok("create_comment", repo="alice/widgets", number=1, body="one")
        clock.now = 29
        await agent.ok("create_comment", repo="alice/widgets", number=2, body="two")
        assert blocklist_probes(local_github, start) == []  # checked at start, 29 s ago
        go_away(local_github, "bob/gadgets")
        clock.now = 30
        await agent.refused(
            "create_comment", "BLOCKED_TARGET", repo="bob/gadgets", number=1, body="three"
        )
    # Another repository's go-away refuses writes there, and the run goes on.
    assert not (running.run_dir / "go-away.json").exists()


def comment_count(local_github: Any, number: int, repo: str = "alice/widgets") -> int:
    return len(local_github.gateway("alice").get(f"/repos/{repo}/issues/{number}/comments"))


# --------------------------------------------------------------------------- markers


async def test_a_full_width_marker_narrows_the_run_like_its_ascii_twin(
    start_mcp, local_github
) -> None:
    """［permissions： no-issue，comment-limit＝1］ typed with a CJK input method used to be
    ignored, leaving the run the defaults."""
    from tests.mcp.mcp_harness import BOT, settings
    from tusk.poller.permissions import effective_permissions

    marker = f"@{BOT} ［permissions： no-issue，comment-limit＝1］ fix it"
    running = start_mcp(permissions=effective_permissions(settings().default_permissions(), marker))
    before = local_github.state()["repos"]["alice/widgets"]["issues"].keys()
    async with agent_session(running.url) as agent:
        await agent.refused(
            "create_issue", "PERMISSION_DENIED", repo="alice/widgets", title="t", body="b"
        )
        await agent.ok("create_comment", repo="alice/widgets", number=1, body="one")
        await agent.refused(
            "create_comment", "LIMIT_EXCEEDED", repo="alice/widgets", number=1, body="two"
        )
    assert local_github.state()["repos"]["alice/widgets"]["issues"].keys() == before
    assert comment_count(local_github, 1) == 3  # two from the scenario, one from the run


async def test_a_marker_look_alike_fails_closed(start_mcp, local_github) -> None:
    from tests.mcp.mcp_harness import BOT, settings
    from tusk.poller.permissions import effective_permissions

    permissions = effective_permissions(
        settings().default_permissions(), f"@{BOT} 【permissions: no-pr】 fix it"
    )
    assert permissions.error and "square brackets" in permissions.error
    running = start_mcp(permissions=permissions)
    async with agent_session(running.url) as agent:
        await agent.refused(
            "create_comment", "PERMISSION_DENIED", repo="alice/widgets", number=2, body="x"
        )
        await agent.ok("create_comment", repo="alice/widgets", number=1, body="one reply")
        await agent.refused("memory", "PERMISSION_DENIED", text="a lesson")
    assert comment_count(local_github, 2) == 0


async def test_mentions_after_emphasis_are_capped_and_self_mentions_neutralised(
    start_mcp, local_github
) -> None:
    """``_x_@user1`` renders as ``<em>x</em>@user1``, where GitHub links the mention: six
    of them are refused by the cap, and ``_a_@bot`` is posted without its '@'."""
    from tests.mcp.mcp_harness import BOT

    running = start_mcp()
    start = len(local_github.journal())
    async with agent_session(running.url) as agent:
        body = " ".join(f"_x_@user{n}" for n in range(1, 7))
        await agent.refused(
            "create_comment", "LIMIT_EXCEEDED", repo="alice/widgets", number=1, body=body
        )
        assert [e for e in local_github.journal()[start:] if e["method"] != "GET"] == []
        made = await agent.ok(
            "create_comment", repo="alice/widgets", number=1, body=f"_a_@{BOT} done"
        )
    posted = comment_body(local_github, comment_id_of(made))
    assert posted.startswith(f"_a_{BOT} done")
    assert f"@{BOT} done" not in posted


async def test_a_bot_login_with_brackets_or_in_capitals_never_mentions_the_bot(
    start_mcp, local_github
) -> None:
    """GitHub ends a login at "[" and ignores case: ``@tusk-bot[bot]`` and ``@TUSK-BOT``
    both notify tusk-bot, so both are posted without their '@'."""
    import github_view
    from mcp_harness import BOT

    running = start_mcp()
    async with agent_session(running.url) as agent:
        made = await agent.ok(
            "create_comment",
            repo="alice/widgets",
            number=1,
            body=f"thanks @{BOT}[bot] and @{BOT.upper()}, and @bob",
        )
    posted = comment_body(local_github, comment_id_of(made))
    assert posted.startswith(f"thanks {BOT}[bot] and {BOT.upper()}, and @bob")
    assert github_view.notified(posted) == {"bob"}
