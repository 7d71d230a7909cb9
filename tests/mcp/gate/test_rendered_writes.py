"""What GitHub will show, not what was sent: bodies that differ from their rendering,
through the real server over streamable HTTP. Each test checks the tool result, the local
GitHub's state and the audit record."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.mcp import github_view
from tests.mcp.mcp_harness import BOT, LOG_URL, agent_session
from tusk.audit import chain as audit

pytestmark = pytest.mark.anyio

KEY = "sk-ant-api03-" + "Q7x2Lm9Zp4Rt8Vb1Nc6Yd3Ke"


def comments(local_github: Any, number: int = 1) -> list[dict[str, Any]]:
    issue = local_github.state()["repos"]["alice/widgets"]["issues"][str(number)]
    return [c for c in issue["comments"] if c["author"] == BOT and "tusk:backlink" in c["body"]]


def last_record(running: Any) -> Any:
    return audit.read_records(running.audit_path)[-1]


@pytest.mark.parametrize(
    "at", ["&#64;", "&commat;", "&#x40;", "&#064;"], ids=["decimal", "named", "hex", "padded"]
)
async def test_entity_mentions_count_against_the_cap(start_mcp, local_github, at: str) -> None:
    running = start_mcp()
    body = " ".join(f"{at}u{n}" for n in range(1, 7))
    async with agent_session(running.url) as agent:
        text = await agent.refused(
            "create_comment", "LIMIT_EXCEEDED", repo="alice/widgets", number=1, body=body
        )
    assert "6 people as GitHub renders it" in text
    assert comments(local_github) == []
    record = last_record(running)
    assert (record.tool, record.decision, record.code) == (
        "create_comment",
        "refused",
        "LIMIT_EXCEEDED",
    )
    assert len(github_view.notified(body)) == 6  # what GitHub would have done


async def test_an_edit_cannot_add_entity_mentions_past_the_cap(start_mcp, local_github) -> None:
    running = start_mcp()
    async with agent_session(running.url) as agent:
        made = await agent.ok(
            "create_comment", repo="alice/widgets", number=1, body="cc @u1 @u2 @u3 @u4 @u5"
        )
        comment_id = int(re.search(r"comment id (\d+)", made).group(1))
        await agent.refused(
            "update_comment",
            "LIMIT_EXCEEDED",
            repo="alice/widgets",
            comment_id=comment_id,
            body="cc @u1 @u2 @u3 @u4 @u5 &#64;u6 &#64;u7",
        )
    [comment] = comments(local_github)
    assert comment["body"].startswith("cc @u1 @u2 @u3 @u4 @u5\n")
    assert last_record(running).decision == "refused"


async def test_an_entity_self_mention_is_neutralised(start_mcp, local_github) -> None:
    running = start_mcp()
    async with agent_session(running.url) as agent:
        await agent.ok(
            "create_comment",
            repo="alice/widgets",
            number=1,
            body=f"done, &#64;{BOT} and &commat;{BOT.upper()}",
        )
    [comment] = comments(local_github)
    assert BOT not in github_view.notified(comment["body"])
    assert comment["body"].startswith(f"done, {BOT} and {BOT.upper()}\n")
    assert last_record(running).decision == "allowed"


async def test_a_self_mention_that_would_still_show_is_refused(start_mcp, local_github) -> None:
    """An "@" parted from the name by a comment: GitHub's text nodes do not link it, but a
    reader sees "@tusk-bot"; the counting side refuses what it cannot neutralise."""
    running = start_mcp()
    async with agent_session(running.url) as agent:
        await agent.refused(
            "create_comment", "SELF_MENTION", repo="alice/widgets", number=1, body=f"@<!-- -->{BOT}"
        )
    assert comments(local_github) == []
    assert last_record(running).code == "SELF_MENTION"


@pytest.mark.parametrize(
    "body",
    [
        "key: sk-ant-api<b></b>03-Q7x2Lm9Zp4Rt8Vb1Nc6Yd3Ke",
        "key: sk-ant-<!-- x -->api03-Q7x2Lm9Zp4Rt8Vb1Nc6Yd3Ke",
        "key: sk&#45;ant-api03-Q7x2Lm9Zp4Rt8Vb1Nc6Yd3Ke",
        "key: sk-ant-**api03**-Q7x2Lm9Zp4Rt8Vb1Nc6Yd3Ke",
        "[docs](https://example.com/?k=sk-ant-api03-Q7x2Lm9Zp4Rt8Vb1Nc6Yd3Ke)",
    ],
    ids=["tag", "comment", "entity", "emphasis", "link"],
)
async def test_a_secret_split_by_markup_is_refused(start_mcp, local_github, body: str) -> None:
    running = start_mcp()
    async with agent_session(running.url) as agent:
        await agent.refused(
            "create_comment", "SECRET_IN_BODY", repo="alice/widgets", number=1, body=body
        )
        await agent.refused(
            "create_issue", "SECRET_IN_BODY", repo="alice/widgets", title="t", body=body
        )
    assert comments(local_github) == []
    assert len(local_github.state()["repos"]["alice/widgets"]["issues"]) == 3
    assert last_record(running).code == "SECRET_IN_BODY"


@pytest.mark.parametrize(
    "retry", ["Step 3\\. done", "Step 3. done <!-- -->", "Step *3.* done", "Step 3.&#32;done"]
)
async def test_a_duplicate_that_reads_the_same_is_refused(
    start_mcp, local_github, retry: str
) -> None:
    running = start_mcp()
    async with agent_session(running.url) as agent:
        await agent.ok("create_comment", repo="alice/widgets", number=1, body="Step 3. done")
        await agent.refused(
            "create_comment", "DUPLICATE_WRITE", repo="alice/widgets", number=1, body=retry
        )
    assert len(comments(local_github)) == 1
    assert last_record(running).code == "DUPLICATE_WRITE"


@pytest.mark.parametrize(
    "body",
    [
        "notes\n\n<!--",
        "notes <!-- x --> <!--",
        "<details>\n\nall of it",
        "<details><summary>a</summary>\n\n<details>\n\nnested",
        "```\nunclosed code",
        "~~~~\nunclosed tildes",
        "<pre>\nraw",
    ],
    ids=["comment", "comment-inline", "details", "nested-details", "fence", "tildes", "pre"],
)
async def test_what_would_hide_the_footer_is_closed(start_mcp, local_github, body: str) -> None:
    running = start_mcp()
    async with agent_session(running.url) as agent:
        await agent.ok("create_comment", repo="alice/widgets", number=1, body=body)
    [comment] = comments(local_github)
    assert github_view.shows_footer(comment["body"], bot=BOT, log_url=LOG_URL)
    assert last_record(running).decision == "allowed"


async def test_a_body_whose_footer_cannot_show_is_refused(start_mcp, local_github) -> None:
    running = start_mcp()
    async with agent_session(running.url) as agent:
        text = await agent.refused(
            "create_comment",
            "FOOTER_HIDDEN",
            repo="alice/widgets",
            number=1,
            body="<div hidden>\n\nx",
        )
    assert "close everything you open" in text
    assert comments(local_github) == []
    assert last_record(running).code == "FOOTER_HIDDEN"
