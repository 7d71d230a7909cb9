"""The server's per-run machinery around every tool call.

``Runtime.read`` and ``Runtime.write`` wrap the I/O a tool does with the
things that must happen to every call whatever the tool: the read throttle,
the policy gate, staged mode, the audit line, loop detection, and scrubbing
the server's tokens out of anything the model gets back. Tools only say what
to check and what to do.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import secrets as secrets_module
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from tusk.mcp_server import policy
from tusk.mcp_server.blocklist_watch import BlocklistWatch
from tusk.mcp_server.loops import LoopDetector
from tusk.mcp_server.passes import read_pass
from tusk.mcp_server.policy import PolicyConfig, Refused, RunState
from tusk.mcp_server.read_scope import ReadScope
from tusk.mcp_server.throttle import SlidingWindow

from tusk.audit import AuditLog, canonical_json, digest
from tusk.contracts import Blocklist
from tusk.errors import UserError
from tusk.github import Gateway, GitHubError, NotFound

logger = logging.getLogger(__name__)

LOOP_FILE = "loop-detected.json"
GO_AWAY_FILE = "go-away.json"  # run-claude ends the session when this appears
STAGED_FILE = "staged.jsonl"
AUDIT_FILE = "audit.jsonl"
MAX_UNAUTHORIZED_RECORDS = 100
MIN_REDACTED_SECRET = 8  # shorter "tokens" exist only in tests; redacting them would garble text


def call_digest(tool: str, args: Mapping[str, Any]) -> str:
    """A call's identity, computed once per call: the audit record's ``args_digest`` and
    the loop detector's key."""
    return digest({"tool": tool, **args})


def text_digest(text: str) -> str:
    """A result's identity for loop detection: the hash of the text the model gets."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def escaped_forms(secrets: Sequence[str]) -> tuple[str, ...]:
    """Each secret as it reads inside a JSON string."""
    return tuple(json.dumps(secret)[1:-1] for secret in secrets)


def serialise(result: Any, secrets: Sequence[str], escaped: Sequence[str] | None = None) -> str:
    """A read's result as the model gets it: compact JSON, serialised once, ``secrets``
    redacted.

    Redaction works on the structure (``redact_value``), so no JSON escaping can
    hide a secret from it; it runs only when the text shows a secret as JSON spells
    it inside a string (``escaped``), which an ordinary call never does.
    """
    if isinstance(result, str):
        return redact_value(result, secrets)  # type: ignore[no-any-return]
    text = json.dumps(result, separators=(",", ":"))
    forms = escaped_forms(secrets) if escaped is None else escaped
    if any(form in text for form in forms):
        text = json.dumps(redact_value(result, secrets), separators=(",", ":"))
    return text


def redact_value(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` with every secret replaced in every string, mapping keys included."""
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "[redacted]")
        return value
    if isinstance(value, Mapping):
        return {redact_value(k, secrets): redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item, secrets) for item in value]
    return value


class OperationFailed(GitHubError):
    """A write that policy allowed but that could not be done; not a refusal."""

    code = "FAILED"


@dataclass(frozen=True)
class WriteOutcome:
    """What a performed write made; ``message`` is what the model reads."""

    message: str
    url: str | None = None
    created: str | None = None  # AuditRecord.created
    comment_id: int | None = None
    created_branch: bool = False


