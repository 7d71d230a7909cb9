"""What every call leaves behind: its audit record, the loop check, and the files
run-claude watches (M8, M10).

A refusal or failure becomes a ``ToolError`` whose text starts with its code
and reaches the model as an error result; the loop check sees refusals too
(a model retrying a refused write gets the same refusal). Every text that
leaves here is redacted.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, NoReturn

from tusk.audit.chain import AuditLog, canonical_json
from tusk.contracts.models import AuditDecision
from tusk.errors import UserError
from tusk.github.gateway import GitHubError
from tusk.mcp.gate.loops import LoopDetector
from tusk.mcp.gate.policy import Refused, write_key
from tusk.mcp.gate.results import Redactor, call_digest, text_digest
from tusk.mcp.gate.specs import write_spec

logger = logging.getLogger(__name__)

Kind = Literal["read", "write"]

LOOP_FILE = "loop-detected.json"
GO_AWAY_FILE = "go-away.json"  # run-claude ends the session when this appears
STAGED_FILE = "staged.jsonl"
AUDIT_FILE = "audit.jsonl"
PUSHES_FILE = "pushes.jsonl"  # each pushed branch's diff summary, for the write-up
MAX_UNAUTHORIZED_RECORDS = 100


class ToolError(Exception):
    """A call refused or failed, already recorded; ``str()`` is the redacted text the model
    reads, starting with its code."""


def kind_of(tool: str) -> Kind:
    return "write" if write_spec(tool) is not None else "read"


def target_of(tool: str, args: Mapping[str, Any]) -> str:
    """How the audit names a call's target before a tool says: its repository, or the tool."""
    repo = args.get("repo")
    return repo if isinstance(repo, str) and repo else tool


@dataclass
class Call:
    """One tool call as the audit knows it."""

    tool: str
    kind: Kind
    target: str
    args: Mapping[str, Any]
    started: float

    @cached_property
    def digest(self) -> str:
        return call_digest(self.tool, self.args)


def failure_message(tool: str, error: Exception) -> str:
    """What the model reads about a call that could not be done."""
    if isinstance(error, GitHubError):
        return f"{getattr(error, 'code', 'GITHUB_ERROR')}: {error}"
    if isinstance(error, UserError):
        return f"FAILED: {error.title}. {error.hint}".strip()
    # a bug: the traceback goes to the server's stderr, the model gets the gist
    logger.exception("tool %s crashed", tool)
    return f"FAILED: internal error in {tool} ({type(error).__name__}); try another way"


def _write_whole(path: Path, info: Mapping[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)  # run-claude sees the whole file or none


@dataclass
class Recorder:
    run_dir: Path
    loops: LoopDetector
    redactor: Redactor
    clock: Callable[[], float]
    trigger_repo: str
    audit: AuditLog = field(init=False)
    _unauthorized: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.audit = AuditLog(self.run_dir / AUDIT_FILE)

    def record(
        self,
        call: Call,
        decision: AuditDecision,
        *,
        code: str | None = None,
        reason: str | None = None,
        url: str | None = None,
        created: str | None = None,
        branch: str | None = None,
        head: str | None = None,
    ) -> None:
        """Append the call's audit record (a push's with whether it created the branch or
        moved one, and the head it left)."""
        self.audit.append(
            tool=call.tool,
            kind=call.kind,
            target=call.target,
            args={"tool": call.tool, **call.args},
            args_digest=call.digest,
            decision=decision,
            code=code,
            reason=self.redactor.text(reason) if reason else None,
            url=url,
            created=created,
            duration_ms=(self.clock() - call.started) * 1000.0,
            branch=branch,
            head=head,
        )

    def answer(self, call: Call, text: str) -> str:
        """Pass ``text`` through unless it completes a loop (M8): then record that, tell
        run-claude (``LOOP_FILE``) and refuse."""
        # Compared as the policy compares calls: repository case and spacing do not count.
        same_call = text_digest(write_key(call.tool, call.args))
        same_result = text_digest(" ".join(text.lower().split()))
        verdict = self.loops.observe(call.tool, same_call, same_result)
        if not verdict.looping:
            return text
        refused = Refused(
            "LOOP_DETECTED",
            f"you made this same {call.tool} call {verdict.repeats} times in a row and got the "
            "same result each time. Stop repeating it; the session is being ended.",
        )
        _write_whole(
            self.run_dir / LOOP_FILE,
            {
                "time": datetime.now(UTC).isoformat(),
                "tool": call.tool,
                "args_digest": call.digest,  # as in the call's audit records
                "repeats": verdict.repeats,
                "threshold": self.loops.threshold,
            },
        )
        looped = Call(call.tool, kind_of(call.tool), call.tool, call.args, self.clock())
        self.record(looped, "refused", code=refused.code, reason=refused.reason)
        raise ToolError(self.redactor.text(str(refused)))

    def refuse(self, call: Call, refused: Refused) -> NoReturn:
        self.record(call, "refused", code=refused.code, reason=refused.reason)
        self.answer(call, str(refused))
        raise ToolError(self.redactor.text(str(refused)))

    def fail(self, call: Call, error: Exception) -> NoReturn:
        message = failure_message(call.tool, error)
        self.record(call, "failed", reason=message)
        self.answer(call, message)
        raise ToolError(self.redactor.text(message))

    def staged(self, call: Call, summary: str, request: Mapping[str, Any]) -> None:
        """What a write would have done, for review (record-only mode)."""
        line = {
            "time": datetime.now(UTC).isoformat(),
            "tool": call.tool,
            "target": call.target,
            "summary": summary,
            "request": dict(request),
        }
        with (self.run_dir / STAGED_FILE).open("a", encoding="utf-8") as handle:
            handle.write(self.redactor.text(canonical_json(line)) + "\n")

    def pushed(self, branch: str, url: str | None, stat: Mapping[str, int]) -> None:
        """A branch pushed, with its diff summary (``PUSHES_FILE``): run-claude's write-up
        and the thread's status show it; the agent cannot write the run folder."""
        line = {"branch": branch, "url": url or "", **stat}
        with (self.run_dir / PUSHES_FILE).open("a", encoding="utf-8") as handle:
            handle.write(canonical_json(line) + "\n")

    def sent_away(self, tool: str) -> None:
        """Tell run-claude the trigger's repository sent the bot away (``GO_AWAY_FILE``)."""
        path = self.run_dir / GO_AWAY_FILE
        if path.exists():
            return
        _write_whole(
            path,
            {
                "time": datetime.now(UTC).isoformat(),
                "repo": self.trigger_repo,
                "tool": tool,
                "reason": f"{self.trigger_repo} sent the bot away during the run",
            },
        )

    def unauthorized(self, request: str, reason: str) -> None:
        """A request without this run's bearer secret: refused with 401 and recorded
        (the first ``MAX_UNAUTHORIZED_RECORDS``; a flood does not fill the disk)."""
        self._unauthorized += 1
        if self._unauthorized > MAX_UNAUTHORIZED_RECORDS:
            return
        logger.warning("refused an MCP request without this run's bearer: %s", request)
        call = Call("(mcp endpoint)", "read", "mcp endpoint", {"request": request}, self.clock())
        self.record(call, "refused", code="UNAUTHORIZED", reason=f"HTTP 401: {reason}")
