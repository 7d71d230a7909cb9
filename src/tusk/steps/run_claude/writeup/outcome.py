"""How a Claude Code session ended, decided from its exit code, its result
event and the supervisor's own stop reason (reference: claude-code-cli §6)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tusk.steps.run_claude.session.watch import StopReason

OutcomeKind = Literal[
    "completed",
    "loop",
    "mcp_loop",
    "mcp_not_connected",
    "timeout",
    "budget",
    "go_away",
    "stopped",
    "stalled",
    "max_turns",
    "api_error",
    "error_result",
    "crashed",
    "setup_failed",
    "cancelled",
    "taken_over",
    "over_limit",
]

SIGTERM_EXIT = 143  # Claude Code catches SIGTERM, cleans up, and exits 143 itself


class Outcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: OutcomeKind
    headline: str
    detail: str = ""
    exit_code: int | None = None
    turns: int | None = None  # the turns Claude Code's result counts (its --max-turns)

    @property
    def ok(self) -> bool:
        return self.kind == "completed"

    @property
    def mark(self) -> str:
        """The outcome's sign where people read it: a stop is a person's call, not a failure."""
        if self.ok:
            return "✅"
        return "⏹️" if self.kind == "stopped" else "❌"

    @property
    def closes_as(self) -> Literal["completed", "not_planned"] | None:
        """How the log issue closes: completed, not planned (the bot was sent away
        during the run, or a limit across runs kept it from starting: nothing failed,
        the work was called off), or not at all."""
        if self.ok or self.kind == "stopped":  # a person ended it: nothing failed
            return "completed"
        return "not_planned" if self.kind in ("go_away", "over_limit") else None

    @property
    def model_still_answers(self) -> bool:
        """The API worked, so a continue can still ask the agent something. Not after
        the budget: the model proxy refuses every further request."""
        return self.kind in ("completed", "loop", "mcp_loop", "timeout", "max_turns")


_STOP_HEADLINES = {
    "loop": "Loop detected: Claude Code was stopped",
    "mcp_loop": "Loop detected by the MCP server: Claude Code was stopped",
    "mcp_not_connected": "The MCP server did not connect: Claude Code was stopped",
    "timeout": "Wall-clock budget spent: Claude Code was stopped",
    "budget": "Model budget exceeded: Claude Code was stopped",
    "go_away": "Sent away during the run: Claude Code was stopped",
    "stopped": "Stopped on the thread: Claude Code was stopped",
    "stalled": "Stalled, no model answer and no tool call: Claude Code was stopped",
}


def classify(
    *, exit_code: int | None, result: dict[str, Any] | None, stop: StopReason | None
) -> Outcome:
    """The session's outcome, with the turns it used when its result says."""
    outcome = _classify(exit_code=exit_code, result=result, stop=stop)
    turns = (result or {}).get("num_turns")
    return outcome.model_copy(update={"turns": turns}) if isinstance(turns, int) else outcome


def _classify(
    *, exit_code: int | None, result: dict[str, Any] | None, stop: StopReason | None
) -> Outcome:
    if stop is not None:
        expected = "" if exit_code in (SIGTERM_EXIT, None) else f" (exit code {exit_code})"
        return Outcome(
            kind=stop.kind,
            headline=_STOP_HEADLINES[stop.kind],
            detail=stop.reason + expected,
            exit_code=exit_code,
        )
    if result is None:
        return Outcome(
            kind="crashed",
            headline="Claude Code ended without a result",
            detail=f"exit code {exit_code}; the stream has no result event",
            exit_code=exit_code,
        )
    errors = "; ".join(str(e) for e in result.get("errors") or [])
    if result.get("subtype") == "error_max_turns" or result.get("terminal_reason") == "max_turns":
        return Outcome(
            kind="max_turns",
            headline="Claude Code reached its turn limit",
            detail=errors or f"{result.get('num_turns')} turns",
            exit_code=exit_code,
        )
    text = str(result.get("result") or "")
    if result.get("is_error") and (
        result.get("terminal_reason") == "api_error"
        or result.get("api_error_status") is not None
        or text.startswith("API Error")
    ):
        status = result.get("api_error_status")
        return Outcome(
            kind="api_error",
            headline="The model's API failed",
            detail=(f"status {status}: " if status else "") + (text or errors),
            exit_code=exit_code,
        )
    if result.get("is_error"):
        return Outcome(
            kind="error_result",
            headline="Claude Code reported an error",
            detail=f"{result.get('subtype')}: {errors or text}",
            exit_code=exit_code,
        )
    if exit_code not in (0, None):
        return Outcome(
            kind="crashed",
            headline="Claude Code exited with an error",
            detail=f"exit code {exit_code} after a successful result",
            exit_code=exit_code,
        )
    return Outcome(kind="completed", headline="Completed", exit_code=exit_code)


def cancelled(signal_name: str) -> Outcome:
    """The run was cancelled (Actions sends SIGINT, then SIGTERM, on cancel or timeout)."""
    return Outcome(
        kind="cancelled",
        headline="The run was cancelled",
        detail=f"run-claude received {signal_name} (the workflow was cancelled or hit its "
        "time limit); Claude Code was stopped. What the agent wrote before that is listed "
        "above.",
    )