def tool(
    server: MCPServer, *, name: str, annotations: ToolAnnotations, description: str | None = None
) -> Callable[[Callable[..., Any]], Any]:
    """Register an async tool whose refusals reach the model as an error result whose
    text starts with the refusal code (the SDK would prefix "Error executing tool")."""

    def decorate(fn: Callable[..., Any]) -> Any:
        @functools.wraps(fn)
        async def answer(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except ToolError as error:
                return CallToolResult(
                    content=[TextContent(type="text", text=str(error))], is_error=True
                )

        server.tool(
            name=name, annotations=annotations, description=description, structured_output=False
        )(answer)
        return fn

    return decorate


@dataclass(frozen=True)
class StagedWrite:
    """What a write would have done, for staged mode."""

    summary: str
    request: dict[str, Any]


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
    audit: AuditLog = field(init=False)
    _write_lock: asyncio.Lock = field(init=False, default_factory=asyncio.Lock)
    # Creates whose answer was lost and which were not found: a repeat looks first.
    uncertain: set[str] = field(init=False, default_factory=set)
    _nonce_salt: str = field(init=False, default_factory=lambda: secrets_module.token_hex(8))

    def nonce_for(self, tool: str, args: Mapping[str, Any]) -> str:
        """The nonce of one create: run-unique, and the same for an identical call, so a
        repeat of a create whose answer was lost finds the first instead of doubling it."""
        return digest({"salt": self._nonce_salt, "tool": tool, **args})[-16:]

    _repositories: dict[str, Any] = field(init=False, default_factory=dict)  # for scope
    _unauthorized: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.audit = AuditLog(self.run_dir / AUDIT_FILE)

    # ----------------------------------------------------------------- text the model sees

    @functools.cached_property
    def _redacted(self) -> tuple[str, ...]:
        return tuple(s for s in self.secrets if len(s) >= MIN_REDACTED_SECRET)

    @functools.cached_property
    def _escaped(self) -> tuple[str, ...]:
        return escaped_forms(self._redacted)

    def redact(self, text: str) -> str:
        for secret in self._redacted:
            text = text.replace(secret, "[redacted]")
        return text

    def serialise(self, result: Any) -> str:
        """A read's result as the model gets it (``serialise``, with this run's secrets)."""
        return serialise(result, self._redacted, self._escaped)

    def _fail(self, message: str) -> ToolError:
        return ToolError(self.redact(message))

    # ----------------------------------------------------------------- reads

    async def read(self, tool: str, args: Mapping[str, Any], fetch: Callable[[], Any]) -> str:
        """Run a read on the read token behind the throttle; returns JSON text."""
        started = self.clock()
        target = str(args.get("repo", "")) or tool
        try:
            policy.check_read_args(args)
            await self._check_scope(args)
        except Refused as refused:
            return self._refuse(tool, "read", target, args, refused, started)
        except Exception as error:  # GitHub could not say whether the repository is public
            return self._failed(tool, "read", target, args, error, started)
        wait = self.throttle.try_acquire()
        if wait is not None:
            refused = Refused(
                "RATE_LIMITED",
                f"too many reads: at most {self.throttle.limit} per "
                f"{self.throttle.window:g} s. Wait about {wait:.0f} s, and read less: reuse "
                "what you already fetched.",
            )
            return self._refuse(tool, "read", target, args, refused, started)
        try:
            result = await anyio.to_thread.run_sync(fetch)
        except Refused as refused:  # a check only the tool can make (a search's reach)
            return self._refuse(tool, "read", target, args, refused, started)
        except Exception as error:
            return self._failed(tool, "read", target, args, error, started)
        text = self.serialise(result)
        call = call_digest(tool, args)
        self._audit(tool, "read", target, args, "allowed", started=started, call=call)
        return self._check_loop(tool, args, text, call=call)

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
        prepare: Callable[[], Mapping[str, Any]] | None = None,
        perform: Callable[[Mapping[str, Any]], WriteOutcome],
        stage: Callable[[Mapping[str, Any]], StagedWrite],
    ) -> str:
        """Gate, then perform (or stage) one write, and record it.

        ``prepare`` turns the model's arguments into what will be sent (footer,
        neutralised mentions) and may refuse; ``perform`` does the I/O in a
        worker thread; ``stage`` describes what it would have done.
        """
        started = self.clock()
        target = policy.target_label(tool, args, self.config)
        async with self._write_lock:
            try:
                self.check(tool, args, await self.fresh_blocklist())
                prepared = prepare() if prepare else dict(args)
            except Refused as refused:
                return self._refuse(tool, "write", target, args, refused, started)
            except Exception as error:  # the blocklist could not be checked: no write
                return self._failed(tool, "write", target, args, error, started)
            if self.config.staged:
                staged = stage(prepared)
                self._record_staged(tool, target, staged)
                policy.record_write(tool, args, self.config, self.state)
                call = call_digest(tool, args)
                self._audit(
                    tool,
                    "write",
                    target,
                    args,
                    "staged",
                    reason=staged.summary,
                    started=started,
                    call=call,
                )
                message = (
                    f"STAGED: this installation runs in staged mode, so nothing was posted. "
                    f"Recorded for review: {staged.summary}. Carry on as if it had been done."
                )
                return self._check_loop(tool, args, message, call=call)
            try:
                outcome = await anyio.to_thread.run_sync(lambda: perform(prepared))
            except Refused as refused:  # a check only the I/O side can make (e.g. a push's files)
                return self._refuse(tool, "write", target, args, refused, started)
            except Exception as error:
                return self._failed(tool, "write", target, args, error, started)
            policy.record_write(
                tool,
                args,
                self.config,
                self.state,
                comment_id=outcome.comment_id,
                created_branch=outcome.created_branch,
            )
            call = call_digest(tool, args)
            self._audit(
                tool,
                "write",
                target,
                args,
                "allowed",
                url=outcome.url,
                created=outcome.created,
                started=started,
                call=call,
            )
        return self._check_loop(tool, args, self.redact(outcome.message), call=call)

    async def fresh_blocklist(self) -> Blocklist:
        """The blocklist, checked with GitHub when the last check is 30 s old."""
        if self.blocklist_watch is None:
            return self.config.blocklist
        return await anyio.to_thread.run_sync(self.blocklist_watch.current)

    def check(self, tool: str, args: Mapping[str, Any], blocklist: Blocklist) -> None:
        """``policy.check_write`` against ``blocklist``; a go-away in flight also tells
        run-claude to end the session (``GO_AWAY_FILE``)."""
        try:
            policy.check_write(tool, args, self.config, self.state, blocklist=blocklist)
        except Refused as refused:
            if refused.code == "BLOCKED_TARGET" and policy.sent_away(self.config, blocklist):
                self._write_go_away_file(tool)
            raise

    def refuse_now(
        self, tool: str, args: Mapping[str, Any], refused: Refused, started: float
    ) -> str:
        """Record and raise a refusal found before ``write`` could be called."""
        return self._refuse(
            tool, "write", policy.target_label(tool, args, self.config), args, refused, started
        )

    def fail_now(self, tool: str, args: Mapping[str, Any], error: Exception, started: float) -> str:
        return self._failed(
            tool, "write", policy.target_label(tool, args, self.config), args, error, started
        )

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
        repo = args.get("repo")
        self._audit(
            tool,
            "write" if tool in policy.WRITE_TOOLS else "read",
            repo if isinstance(repo, str) and repo else tool,
            args,
            "refused",
            code=refused.code,
            reason=refused.reason,
            started=self.clock(),
        )
        return self.redact(str(refused))

    def record_unauthorized(self, request: str, reason: str) -> None:
        """A request without this run's bearer secret: refused with 401 and recorded
        (the first ``MAX_UNAUTHORIZED_RECORDS``; a flood does not fill the disk)."""
        self._unauthorized += 1
        if self._unauthorized > MAX_UNAUTHORIZED_RECORDS:
            return
        logger.warning("refused an MCP request without this run's bearer: %s", request)
        self._audit(
            "(mcp endpoint)",
            "read",
            "mcp endpoint",
            {"request": request},
            "refused",
            code="UNAUTHORIZED",
            reason=f"HTTP 401: {reason}",
            started=self.clock(),
        )

    def record_rejected(
        self, tool: str, args: Mapping[str, Any], message: str, *, kind: str, known: bool
    ) -> None:
        """Record a call the SDK refused before the tool ran (unknown tool, bad arguments)."""
        repo = args.get("repo")
        self._audit(
            tool,
            kind,
            repo if isinstance(repo, str) and repo else tool,
            args,
            "failed" if known else "refused",
            code=None if known else "FORBIDDEN_OPERATION",
            reason=message[:500],
            started=self.clock(),
        )

    # ----------------------------------------------------------------- recording

    def _audit(
        self,
        tool: str,
        kind: str,
        target: str,
        args: Mapping[str, Any],
        decision: str,
        *,
        started: float,
        code: str | None = None,
        reason: str | None = None,
        url: str | None = None,
        created: str | None = None,
        call: str | None = None,
    ) -> None:
        """Append the call's audit record; ``call`` is its ``call_digest`` when known."""
        self.audit.append(
            tool=tool,
            kind=kind,
            target=target,
            args={"tool": tool, **args},
            args_digest=call,
            decision=decision,  # type: ignore[arg-type]
            code=code,
            reason=self.redact(reason) if reason else None,
            url=url,
            created=created,
            duration_ms=(self.clock() - started) * 1000.0,
        )

    def _refuse(
        self,
        tool: str,
        kind: str,
        target: str,
        args: Mapping[str, Any],
        refused: Refused,
        started: float,
    ) -> str:
        call = call_digest(tool, args)
        self._audit(
            tool,
            kind,
            target,
            args,
            "refused",
            code=refused.code,
            reason=refused.reason,
            started=started,
            call=call,
        )
        self._check_loop(tool, args, str(refused), call=call)
        raise self._fail(str(refused))

    def _failed(
        self,
        tool: str,
        kind: str,
        target: str,
        args: Mapping[str, Any],
        error: Exception,
        started: float,
    ) -> str:
        if isinstance(error, GitHubError):
            message = f"{getattr(error, 'code', 'GITHUB_ERROR')}: {error}"
        elif isinstance(error, UserError):
            message = f"FAILED: {error.title}. {error.hint}".strip()
        else:  # a bug: the traceback goes to the server's stderr, the model gets the gist
            logger.exception("tool %s crashed", tool)
            message = f"FAILED: internal error in {tool} ({type(error).__name__}); try another way"
        call = call_digest(tool, args)
        self._audit(tool, kind, target, args, "failed", reason=message, started=started, call=call)
        self._check_loop(tool, args, message, call=call)
        raise self._fail(message)

    def _record_staged(self, tool: str, target: str, staged: StagedWrite) -> None:
        line = {
            "time": datetime.now(UTC).isoformat(),
            "tool": tool,
            "target": target,
            "summary": staged.summary,
            "request": staged.request,
        }
        with (self.run_dir / STAGED_FILE).open("a", encoding="utf-8") as handle:
            handle.write(self.redact(canonical_json(line)) + "\n")

    def _check_loop(
        self, tool: str, args: Mapping[str, Any], result: str, *, call: str | None = None
    ) -> str:
        """Pass ``result`` through unless it completes a loop (M8). The call is known by
        its ``call_digest`` (the audit record's), the result by the hash of its text."""
        call = call or call_digest(tool, args)
        verdict = self.loops.observe(tool, call, text_digest(result))
        if not verdict.looping:
            return result
        refused = Refused(
            "LOOP_DETECTED",
            f"you made this same {tool} call {verdict.repeats} times in a row and got the same "
            "result each time. Stop repeating it; the session is being ended.",
        )
        self._write_loop_file(tool, call, verdict.repeats)
        self._audit(
            tool,
            "read" if tool not in policy.WRITE_TOOLS else "write",
            tool,
            args,
            "refused",
            code=refused.code,
            reason=refused.reason,
            started=self.clock(),
            call=call,
        )
        raise self._fail(str(refused))

    def _write_go_away_file(self, tool: str) -> None:
        path = self.run_dir / GO_AWAY_FILE
        if path.exists():
            return
        info = {
            "time": datetime.now(UTC).isoformat(),
            "repo": self.config.trigger_repo,
            "tool": tool,
            "reason": f"{self.config.trigger_repo} sent the bot away during the run",
        }
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)

    def _write_loop_file(self, tool: str, call: str, repeats: int) -> None:
        info = {
            "time": datetime.now(UTC).isoformat(),
            "tool": tool,
            "args_digest": call,  # as in the call's audit records
            "repeats": repeats,
            "threshold": self.loops.threshold,
        }
        path = self.run_dir / LOOP_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)  # run-claude sees the whole file or none
