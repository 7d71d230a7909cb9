"""Earlier turns put in front of the run's own conversation by the model proxy (C3).

A resumed run's earlier turns reach the model as messages the proxy adds to each
Messages request of the run's conversation, before its first message: Claude
Code itself never holds them, so nothing the agent writes (its session files, its
home) can add to them or change them. A request belongs to the conversation when
its first message is the run's own first prompt (``anchor``: its first line,
which Tusk writes); Claude Code's side requests (titles, quota checks) are left
as they are. Pure: ``PriorTurns.apply`` maps one request body to the body sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tusk.steps.run_claude.proxy.conversation import Turn


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict) and block.get("type") == "text"
        )
    return ""


@dataclass(frozen=True)
class PriorTurns:
    """The earlier turns, alternating user and assistant, and the run's first line."""

    turns: tuple[Turn, ...]
    anchor: str

    def messages(self) -> list[dict[str, Any]]:
        return [
            {"role": turn.role, "content": [{"type": "text", "text": turn.text}]}
            for turn in self.turns
        ]

    def applies_to(self, messages: Sequence[Any]) -> bool:
        if not self.turns or not self.anchor or not messages:
            return False
        first = messages[0]
        return (
            isinstance(first, dict)
            and first.get("role") == "user"
            and self.anchor in _text_of(first.get("content"))
        )

    def apply(self, body: bytes) -> bytes:
        """``body`` with the earlier turns before its messages, when it is one of the
        run's conversation; any other body as it came."""
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            return body
        messages = data.get("messages") if isinstance(data, dict) else None
        if not isinstance(messages, list) or not self.applies_to(messages):
            return body
        data["messages"] = [*self.messages(), *messages]
        return json.dumps(data, ensure_ascii=False).encode("utf-8")
