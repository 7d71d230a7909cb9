"""The server's per-run machinery around every tool call.

``Runtime.read`` and ``Runtime.write`` wrap the I/O a tool does with what must
happen to every call whatever the tool: the pass gate, the read scope and
throttle, the policy gate, record-only mode, the audit line, loop detection, and
scrubbing the server's tokens out of anything the model gets back
(``recorder``). Tools only say what to check and what to do.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets as secrets_module
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread

from tusk.approval.staging import StagingArea, staged_answer
from tusk.audit.chain import digest
from tusk.contracts.models import Blocklist
from tusk.contracts.passes import read_narrowed, read_pass, read_stopped
from tusk.github.gateway import Gateway, NotFound
from tusk.mcp.gate import policy
from tusk.mcp.gate.blocklist_watch import BlocklistWatch
from tusk.mcp.gate.loops import LoopDetector
from tusk.mcp.gate.policy import PolicyConfig, Refused, RunState
from tusk.mcp.gate.recorder import Call, Kind, Recorder, kind_of, target_of
from tusk.mcp.gate.results import Redactor
from tusk.mcp.gate.specs import write_spec
from tusk.mcp.gate.throttle import SlidingWindow
from tusk.mcp.push.git_push import Pusher
from tusk.mcp.reads.scope import ReadScope
from tusk.mcp.writes.outcomes import Prepared, WriteOutcome


@dataclass
class Runtime:
    config: PolicyConfig
    read_gateway: Gateway
    write_gateway: Gateway
    run_dir: Path
    throttle: SlidingWindow
    loops: LoopDetector
    scope: ReadScope
    secrets: Sequence[str] = ()
    state: RunState = field(default_factory=RunState)
    append_entry: Callable[[str, str], str] | None = None  # (kind, text) -> comment URL
    blocklist_watch: BlocklistWatch | None = None  # None: the blocklist read at start holds
    clock: Callable[[], float] = time.monotonic
    pass_file: Path | None = None  # the supervisor's word on the current pass; None: no gate
    approval: StagingArea | None = None  # approval mode: writes kept for a person to approve
    pusher: Pusher | None = None  # push_branch's machinery; None: no workspace to push from
    # Run-unique; the apply job of an approved set uses the run's, so nonces match.
    nonce_salt: str = field(default_factory=lambda: secrets_module.token_hex(8))
    redactor: Redactor = field(init=False)
    recorder: Recorder = field(init=False)
    # Creates whose answer was lost and which were not found: a repeat looks first.
    uncertain: set[str] = field(init=False, default_factory=set)
    landed: set[str] = field(init=False, default_factory=set)  # writes counted while uncertain
    _write_lock: asyncio.Lock = field(init=False, default_factory=asyncio.Lock)
    _repositories: dict[str, Mapping[str, Any]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.redactor = Redactor(self.secrets)
        self.recorder = Recorder(
            run_dir=self.run_dir,
            loops=self.loops,
            redactor=self.redactor,
            clock=self.clock,
            trigger_repo=self.config.trigger_repo,
        )

    def nonce_for(self, tool: str, args: Mapping[str, Any]) -> str:
        """The nonce of one create: run-unique, and the same for an identical call, so a
        repeat of a create whose answer was lost finds the first instead of doubling it."""
        return digest({"salt": self.nonce_salt, "tool": tool, **args})[-16:]

    def call(self, tool: str, kind: Kind, args: Mapping[str, Any]) -> Call:
        """A call starting now, named as the audit names its target."""
        target = (
            policy.target_label(tool, args, self.config)
            if kind == "write"
            else str(args.get("repo", "")) or tool
        )
        return Call(tool, kind, target, args, self.clock())

    # ----------------------------------------------------------------- reads

    async def read(self, tool: str, args: Mapping[str, Any], fetch: Callable[[], Any]) -> str:
        """Run a read on the read token behind the scope and the throttle; returns JSON text."""
        call = self.call(tool, "read", args)
        try:
            policy.check_read_args(args)
            self._take_read_slot()  # before any request, the scope's probe included
            await self._check_scope(args)
            result = await anyio.to_thread.run_sync(fetch)
        except Refused as refused:  # also a check only the tool can make (a search's reach)
            self.recorder.refuse(call, refused)
        except Exception as error:  # also: GitHub could not say whether a repository is public
            self.recorder.fail(call, error)
        text = self.redactor.result(result)
        self.recorder.record(call, "allowed")
        return self.recorder.answer(call, text)

    def _take_read_slot(self) -> None:
        wait = self.throttle.try_acquire()
        if wait is not None:
            raise Refused(
                "RATE_LIMITED",
                f"too many reads: at most {self.throttle.limit} per "
                f"{self.throttle.window:g} s. Wait about {wait:.0f} s, and read less: reuse "
                "what you already fetched.",
            )

    async def _check_scope(self, args: Mapping[str, Any]) -> None:
        """Refuse (OUT_OF_SCOPE) a read of a repository outside the run's scope."""
        repo = args.get("repo")
        if not isinstance(repo, str):
            return
        number = args.get("number")
        verdict = self.scope.verdict(repo, number=number if isinstance(number, int) else None)
        if verdict == "in":
            return
        if verdict == "public?" or self.scope.may_be_bots_fork(repo):
            data = await anyio.to_thread.run_sync(self._repository, repo)
            if self.scope.is_runs_fork(data):
                return
            if verdict == "public?" and data.get("private") is False:
                return
        raise self.scope.refusal(repo)

    def _repository(self, repo: str) -> Mapping[str, Any]:
        """GitHub's record of ``repo`` ({} when it cannot be seen); asked once per run."""
        key = repo.lower()
        if key not in self._repositories:
            try:
                self._repositories[key] = self.read_gateway.get(f"/repos/{repo}")
            except NotFound:
                self._repositories[key] = {}
        return self._repositories[key]

    # ----------------------------------------------------------------- writes

    async def write(
        self,
        tool: str,
        args: Mapping[str, Any],
        *,
        prepare: Callable[[], Prepared],
        send: Callable[[Prepared], WriteOutcome],
    ) -> str:
        """Gate, then send (or stage) one write, and record it.

        ``prepare`` turns the model's arguments into what will be sent (footer,
        neutralised mentions, a push's imported branch) and may refuse; it runs in a
        worker thread once the gate let the arguments pass, and what it learned that
        the gate keys on (``Prepared.keyed``: a push's commit) is checked again and
        recorded with the call. ``send`` does the I/O in a worker thread.
        """
        call = self.call(tool, "write", args)
        async with self._write_lock:
            try:
                self.check(tool, args, await self.fresh_blocklist())
                prepared = await anyio.to_thread.run_sync(prepare)
                if prepared.keyed:
                    args = {**args, **prepared.keyed}
                    call = dataclasses.replace(
                        call, args=args, target=policy.target_label(tool, args, self.config)
                    )
                    self.check(tool, args, await self.fresh_blocklist())
            except Refused as refused:
                self.recorder.refuse(call, refused)
            except Exception as error:  # the blocklist could not be checked: no write
                self.recorder.fail(call, error)
            if self.config.record_only:
                return self._stage(call, prepared)
            if self.approval is not None and policy.kept_for_approval(tool):
                return self._keep_for_approval(self.approval, call, prepared)
            try:
                outcome = await anyio.to_thread.run_sync(send, prepared)
            except Refused as refused:  # a check only the I/O side can make (a push's files)
                self.recorder.refuse(call, refused)
            except Exception as error:
                self._count_if_landed(tool, args, error)
                self.recorder.fail(call, error)
            policy.record_write(
                tool,
                args,
                self.config,
                self.state,
                comment_id=outcome.comment_id,
                created_branch=outcome.created_branch,
                number=outcome.number,
                counted=self._known_now(tool, args),
            )
            pushed = outcome.created == "branch"
            self.recorder.record(
                call,
                "allowed",
                url=outcome.url,
                created=outcome.created,
                branch=("created" if outcome.created_branch else "moved") if pushed else None,
                head=outcome.head if pushed else None,
            )
        return self.recorder.answer(call, self.redactor.text(outcome.message))

    def _count_if_landed(self, tool: str, args: Mapping[str, Any], error: Exception) -> None:
        """A write whose answer was lost may exist: it counts against the limits, once."""
        key = policy.write_key(tool, args)
        if getattr(error, "may_have_landed", False) and key not in self.landed:
            self.landed.add(key)
            policy.record_write(tool, args, self.config, self.state, uncertain=True)

    def _known_now(self, tool: str, args: Mapping[str, Any]) -> bool:
        """Whether an uncertain attempt already counted this write (found by its nonce now)."""
        key = policy.write_key(tool, args)
        counted = key in self.landed
        self.landed.discard(key)
        return counted

    def _stage(self, call: Call, prepared: Prepared) -> str:
        self.recorder.staged(call, prepared.summary, prepared.request)
        policy.record_write(call.tool, call.args, self.config, self.state)
        self.recorder.record(call, "staged", reason=prepared.summary, created=_creates(call))
        return self.recorder.answer(
            call,
            "RECORD-ONLY: this installation runs in record-only mode, so nothing was posted. "
            f"Recorded for review: {prepared.summary}. Carry on as if it had been done.",
        )

    def _keep_for_approval(self, stage: StagingArea, call: Call, prepared: Prepared) -> str:
        # The policy refused any secret in what it prepared; the apply job checks it again.
        stage.keep(
            tool=call.tool,
            args=call.args,
            target=call.target,
            summary=prepared.summary,
            request=prepared.request,
            nonce=prepared.nonce,
        )
        policy.record_write(call.tool, call.args, self.config, self.state)
        self.recorder.record(
            call, "staged", reason=f"kept for approval: {prepared.summary}", created=_creates(call)
        )
        return self.recorder.answer(call, staged_answer(prepared.summary))

    async def fresh_blocklist(self) -> Blocklist:
        """The blocklist, checked with GitHub when the last check is 30 s old."""
        if self.blocklist_watch is None:
            return self.config.blocklist
        fresh = self.blocklist_watch.fresh()  # most writes: no request, so no thread
        if fresh is not None:
            return fresh
        return await anyio.to_thread.run_sync(self.blocklist_watch.current)

    def check(self, tool: str, args: Mapping[str, Any], blocklist: Blocklist) -> None:
        """``policy.check_write`` against ``blocklist``; a go-away in flight also tells
        run-claude to end the session."""
        if (stopped := read_stopped(self.run_dir)) is not None:
            raise Refused("STOPPED", f"the run was {stopped}: no write goes out any more")
        try:
            policy.check_write(tool, args, self.policy_now(), self.state, blocklist=blocklist)
        except Refused as refused:
            if refused.code == "BLOCKED_TARGET" and policy.sent_away(self.config, blocklist):
                self.recorder.sent_away(tool)
            raise

    def policy_now(self) -> PolicyConfig:
        """The policy with the permissions a follow-up narrowed (C1), when one did."""
        narrowed = read_narrowed(self.run_dir)
        if narrowed is None:
            return self.config
        permissions = self.config.permissions.narrowed_by(narrowed)
        return dataclasses.replace(self.config, permissions=permissions)

    # ----------------------------------------------------------------- before any tool runs

    def pass_refusal(self, tool: str, args: Mapping[str, Any]) -> str | None:
        """``FORBIDDEN_OPERATION`` when the current pass does not include ``tool`` (the
        history pass has only ``history``), recorded; None when the call may go on."""
        if self.pass_file is None:
            return None
        current = read_pass(self.pass_file)
        if current is not None and current.allows(tool):
            return None
        why = (
            f"the {current.name} pass allows only {', '.join(sorted(current.tools or ()))}"
            if current is not None
            else "no pass is running (the supervisor has not named one)"
        )
        refused = Refused("FORBIDDEN_OPERATION", f"{tool} is not available now: {why}")
        call = Call(tool, kind_of(tool), target_of(tool, args), args, self.clock())
        self.recorder.record(call, "refused", code=refused.code, reason=refused.reason)
        return self.redactor.text(str(refused))

    def record_rejected(
        self, tool: str, args: Mapping[str, Any], reason: str, *, kind: Kind, known: bool
    ) -> None:
        """Record a call turned away before its tool ran (unknown tool, bad arguments)."""
        call = Call(tool, kind, target_of(tool, args), args, self.clock())
        self.recorder.record(
            call,
            "failed" if known else "refused",
            code=None if known else "FORBIDDEN_OPERATION",
            reason=reason[:500],
        )


def _creates(call: Call) -> str | None:
    """What a staged write would make, on its record: what the self-checks read of it."""
    spec = write_spec(call.tool)
    return spec.creates if spec is not None else None
