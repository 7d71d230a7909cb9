"""The per-run MCP server, wired from settings, the context document and the run's metadata
(MISSION M1-M13, T4).

``build_runtime`` turns them into the per-run machinery (``runtime``);
``build_server`` puts this run's tools on it (``mcp_server``); ``transport``
serves it over streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import secrets as secrets_module
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import SecretStr

from tusk.approval.staging import StagingArea
from tusk.contracts.config import Settings
from tusk.contracts.models import Blocklist, ContextDocument, PermissionConfig
from tusk.git.agent import BundleSource
from tusk.github.gateway import Gateway
from tusk.mcp.gate.blocklist_watch import BlocklistWatch, listing_probe
from tusk.mcp.gate.loops import LoopDetector
from tusk.mcp.gate.policy import PolicyConfig
from tusk.mcp.gate.throttle import SlidingWindow
from tusk.mcp.push.git_push import Pusher
from tusk.mcp.reads.scope import ReadScope, run_repositories, write_repositories
from tusk.mcp.server.mcp_server import GitHubServer
from tusk.mcp.server.runtime import Runtime
from tusk.text.neutralise import Trust


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
    return run_policy(
        settings,
        jobid=context.jobid,
        repo=context.repo,
        number=context.trigger.number,
        permissions=context.permission_config,
        log_issue_url=log_issue_url,
        blocklist=blocklist,
        approval=settings.approval_required(context.repo) or context.permission_config.approve,
        write_repos=write_repositories(
            context, allowed_users=settings.allowed_users, configured=settings.agent.write_repos
        ),
    )


def run_policy(
    settings: Settings,
    *,
    jobid: str,
    repo: str,
    number: int | None,
    permissions: PermissionConfig,
    log_issue_url: str,
    blocklist: Blocklist,
    approval: bool,
    write_repos: frozenset[str],
) -> PolicyConfig:
    """The policy of one run on ``repo``; the apply job of an approved set builds the
    run's again from it (with approval off)."""
    return PolicyConfig(
        bot=settings.bot,
        jobid=jobid,
        control_repo=settings.control_repo,
        trigger_repo=repo,
        trigger_number=number,
        log_issue_url=log_issue_url,
        permissions=narrowed_permissions(permissions, settings),
        blocklist=blocklist,
        go_away_phrase=settings.go_away.phrase,
        record_only=settings.record_only,
        approval=approval,
        discussions_write=settings.discussions_write,
        mentions_per_post=settings.limits.mentions_per_post,
        memory_entry_chars=settings.limits.memory_entry_chars,
        history_entry_chars=settings.limits.history_entry_chars,
        branch_prefix=settings.agent.branch_prefix,
        allow_workflow_changes=settings.agent.allow_workflow_changes,
        fork_wait_seconds=settings.agent.fork_wait_seconds,
        edits_per_comment=settings.limits.edits_per_comment,
        writes_per_run=settings.limits.writes_per_run,
        write_repos=write_repos,
    )


def read_scope(settings: Settings, context: ContextDocument) -> ReadScope:
    """The repositories the read tools serve this run, and whose text counts as trusted."""
    return ReadScope(
        trigger_repo=context.repo,
        control_repo=settings.control_repo,
        repos=run_repositories(context, allowed_users=settings.allowed_users),
        trigger_number=context.trigger.number,
        read_public=settings.agent.read_public,
        trust=Trust.of((*settings.allowed_users, settings.bot), context.raw.collaborators),
        bot=settings.bot,
    )


def blocklist_watch(settings: Settings, read_gateway: Gateway) -> BlocklistWatch:
    """The blocklist, read now and checked again before writes (M7, G4)."""
    from tusk.issues.state import StateStore

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
    salt = secrets_module.token_hex(8)
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
        nonce_salt=salt,
        approval=approval_stage(settings, config, run_dir, salt),
    )


def approval_stage(
    settings: Settings, config: PolicyConfig, run_dir: Path, salt: str
) -> StagingArea | None:
    """Where approval mode keeps the run's writes; None when the run writes as usual."""
    if not config.approval:
        return None
    reason = (
        "agent.approval in tusk.yml"
        if settings.approval_required(config.trigger_repo)
        else "the mention's [permissions: approve]"
    )
    return StagingArea(
        run_dir=run_dir,
        nonce_salt=salt,
        reason=reason,
        days=settings.agent.approval_days,
        permissions=config.permissions,
    )


def build_server(runtime: Runtime, *, pusher: Pusher | None = None) -> GitHubServer:
    return GitHubServer(runtime, pusher=pusher)


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
