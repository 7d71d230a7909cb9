"""Run the MCP server for real: uvicorn on 127.0.0.1 in a thread, the local GitHub behind it,
and the SDK's own client talking streamable HTTP to it (helpers in ``mcp_harness``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from tests.mcp.mcp_harness import (
    AGENT_TOKEN,
    BOT,
    LOG_URL,
    READ_TOKEN,
    Running,
    context,
    scenario,
    settings,
)
from tusk.contracts.models import Blocklist, PermissionConfig
from tusk.git.agent import AgentGit, BundleSource
from tusk.mcp.server import transport
from tusk.mcp.server import wiring as mcp_server
from tusk.text.markers import first_marker


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def start_mcp(local_github: Any, tmp_path: Path) -> Iterator[Callable[..., Running]]:
    """Start a server for one run; keyword arguments tune the run's settings and policy."""
    stops: list[Callable[[], None]] = []
    local_github.load(scenario())

    def start(
        *,
        permissions: PermissionConfig | None = None,
        blocklist: Blocklist | None = None,
        workspace: Path | None = None,
        source: BundleSource | None = None,
        raw: dict[str, Any] | None = None,
        body: str | None = None,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], None] | None = None,
        bearer: str | None = None,
        pass_file: Path | None = None,
        **setting_overrides: Any,
    ) -> Running:
        from tusk.issues.state import StateStore

        cfg_settings = settings(**setting_overrides)
        ctx = context(permissions, raw=raw, **({"body": body} if body is not None else {}))
        run_dir = tmp_path / f"run{len(stops)}"
        read_gw = local_github.gateway(READ_TOKEN)
        write_gw = local_github.gateway(AGENT_TOKEN)
        writer = StateStore(write_gw, cfg_settings)
        watch = mcp_server.blocklist_watch(cfg_settings, read_gw)
        if clock is not None:
            watch.clock = clock
        found = watch.start() if blocklist is None else blocklist
        config = mcp_server.policy_config(cfg_settings, ctx, log_issue_url=LOG_URL, blocklist=found)
        runtime = mcp_server.build_runtime(
            settings=cfg_settings,
            config=config,
            scope=mcp_server.read_scope(cfg_settings, ctx),
            read_gateway=read_gw,
            write_gateway=write_gw,
            run_dir=run_dir,
            secrets=(SecretStr(AGENT_TOKEN), SecretStr(READ_TOKEN)),
            append_entry=lambda kind, text: writer.append_entry(kind, text, jobid=ctx.jobid),  # type: ignore[arg-type]
            blocklist_watch=watch if blocklist is None else None,
            clock=clock,
            pass_file=pass_file,
        )
        if source is None and workspace is not None:
            source = AgentGit.as_owner(workspace)  # git runs there as its owner only
        pusher = mcp_server.build_pusher(
            runtime,
            source=source,
            read_token=SecretStr(READ_TOKEN),
            write_token=SecretStr(AGENT_TOKEN),
            sleep=sleep or local_github.sleeps.append,  # waits are recorded, never slept
        )
        url, stop = transport.start_in_thread(
            mcp_server.build_server(runtime, pusher=pusher), bearer=bearer
        )
        stops.append(stop)
        return Running(url=url, runtime=runtime, run_dir=run_dir, pusher=pusher)

    yield start
    for stop in stops:
        stop()


def _posted_bodies(node: Any) -> Iterator[tuple[str, str]]:
    """(body, its run's log URL) of everything in the local GitHub's state that the server
    posted: the bot's, with the footer's marker naming the log."""
    if isinstance(node, dict):
        body, author = node.get("body"), node.get("author")
        marker = first_marker(body, "backlink") if isinstance(body, str) else None
        if author == BOT and marker and isinstance(marker.get("log"), str):
            yield str(body), marker["log"]
        for value in node.values():
            yield from _posted_bodies(value)
    elif isinstance(node, list):
        for value in node:
            yield from _posted_bodies(value)


@pytest.fixture(autouse=True)
def every_posted_body_shows_its_footer(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, every body the server posted is rendered as github.com renders it
    (cmark-gfm) and must show the run-log link and the go-away line as visible text (M9)."""
    if "local_github" not in request.fixturenames:
        yield
        return
    github = request.getfixturevalue("local_github")  # set up first, so torn down after
    yield
    from tests.mcp import github_view

    state = github.state()
    hidden = [
        body
        for body, log in _posted_bodies(state)
        if not github_view.shows_footer(body, bot=BOT, log_url=log)
    ]
    assert hidden == [], "posted bodies whose footer does not show"
