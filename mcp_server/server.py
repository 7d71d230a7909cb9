"""The MCP server named ``github``: the agent's only road to GitHub (MISSION M1-M13, T4).

``build_runtime`` turns settings, the context document and the run's
metadata into the per-run machinery; ``build_server`` registers the tools on
an ``MCPServer``; ``serve`` runs it over streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import hmac
import json
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import SecretStr
from tusk.mcp_server import read_tools, write_tools
from tusk.mcp_server.agent_git import BundleSource
from tusk.mcp_server.blocklist_watch import BlocklistWatch, listing_probe
from tusk.mcp_server.git_push import Pusher
from tusk.mcp_server.loops import LoopDetector
from tusk.mcp_server.policy import PolicyConfig
from tusk.mcp_server.read_scope import ReadScope, collaborators_of, run_repositories
from tusk.mcp_server.runtime import Runtime
from tusk.mcp_server.throttle import SlidingWindow

from tusk.config import Settings
from tusk.contracts import Blocklist, ContextDocument, PermissionConfig
from tusk.github import Gateway
from tusk.neutralise import Trust

SERVER_NAME = "github"
MCP_PATH = "/mcp"

INSTRUCTIONS = (
    "These tools are your only access to GitHub. Reads use a read-only token and are "
    "rate-limited; writes are checked against this run's policy (limits per thread and "
    "repository, no duplicate writes, no edits of other people's content, no reviews) and "
    "recorded. A refused call returns an error starting with a code such as LIMIT_EXCEEDED or "
    "DUPLICATE_WRITE and the reason: read it, do not retry the same call, adapt or report."
)


def narrowed_permissions(permissions: PermissionConfig, settings: Settings) -> PermissionConfig:
    """The context's permissions, never looser than this installation's limits.

    A marker can only narrow the defaults; capping here too means a context
    document built with older or looser settings cannot widen them.
    """
    limits = settings.limits
    return permissions.model_copy(
        update={
            "comments_per_thread": min(permissions.comments_per_thread, limits.comments_per_thread),
            "issues_per_repo": min(permissions.issues_per_repo, limits.issues_per_repo),
            "prs_per_repo": min(permissions.prs_per_repo, limits.prs_per_repo),
            "memory_writes": min(permissions.memory_writes, limits.memory_writes_per_run),
        }
    )


def policy_config(
    settings: Settings, context: ContextDocument, *, log_issue_url: str, blocklist: Blocklist
) -> PolicyConfig:
    return PolicyConfig(
        bot=settings.bot,
        jobid=context.jobid,
        control_repo=settings.control_repo,
        trigger_repo=context.repo,
        trigger_number=context.trigger.number,
        log_issue_url=log_issue_url,
        permissions=narrowed_permissions(context.permission_config, settings),
        blocklist=blocklist,
        go_away_phrase=settings.go_away.phrase,
        staged=settings.staged,
        discussions_write=settings.discussions_write,
        mentions_per_post=settings.limits.mentions_per_post,
        memory_entry_chars=settings.limits.memory_entry_chars,
        history_entry_chars=settings.limits.history_entry_chars,
        branch_prefix=settings.agent.branch_prefix,
        allow_workflow_changes=settings.agent.allow_workflow_changes,
        fork_wait_seconds=settings.agent.fork_wait_seconds,
        edits_per_comment=settings.limits.edits_per_comment,
        writes_per_run=settings.limits.writes_per_run,
    )


def read_scope(settings: Settings, context: ContextDocument) -> ReadScope:
    """The repositories the read tools serve this run, and whose text counts as trusted."""
    return ReadScope(
        trigger_repo=context.repo,
        control_repo=settings.control_repo,
        repos=run_repositories(context, allowed_users=settings.allowed_users),
        trigger_number=context.trigger.number,
        read_public=settings.agent.read_public,
        trust=Trust.of((*settings.allowed_users, settings.bot), collaborators_of(context.raw)),
        bot=settings.bot,
    )


def blocklist_watch(settings: Settings, read_gateway: Gateway) -> BlocklistWatch:
    """The blocklist, read now and checked again before writes (M7, G4)."""
    from tusk.state import StateStore

    store = StateStore(read_gateway, settings)
    return BlocklistWatch(
        read=store.read_blocklist,
        probe=listing_probe(read_gateway, settings.control_repo, settings.labels.blocklist),
        max_age=settings.limits.blocklist_check_seconds,
    )


def build_runtime(
    *,
    settings: Settings,
    config: PolicyConfig,
    scope: ReadScope,
    read_gateway: Gateway,
    write_gateway: Gateway,
    run_dir: Path,
    secrets: tuple[SecretStr, ...],
    append_entry: Callable[[str, str], str] | None = None,
    blocklist_watch: BlocklistWatch | None = None,
    clock: Callable[[], float] | None = None,
    pass_file: Path | None = None,
) -> Runtime:
    kwargs = {"clock": clock} if clock else {}
    return Runtime(
        config=config,
        read_gateway=read_gateway,
        write_gateway=write_gateway,
        run_dir=run_dir,
        throttle=SlidingWindow(
            limit=settings.limits.reads_per_window,
            window=settings.limits.read_window_seconds,
            **kwargs,
        ),
        loops=LoopDetector(settings.limits.loop_threshold),
        scope=scope,
        secrets=tuple(s.get_secret_value() for s in secrets),
        append_entry=append_entry,
        pass_file=pass_file,
        blocklist_watch=blocklist_watch,
    )


class AuditedMCPServer(MCPServer):
    """An ``MCPServer`` that also records the calls the SDK turns away before any tool
    runs (a tool that does not exist, such as a review; arguments of the wrong shape),
    so every call the model makes is in the audit log (M10). It refuses every tool
    outside the current pass's set (``Runtime.pass_refusal``) before anything runs."""

    def __init__(self, *args: Any, runtime: Runtime, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._runtime = runtime

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        refusal = self._runtime.pass_refusal(name, arguments)
        if refusal is not None:
            return CallToolResult(content=[TextContent(type="text", text=refusal)], is_error=True)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError:  # the tools themselves answer refusals as results
            tool = self._tool_manager.get_tool(name)
            read_only = bool(tool and tool.annotations and tool.annotations.read_only_hint)
            reason = (  # not the SDK's text: it may quote the rejected values
                "arguments do not match the tool's parameters"
                if tool
                else f"no tool named {name!r} (no reviews, no generic API calls)"
            )
            self._runtime.record_rejected(
                name, arguments, reason, kind="read" if read_only else "write", known=bool(tool)
            )
            raise


def build_server(runtime: Runtime, *, pusher: Pusher | None = None) -> MCPServer:
    server = AuditedMCPServer(SERVER_NAME, instructions=INSTRUCTIONS, runtime=runtime)
    read_tools.register(server, runtime)
    write_tools.register(server, runtime, pusher=pusher)
    return server


def build_pusher(
    runtime: Runtime,
    *,
    source: BundleSource | None,
    read_token: SecretStr,
    write_token: SecretStr,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Pusher | None:
    """``push_branch``'s machinery; ``source`` makes bundles of the agent's branches."""
    if source is None:
        return None
    return Pusher(
        config=runtime.config,
        state=runtime.state,
        source=source,
        read_gateway=runtime.read_gateway,
        write_gateway=runtime.write_gateway,
        read_token=read_token.get_secret_value(),
        write_token=write_token.get_secret_value(),
        sleep=sleep,
        clock=clock,
    )


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0 picks a free one), so the URL is known first."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit this; without it a tool call's small response
    # writes meet delayed ACKs and each call costs ~40 ms more.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    return sock


def url_of(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}{MCP_PATH}"


class BearerGate:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <secret>``,
    the run's own secret; anything else gets 401 and is reported to ``on_refused``.

    Any local process can connect to a loopback port; only this run's agent user can
    read the MCP config that holds the secret."""

    def __init__(
        self, app: Any, *, secret: str, on_refused: Callable[[str, str], None] | None = None
    ) -> None:
        self.app = app
        self._expected = f"Bearer {secret}".encode()
        self._on_refused = on_refused

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
            return
        reason = "a wrong bearer secret" if given else "no bearer secret"
        if self._on_refused is not None:
            self._on_refused(f"{scope.get('method', '?')} {scope.get('path', '?')}", reason)
        body = json.dumps(
            {"error": "unauthorized", "message": f"this run's MCP endpoint refused {reason}"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b"Bearer"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _uvicorn(server: MCPServer, bearer: str | None = None) -> Any:
    import uvicorn

    # json_response: each call is answered by one JSON body instead of an SSE stream
    # opened for it; the server sends nothing unasked, and a stream per call costs
    # about a fifth of the transport's time. (Streamable HTTP clients take either.)
    app: Any = server.streamable_http_app(
        streamable_http_path=MCP_PATH, host="127.0.0.1", json_response=True
    )
    if bearer is not None:
        runtime = getattr(server, "_runtime", None)
        app = BearerGate(
            app,
            secret=bearer,
            on_refused=runtime.record_unauthorized if runtime is not None else None,
        )
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    return uvicorn.Server(config)


def serve(server: MCPServer, sock: socket.socket, *, bearer: str | None = None) -> None:
    """Serve until the process is stopped."""
    _uvicorn(server, bearer).run(sockets=[sock])


def start_in_thread(
    server: MCPServer, *, port: int = 0, bearer: str | None = None
) -> tuple[str, Callable[[], None]]:
    """Serve from a background thread (tests, benchmarks, in-process supervisors).

    Returns the URL and a function that stops the server.
    """
    sock = bind(port)
    uv = _uvicorn(server, bearer)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            sock.close()
            raise RuntimeError("the MCP server did not start within 10 s")
        time.sleep(0.01)

    def stop() -> None:
        uv.should_exit = True
        thread.join(timeout=10)
        sock.close()

    return url_of(sock), stop
