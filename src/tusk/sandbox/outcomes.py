"""What the local GitHub answers: a status, headers and bytes, built from a handler's reply."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tusk.sandbox.rest import Reply
from tusk.sandbox.world import SandboxError

DOCS = "https://docs.github.com/rest"
DROP = object()  # answer by closing the connection (a fault)
NO_BODY = (204, 205, 304)


@dataclass
class Outcome:
    status: int
    headers: dict[str, str]
    body: bytes


def error_reply(error: SandboxError) -> Reply:
    body: dict[str, Any] = {
        "message": error.message,
        "documentation_url": DOCS,
        "status": str(error.status),
    }
    if error.errors:
        body["errors"] = error.errors
    if "url" in error.extra:  # 301 Moved Permanently: where the object lives now
        # GitHub's redirect body is message, url and documentation_url only (recorded:
        # @octokit/fixtures rename-repository).
        body = {"message": error.message, "url": error.extra["url"], "documentation_url": DOCS}
        return Reply(error.status, body, {"Location": str(error.extra["url"])})
    return Reply(error.status, body)


def json_outcome(status: int, body: Any, headers: Mapping[str, str] | None = None) -> Outcome:
    data = b"" if body is None or status in NO_BODY else json.dumps(body).encode()
    out = {"Content-Type": "application/json; charset=utf-8", **(headers or {})}
    return Outcome(status, out, data)


def reply_outcome(reply: Reply) -> Outcome:
    if reply.status in NO_BODY or reply.body is None:
        data = b""
    elif isinstance(reply.body, bytes):
        data = reply.body
    elif isinstance(reply.body, str) and not reply.content_type.startswith("application/json"):
        data = reply.body.encode()
    else:
        data = json.dumps(reply.body).encode()
    headers = dict(reply.headers)
    if data or reply.status not in NO_BODY:
        headers.setdefault("Content-Type", reply.content_type)
    return Outcome(reply.status, headers, data)
