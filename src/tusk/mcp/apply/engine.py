"""Apply an approved staged set exactly once, under the same policy as the run.

Each staged write goes through a ``Runtime`` built as the run's was (the
installation's limits, the set's permissions, the blocklist read now and again
before each write, the same body checks) with approval off: ``Runtime.write``
checks it, the tool's own ``prepare`` prepares it again, and only when the
prepared request is exactly the one approved is it sent. Every create's nonce is
the run's (the set keeps the run's nonce salt) and is looked for before it is sent
(``Runtime.uncertain``), so a second delivery of the approval, or a create whose
answer was lost, finds what landed instead of doubling it. A push comes from the
bundle the run kept (``push.tool.prepare_push``). The audit records go on in the
run's own chain (``run_dir/audit.jsonl``, which the apply step seeds from the log
issue). The first write that is refused or fails stops the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import anyio
from pydantic import SecretStr

from tusk.approval.apply_report import ApplyReport, ApplyStep
from tusk.approval.staged_set import StagedOperation, StagedSet
from tusk.approval.staging import bundle_bytes
from tusk.contracts.config import Settings
from tusk.contracts.models import is_valid_repo
from tusk.github.gateway import Gateway
from tusk.mcp.gate.blocklist_watch import BlocklistWatch
from tusk.mcp.gate.policy import Refused
from tusk.mcp.gate.recorder import ToolError
from tusk.mcp.push.git_push import Pusher
from tusk.mcp.reads.scope import ReadScope
from tusk.mcp.server import wiring as server
from tusk.mcp.server.catalog import WRITES, Tool
from tusk.mcp.server.runtime import Runtime
from tusk.mcp.writes.outcomes import Prepared

TOOLS: dict[str, Tool] = {tool.name: tool for tool in WRITES}


@dataclass
class Applier:
    runtime: Runtime
    pusher: Pusher | None
    staged: StagedSet
    report: ApplyReport = field(default_factory=ApplyReport)

    def __post_init__(self) -> None:
        # Look for every create before sending it: an earlier delivery may have made it.
        self.runtime.uncertain.update(op.nonce for op in self.staged.operations if op.nonce)

    async def apply_all(self) -> ApplyReport:
        for op in self.staged.operations:
            try:
                said = await self.apply_one(op)
            except ToolError as stopped:
                self.report.steps.append(
                    ApplyStep(
                        seq=op.seq, tool=op.tool, target=op.target, ok=False, said=str(stopped)
                    )
                )
                break
            self.report.steps.append(
                ApplyStep(seq=op.seq, tool=op.tool, target=op.target, ok=True, said=said)
            )
        return self.report

    async def apply_one(self, op: StagedOperation) -> str:
        rt = self.runtime
        tool = TOOLS.get(op.tool)
        if tool is None or tool.prepare is None or tool.send is None:
            call = rt.call(op.tool, "write", op.args)
            rt.recorder.refuse(call, Refused("FORBIDDEN_OPERATION", f"{op.tool} is not applied"))
        data = bundle_bytes(op)
        if data is not None and self.pusher is not None:  # a push: from the bundle the run kept
            self.pusher.kept[str(op.args.get("branch", ""))] = data
        args = tool.args.model_validate(op.args)
        prepare = pinned(partial(tool.prepare, rt, args), op)
        return await rt.write(op.tool, op.args, prepare=prepare, send=partial(tool.send, rt, args))


def pinned(prepare: Callable[[], Prepared], op: StagedOperation) -> Callable[[], Prepared]:
    """``prepare``, refused unless it prepares exactly the request that was approved
    (the same body, footer and nonce): the checks ran again, and nothing else is sent."""

    def again() -> Prepared:
        prepared = prepare()
        if dict(prepared.request) != op.request:
            raise Refused(
                "FORBIDDEN_OPERATION",
                f"write {op.seq + 1} ({op.summary}) would not be sent as it was approved: "
                "the installation's policy or the target changed since the run",
            )
        return prepared

    return again


def apply_set(applier: Applier) -> ApplyReport:
    """Apply every write in order; the first refused or failed one stops the rest."""
    return anyio.run(applier.apply_all)


def apply_write_repos(settings: Settings, staged: StagedSet) -> frozenset[str]:
    """Where an approved set may write, judged again now and never wider than at run
    time: the trigger repository, the bot's fork of it under the upstream's name, and
    ``agent.write_repos``. Repositories the task only named are not kept with the set,
    so a write there is refused (``OUT_OF_SCOPE``) rather than trusted from the file."""
    name = staged.repo.split("/", 1)[1]
    configured = {repo.lower() for repo in settings.agent.write_repos if is_valid_repo(repo)}
    return frozenset({staged.repo.lower(), f"{settings.bot}/{name}".lower()} | configured)


def build_applier(
    settings: Settings,
    staged: StagedSet,
    *,
    read_gateway: Gateway,
    write_gateway: Gateway,
    run_dir: Path,
    read_token: SecretStr,
    write_token: SecretStr,
    watch: BlocklistWatch,
) -> Applier:
    """The run's policy again (the set's permissions under this installation's limits,
    the blocklist read now), approval off, the run's nonce salt, this run folder's chain."""
    config = server.run_policy(
        settings,
        jobid=staged.jobid,
        repo=staged.repo,
        number=staged.thread_number,
        permissions=staged.permissions,
        log_issue_url=staged.log_issue_url,
        blocklist=watch.start(),
        approval=False,
        write_repos=apply_write_repos(settings, staged),
    )
    scope = ReadScope(
        trigger_repo=staged.repo,
        control_repo=settings.control_repo,
        repos=frozenset({staged.repo.lower()}),
        trigger_number=staged.thread_number,
        bot=settings.bot,
    )
    runtime = server.build_runtime(
        settings=settings,
        config=config,
        scope=scope,
        read_gateway=read_gateway,
        write_gateway=write_gateway,
        run_dir=run_dir,
        secrets=(read_token, write_token),
        blocklist_watch=watch,
    )
    runtime.nonce_salt = staged.nonce_salt
    pusher = Pusher(
        config=config,
        state=runtime.state,
        source=None,
        read_gateway=read_gateway,
        write_gateway=write_gateway,
        read_token=read_token.get_secret_value(),
        write_token=write_token.get_secret_value(),
        sleep=write_gateway.sleep,
    )
    runtime.pusher = pusher
    return Applier(runtime, pusher, staged)
