"""What the model proxy lets the model API reach for the agent. Pure.

Behind the network fence the model API must not reach the network on the
agent's behalf either: a request naming MCP connector servers, a server tool
that fetches or searches the web, or a content block the API would fetch from
a URL is refused. The body is read with unique keys: with a key twice, the API
might read the copy the guard did not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from starlette.responses import JSONResponse

# Tool types the model API runs without reaching the network: tools Claude Code
# runs itself (custom ones have no type) and server tools that stay inside the API.
CONTAINED_TOOL_TYPES = (
    "custom",
    "bash_",
    "text_editor_",
    "computer_",
    "memory_",
    "tool_search_tool_",
    "advisor_",
)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are unique: with a key twice, the API might read the
    copy the guard did not."""
    keys = [key for key, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("a key appears twice in one object")
    return dict(pairs)


def network_reach(data: Any, *, web_search: bool) -> str | None:
    """What in a Messages API request would make the API reach the network, or None."""
    if not isinstance(data, dict):
        return None  # not a request the API accepts
    if data.get("mcp_servers"):
        return "mcp_servers (the API would connect to the MCP servers it names)"
    tools = data.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        kind = tool.get("type") if isinstance(tool, dict) else None
        if not isinstance(kind, str) or kind.startswith(CONTAINED_TOOL_TYPES):
            continue
        if web_search and kind.startswith("web_search_"):
            continue  # WebSearch is one of the run's tools, its host allowed
        return f"the server tool {kind[:60]!r} (the API would run it and reach the network)"
    stack: list[Any] = [data.get("messages"), data.get("system")]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            source = item.get("source")
            if isinstance(source, dict) and source.get("type") == "url":
                url = str(source.get("url"))[:100]
                return f"a block whose source is a URL ({url!r}): the API would fetch it"
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


@dataclass
class RequestGuard:
    """What the proxy lets the model API reach for the agent: nothing while the run is
    fenced (web search only when WebSearch is one of its tools); anything once open."""

    fenced: bool = True
    web_search: bool = False

    def problem(self, body: bytes) -> str | None:
        if not self.fenced:
            return None
        try:
            data = json.loads(body or b"{}", object_pairs_hook=_unique_keys)
        except (ValueError, RecursionError):
            return "a body that is not plain JSON (the proxy reads every request it forwards)"
        return network_reach(data, web_search=self.web_search)


def guard_refusal(problem: str) -> JSONResponse:
    return _answer(
        400,
        "invalid_request_error",
        f"the model proxy refuses {problem}. Behind the network fence the model API "
        "may not reach the network for the agent either; agent.network: open allows it",
    )


def _answer(status: int, kind: str, message: str) -> JSONResponse:
    """An error in the Messages API's own shape, so Claude Code reports it plainly."""
    return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status)
