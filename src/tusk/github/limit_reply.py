"""The bot's answer on a thread whose mention is over a limit across runs.

A mention over ``limits.daily_budget_usd``, ``runs_per_requester`` or
``runs_per_repository`` is never lost silently: the bot replies on the thread,
once, saying which limit, what it stands at, when it resets and what happens
next (the mention waits for a later poll, or it is dropped and the requester
mentions the bot again). The reply carries a hidden ``limit`` marker with the
job id, the limit and the decision, so the next poll (which sees the thread
again while the mention waits) or a re-check in the run does not repeat it;
only the bot's own comments count. Issues and pull requests get an issue
comment over REST, discussions GraphQL's ``addDiscussionComment``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from tusk.contracts.limits import Refusal
from tusk.github.gateway import Gateway
from tusk.text.markers import first_marker, render_marker

Decision = Literal["wait", "drop"]
ADD_DISCUSSION_COMMENT = """
mutation Reply($discussion: ID!, $body: String!) {
  addDiscussionComment(input: {discussionId: $discussion, body: $body}) { comment { id url } }
}
"""


def reply_body(refusal: Refusal, *, jobid: str, bot: str, decision: Decision, go_away: str) -> str:
    """The reply's text: the limit in words, what happens next, the bot's footer."""
    marker = render_marker("limit", {"jobid": jobid, "limit": refusal.limit, "decision": decision})
    if decision == "wait":
        next_step = (
            "This mention waits: the bot picks it up by itself once the limit allows, "
            "with no need to mention it again."
        )
    else:
        next_step = "This mention is dropped: mention the bot again once the limit allows."
    return (
        f"{marker}\n⏸️ **Not started.** {refusal.sentence()}\n\n{next_step}\n\n---\n"
        # No "@" before the bot's name outside code: the reply must not mention the bot.
        f"<sub>🤖 {bot} · limits across runs are set in `tusk.yml` of the bot's control "
        f"repository · comment `@{bot} {go_away}` to remove the bot from your "
        "repositories</sub>\n"
    )


def replied(
    comments: Iterable[dict[str, Any]], *, bot: str, jobid: str, limit: str, decision: Decision
) -> bool:
    """Pure: the bot already gave this answer for this job on the thread."""
    for comment in comments:
        author = str((comment.get("user") or comment.get("author") or {}).get("login") or "")
        if author.lower() != bot.lower():
            continue
        marker = first_marker(str(comment.get("body") or ""), "limit") or {}
        if (marker.get("jobid"), marker.get("limit"), marker.get("decision")) == (
            jobid,
            limit,
            decision,
        ):
            return True
    return False


def post_reply(
    gateway: Gateway,
    *,
    repo: str,
    kind: str,
    number: int | None,
    discussion_node_id: str | None,
    body: str,
) -> str:
    """Post the reply on the thread; returns its URL. A lost answer is not repeated: the
    next look at the thread finds the reply by its marker (``replied``)."""
    if kind == "discussion":
        if not discussion_node_id:
            raise ValueError("a discussion reply needs the discussion's node id")
        data = gateway.graphql(
            ADD_DISCUSSION_COMMENT, {"discussion": discussion_node_id, "body": body}
        )
        comment = ((data.get("addDiscussionComment") or {}).get("comment")) or {}
        return str(comment.get("url") or "")
    if number is None:
        raise ValueError(f"a reply on a {kind} needs its number")
    answer = gateway.post(
        f"/repos/{repo}/issues/{number}/comments", json={"body": body}, may_repeat=False
    )
    return str(dict(answer.body).get("html_url") or "")
