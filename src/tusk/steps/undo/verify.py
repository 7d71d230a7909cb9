"""undo's verification: the request read back from GitHub.

The dispatch payload is only as trustworthy as whoever holds a dispatch token,
and undo deletes and closes things: so the comment it names is fetched inside
``request.repo`` and must exist, be the actor's and say ``@bot undo``. Whether
the actor may undo the run is decided later, once the run and what it touched
are known, on rights GitHub confirms (``tusk.github.rights``); the comment's
``author_association`` is never read for it. Undo works on issues and pull
requests; a discussion is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tusk.contracts.models import UndoRequest
from tusk.errors import UserError
from tusk.github.gateway import Gateway, NotFound
from tusk.text.commands import asks_to_undo

THREAD_IN_URL = re.compile(r"/(?:issues|pull)/(?P<number>\d+)(?:$|[/#?])")
REST_ID = re.compile(r"\d{1,20}")
FORGED_HINT = (
    "Nothing was undone. The poller dispatches undo only for a comment that says it; "
    "check who can send repository_dispatch to the control repository."
)


@dataclass(frozen=True)
class VerifiedUndo:
    request: UndoRequest
    thread: int  # the issue or pull request number


def _refuse(request: UndoRequest, why: str) -> UserError:
    return UserError(
        f"the undo request {request.comment_url} cannot be verified: {why}", FORGED_HINT
    )


def _comment(gateway: Gateway, request: UndoRequest) -> dict[str, Any]:
    base, ident = f"/repos/{request.repo}", request.comment_id
    paths = {
        "issue_comment": f"{base}/issues/comments/{ident}",
        "review_comment": f"{base}/pulls/comments/{ident}",
        "issue_body": f"{base}/issues/{ident}",
        "pull_request_body": f"{base}/issues/{ident}",
    }
    if request.comment_type not in paths:
        raise _refuse(
            request, f"undo works on issues and pull requests, not a {request.comment_type}"
        )
    if not REST_ID.fullmatch(ident):
        raise _refuse(request, f"{ident!r} is not a REST id")
    try:
        return dict(gateway.get(paths[request.comment_type]))
    except NotFound as error:
        raise _refuse(
            request, f"GitHub has no such {request.comment_type} in {request.repo}"
        ) from error


def verify(gateway: Gateway, request: UndoRequest, *, bot: str) -> VerifiedUndo:
    found = _comment(gateway, request)
    author = str((found.get("user") or {}).get("login") or "")
    if author.lower() != request.actor.lower():
        raise _refuse(request, f"it was written by `{author or 'ghost'}`, not `{request.actor}`")
    if not asks_to_undo(str(found.get("body") or ""), bot=bot):
        raise _refuse(request, f"it does not say `@{bot} undo` (any more)")
    url = str(found.get("html_url") or request.comment_url)
    match = THREAD_IN_URL.search(url)
    if match is None:
        raise _refuse(request, "its URL names no issue or pull request")
    return VerifiedUndo(
        request=request.model_copy(update={"comment_url": url}), thread=int(match.group("number"))
    )
