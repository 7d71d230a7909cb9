"""Faults on demand: statuses, latency and dropped connections by method, path and count.

A fault normally answers *instead of* GitHub: the request is not applied. With
``lands`` it answers *after* GitHub applied the request: the write happened
but its response is lost (a 5xx, a reset connection, or a delay past the
client's timeout). That is what GitHub does when a proxy or the network fails
between the API and the caller, and why every create must be checked for
before it is repeated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Fault:
    method: str
    path_pattern: str
    status: int | None = None
    count: int | None = 1  # None: every matching request
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False
    message: str | None = None
    lands: bool = False  # apply the request first, then lose its response
    body_pattern: str | None = None  # GraphQL has one route: tell a mutation by its body

    def matches(self, method: str, path: str, body: bytes = b"") -> bool:
        if self.method not in ("*", method.upper()) or not re.search(self.path_pattern, path):
            return False
        text = body.decode("utf-8", errors="replace")
        return self.body_pattern is None or re.search(self.body_pattern, text) is not None


def parse_fault(spec: Mapping[str, Any]) -> Fault:
    """A fault from its admin-API form; raises ValueError/KeyError/TypeError/re.error."""
    fault = Fault(
        method=str(spec.get("method", "*")).upper(),
        path_pattern=spec["path"],
        status=spec.get("status"),
        count=spec.get("count", 1),
        headers={str(k): str(v) for k, v in (spec.get("headers") or {}).items()},
        delay=float(spec.get("delay", 0)),
        drop=bool(spec.get("drop", False)),
        message=spec.get("message"),
        lands=bool(spec.get("lands", False)),
        body_pattern=spec.get("body"),
    )
    re.compile(fault.path_pattern)
    if fault.body_pattern is not None:
        re.compile(fault.body_pattern)
    return fault


def fault_message(status: int) -> str:
    if status in (403, 429):
        return (
            "You have exceeded a secondary rate limit. "
            "Please wait a few minutes before you try again."
        )
    if status >= 500:
        return "Server Error"
    return "injected fault"
