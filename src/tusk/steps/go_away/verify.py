"""go-away's verification: the request, read back from GitHub before anything is done.

A ``repository_dispatch`` payload is only as trustworthy as whoever holds a
dispatch token, and it decides what gets blocked and deleted; so the comment
it names is fetched inside ``request.repo`` (REST for issues and pull
requests, GraphQL for discussions) and must exist, be the actor's and say
``@bot <phrase>``. Anything else refuses the whole request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tusk.contracts.models import GoAwayRequest
from tusk.errors import UserError
from tusk.github.gateway import Gateway, NotFound
from tusk.steps.go_away.plan import NUMBER_IN_URL_RE, login_of
from tusk.text.commands import asks_to_leave

DISCUSSION_IN_URL_RE = re.compile(r"/discussions/(?P<number>\d+)(?:$|[/#?])")
REST_ID_RE = re.compile(r"\d{1,20}")

DISCUSSION_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    discussion(number: $number) {
      id url body author { login } authorAssociation
      comments(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id url body author { login } authorAssociation
          replies(first: 100) { nodes { id url body author { login } authorAssociation } }
        }
      }
    }
  }
}
"""


FORGED_HINT = (
    "Nothing was blocked or deleted. The poller dispatches go-away only for a comment "
    "that says it; check who can send repository_dispatch to the control repository."
)


def _refuse(request: GoAwayRequest, why: str) -> UserError:
    return UserError(
        f"the go-away request {request.comment_url or request.comment_id} cannot be verified: "
        f"{why}",
        FORGED_HINT,
    )


def _number(request: GoAwayRequest, pattern: re.Pattern[str]) -> int:
    match = pattern.search(request.comment_url)
    if not match:
        raise _refuse(request, "its URL names no issue, pull request or discussion number")
    return int(match.group("number"))


def _fetch_rest(gateway: Gateway, request: GoAwayRequest) -> Mapping[str, Any]:
    if not REST_ID_RE.fullmatch(request.comment_id):
        raise _refuse(request, f"{request.comment_id!r} is not a REST id")
    base, kind, ident = f"/repos/{request.repo}", request.comment_type, request.comment_id
    paths = {
        "issue_comment": f"{base}/issues/comments/{ident}",
        "review_comment": f"{base}/pulls/comments/{ident}",
        "issue_body": f"{base}/issues/{ident}",
        "pull_request_body": f"{base}/issues/{ident}",
    }
    path = paths.get(kind) or (f"{base}/pulls/{_number(request, NUMBER_IN_URL_RE)}/reviews/{ident}")
    found = gateway.get(path)
    return {
        "author": login_of(found),
        "body": found.get("body"),
        "url": found.get("html_url"),
        "association": found.get("author_association"),
    }


def _fetch_discussion(gateway: Gateway, request: GoAwayRequest) -> Mapping[str, Any] | None:
    owner, name = request.repo.split("/", 1)
    variables: dict[str, Any] = {
        "owner": owner,
        "name": name,
        "number": _number(request, DISCUSSION_IN_URL_RE),
        "after": None,
    }
    while True:
        data = gateway.graphql(DISCUSSION_QUERY, variables)
        discussion = ((data.get("repository") or {}).get("discussion")) or None
        if discussion is None:
            return None
        if request.comment_type == "discussion_body":
            nodes = [discussion]
        else:
            comments = discussion["comments"]
            nodes = [
                node
                for comment in comments["nodes"]
                for node in [comment, *((comment.get("replies") or {}).get("nodes") or [])]
            ]
        for node in nodes:
            if node.get("id") == request.comment_id:
                author = (node.get("author") or {}).get("login")
                return {
                    "author": author,
                    "body": node.get("body"),
                    "url": node.get("url"),
                    "association": node.get("authorAssociation"),
                }
        page = (
            discussion["comments"]["pageInfo"] if request.comment_type != "discussion_body" else {}
        )
        if not page.get("hasNextPage"):
            return None
        variables["after"] = page["endCursor"]


class Verified(BaseModel):
    model_config = ConfigDict(extra="forbid")

    """A go-away request as GitHub confirmed it."""

    request: GoAwayRequest
    author_association: str | None = Field(
        default=None, description="the comment's author_association, as GitHub shows it"
    )


def verify(gateway: Gateway, request: GoAwayRequest, *, bot: str, phrase: str) -> Verified:
    """The request, checked against GitHub: ``actor`` really wrote ``@bot <phrase>`` there.

    Returns the request with GitHub's own URL of the comment, and the comment's
    ``author_association`` (the scope's fallback; the payload's own trust level
    is never believed). Raises ``UserError`` when it cannot be verified.
    """
    try:
        if request.comment_type.startswith("discussion"):
            found = _fetch_discussion(gateway, request)
        else:
            found = _fetch_rest(gateway, request)
    except NotFound:
        found = None
    if found is None:
        raise _refuse(request, f"GitHub has no such {request.comment_type} in {request.repo}")
    author = str(found.get("author") or "")
    if author.lower() != request.actor.lower():
        raise _refuse(request, f"it was written by `{author or 'ghost'}`, not `{request.actor}`")
    if not asks_to_leave(str(found.get("body") or ""), bot=bot, phrase=phrase):
        raise _refuse(request, f"it does not say `@{bot} {phrase}` (any more)")
    url = found.get("url")
    confirmed = request.model_copy(update={"comment_url": str(url)}) if url else request
    association = found.get("association")
    return Verified(request=confirmed, author_association=str(association) if association else None)
