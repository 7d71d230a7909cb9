"""Live watch of Claude Code's stream-json output (MISSION A6).

Pure and fast: ``StreamWatch.feed`` takes one line of the stream and says
whether the supervisor must stop Claude Code now. It pairs every ``tool_use``
with its ``tool_result`` by id and counts consecutive identical calls with
identical results, over every tool (MCP and built-in alike). It also reads
the ``system/init`` event: the session id the continues resume, the tools
the session was given, and whether the MCP server connected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

StopKind = Literal[
    "loop", "mcp_loop", "mcp_not_connected", "timeout", "budget", "go_away", "stopped", "stalled"
]


@dataclass(frozen=True)
class StopReason:
    """Why the supervisor ended the session itself (Claude Code writes no result then)."""

    kind: StopKind
    reason: str


@dataclass
class StreamWatch:
    """State of one Claude Code session's stream, fed line by line."""

    loop_threshold: int
    server_name: str = "github"
    session_id: str | None = None
    init: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    events: int = 0
    tool_calls: int = 0
    stop: StopReason | None = None
    _pending: dict[str, tuple[str, str]] = field(default_factory=dict)
    _last_key: tuple[str, str, str, bool] | None = None
    _repeats: int = 0

    def feed(self, line: str) -> StopReason | None:
        """Consume one stream line; return a reason to stop, once, when one arises."""
        line = line.strip()
        if not line:
            return None
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            return None  # Claude Code prints only JSON lines; anything else is noise
        if not isinstance(event, dict):
            return None
        return self.feed_event(event)

    def feed_event(self, event: dict[str, Any]) -> StopReason | None:
        self.events += 1
        kind = event.get("type")
        found: StopReason | None = None
        if kind == "assistant":
            self._note_calls(event)
        elif kind == "user":
            found = self._note_results(event)
        elif kind == "system" and event.get("subtype") == "init":
            found = self._note_init(event)
        elif kind == "result":
            self.result = event
            self.session_id = event.get("session_id") or self.session_id
        if found is not None and self.stop is None:
            self.stop = found
            return found
        return None

    @property
    def tool_in_flight(self) -> bool:
        """A tool call whose result has not come back yet (its tool is still working)."""
        return bool(self._pending)

    @property
    def tools(self) -> list[str]:
        return list((self.init or {}).get("tools") or [])

    def server_tools(self) -> list[str]:
        """The MCP server's tools as the session named them (``mcp__github__*``)."""
        prefix = f"mcp__{self.server_name}__"
        return [name for name in self.tools if name.startswith(prefix)]

    def _note_init(self, event: dict[str, Any]) -> StopReason | None:
        self.init = event
        self.session_id = event.get("session_id") or self.session_id
        return check_server_connected(event, self.server_name)

    def _note_calls(self, event: dict[str, Any]) -> None:
        for block in _content(event):
            if block.get("type") == "tool_use":
                self.tool_calls += 1
                call_input = json.dumps(block.get("input"), sort_keys=True)
                self._pending[str(block.get("id"))] = (str(block.get("name")), call_input)

    def _note_results(self, event: dict[str, Any]) -> StopReason | None:
        for block in _content(event):
            if block.get("type") != "tool_result":
                continue
            call = self._pending.pop(str(block.get("tool_use_id")), None)
            if call is None:
                continue  # a result without its call (e.g. a resumed session's leftovers)
            key = (*call, canonical_result(block.get("content")), bool(block.get("is_error")))
            if key == self._last_key:
                self._repeats += 1
            else:
                self._last_key, self._repeats = key, 1
            if self._repeats >= self.loop_threshold:
                return StopReason(
                    "loop",
                    f"{self._repeats} consecutive identical calls to {call[0]} "
                    f"with identical results (loop threshold {self.loop_threshold})",
                )
        return None


def canonical_result(content: Any) -> str:
    """One string per tool result: content may be a string or a list of blocks."""
    if isinstance(content, str):
        return content
    return json.dumps(content, sort_keys=True)


def check_server_connected(init: dict[str, Any], server_name: str) -> StopReason | None:
    """A failed MCP server is not fatal to Claude Code; it is to a Tusk run."""
    servers = init.get("mcp_servers") or []
    status = next(
        (
            str(s.get("status"))
            for s in servers
            if isinstance(s, dict) and s.get("name") == server_name
        ),
        None,
    )
    if status == "connected":
        return None
    seen = status if status is not None else "absent from the session"
    return StopReason(
        "mcp_not_connected",
        f"the MCP server `{server_name}` is {seen} in Claude Code's init event, not connected; "
        "the agent would run without its GitHub tools",
    )


def _content(event: dict[str, Any]) -> list[dict[str, Any]]:
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict)]
