"""The MCP server named ``github``: lists the tools and handles every call (M1, M10).

One handler for every call, as mcp-server-git has it, on the SDK's low-level ``Server``:
each call meets the pass gate first (``Runtime.pass_refusal``), then its
arguments are checked against the tool's model, once, and the tool's plain
functions run through ``Runtime.read`` or ``Runtime.write``. A call turned
away before any tool ran (a tool that does not exist, such as a review;
arguments of the wrong shape) is on the audit record too. Refusals reach the
model as error results whose text starts with the refusal code.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial
from typing import Any

from mcp.server.lowlevel import Server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)
from mcp.types import Tool as ListedTool
from pydantic import BaseModel, ValidationError

from tusk.mcp.gate.recorder import Kind, ToolError
from tusk.mcp.push.git_push import Pusher
from tusk.mcp.reads.reader import Reader
from tusk.mcp.server.catalog import Tool, offered
from tusk.mcp.server.runtime import Runtime

logger = logging.getLogger(__name__)

SERVER_NAME = "github"

INSTRUCTIONS = (
    "These tools are your only access to GitHub. Reads use a read-only token and are "
    "rate-limited; writes are checked against this run's policy (limits per thread and "
    "repository, no duplicate writes, no edits of other people's content, no reviews) and "
    "recorded. A refused call returns an error starting with a code such as LIMIT_EXCEEDED or "
    "DUPLICATE_WRITE and the reason: read it, do not retry the same call, adapt or report."
)


def error_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


class GitHubServer:
    """This run's tools over one ``Runtime``; ``lowlevel`` is the SDK server that serves them."""

    def __init__(self, runtime: Runtime, *, pusher: Pusher | None = None) -> None:
        self.runtime = runtime
        if pusher is not None:  # push_branch prepares and sends through the runtime
            runtime.pusher = pusher
        self.tools = offered(runtime.config)
        self.reader = Reader(runtime.read_gateway, runtime.scope, runtime.config.bot)
        self.listing = ListToolsResult(
            tools=[
                ListedTool(
                    name=tool.name,
                    description=tool.describe(runtime.config),
                    input_schema=tool.args.model_json_schema(),
                    annotations=tool.annotations,
                )
                for tool in self.tools.values()
            ]
        )
        self.lowlevel: Server[Any] = Server(
            SERVER_NAME,
            instructions=INSTRUCTIONS,
            on_list_tools=self._on_list_tools,
            on_call_tool=self._on_call_tool,
        )
        # The SDK wraps each message in an OpenTelemetry span; no run installs a tracer, and
        # the audit log records every call, so the SDK's documented opt-out is taken: the
        # span was a tenth of the server's own time per call.
        self.lowlevel.middleware.clear()

    async def _on_list_tools(
        self, ctx: Any, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return self.listing

    async def _on_call_tool(self, ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        return await self.call_tool(params.name, params.arguments or {})

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> CallToolResult:
        """One call, as the model made it."""
        refusal = self.runtime.pass_refusal(name, arguments)
        if refusal is not None:
            return error_result(refusal)
        tool = self.tools.get(name)
        if tool is None:
            reason = f"no tool named {name!r} (no reviews, no generic API calls)"
            self.runtime.record_rejected(name, arguments, reason, kind="write", known=False)
            return error_result(f"Unknown tool: {name}")
        try:
            args = tool.args.model_validate(arguments)
        except ValidationError as error:
            # not pydantic's text in the audit: it quotes the rejected values
            reason = "arguments do not match the tool's parameters"
            kind: Kind = "read" if tool.fetch is not None else "write"
            self.runtime.record_rejected(name, arguments, reason, kind=kind, known=True)
            return error_result(f"Error executing tool {name}: {error}")
        try:
            text = await self._run(tool, args)
        except ToolError as refused:  # refusals and failures, recorded and redacted
            return error_result(str(refused))
        except Exception:
            logger.exception("tool %s raised outside the runtime", name)
            return error_result(f"Error executing tool {name}")
        return CallToolResult(content=[TextContent(type="text", text=text)])

    async def _run(self, tool: Tool, args: BaseModel) -> str:
        rt, plain = self.runtime, args.model_dump()
        if tool.fetch is not None:
            return await rt.read(tool.name, plain, partial(tool.fetch, self.reader, args))
        if tool.prepare is not None and tool.send is not None:
            prepare, send = partial(tool.prepare, rt, args), partial(tool.send, rt, args)
            return await rt.write(tool.name, plain, prepare=prepare, send=send)
        raise TypeError(f"tool {tool.name} has nothing to run")
