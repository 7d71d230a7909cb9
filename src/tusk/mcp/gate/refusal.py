"""A refusal: what the server says when the policy does not allow a call (MISSION M10).

The codes are stable: Claude Code reads them, the audit records them, and the
README lists them.
"""

from __future__ import annotations

from typing import Literal

RefusalCode = Literal[
    "LIMIT_EXCEEDED",
    "DUPLICATE_WRITE",
    "FORBIDDEN_OPERATION",
    "BLOCKED_TARGET",
    "PERMISSION_DENIED",
    "SECRET_IN_BODY",
    "SELF_MENTION",
    "FOOTER_HIDDEN",
    "RATE_LIMITED",
    "LOOP_DETECTED",
    "OUT_OF_SCOPE",
    "INVALID_PUSH",
    "STOPPED",
]


class Refused(Exception):
    """A write (or read) the policy does not allow. ``str()`` is what the model reads."""

    def __init__(self, code: RefusalCode, reason: str) -> None:
        self.code = code
        self.reason = reason
        super().__init__(f"{code}: {reason}")
