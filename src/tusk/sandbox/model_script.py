"""The scripted model's script: its format, validation and the pure decisions.

A script is a list of steps the model plays back, one assistant message per
request. ``expect`` steps check the incoming request, ``stall`` steps delay the
answer, ``hold`` steps keep it until the one driving the model releases the
named gate (``ModelServer.release``: the demo acts while the agent works), and
every other step answers. ``conversations`` hold extra step lists
chosen by the user prompt, so one script drives a run and its ``--resume``
turns. ``sandbox/scenarios/MODEL_SCRIPTS.md`` documents the format.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tusk.errors import InputError

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

# The keys that make a step what it is; exactly one per step.
STEP_KINDS = (
    "text",
    "tool_use",
    "blocks",
    "expect",
    "status",
    "sse_error",
    "stall",
    "hold",
    "repeat",
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolUse(_Strict):
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class Block(_Strict):
    text: str | None = None
    tool_use: ToolUse | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Block:
        if (self.text is None) == (self.tool_use is None):
            raise ValueError("a block has exactly one of `text` or `tool_use`")
        return self


class Expect(_Strict):
    last_tool_result_contains: str | None = None
    last_tool_result_is_error: bool | None = None
    prompt_contains: str | None = None
    # Texts the messages before the current prompt hold, each in the same message as the
    # one before it or a later one (a resumed run's earlier turns): "" alone asks for no
    # earlier message.
    earlier_turns_contain: list[str] | None = None
    tools_include: list[str] | None = None
    tools_exclude: list[str] | None = None

    @model_validator(mode="after")
    def _something(self) -> Expect:
        if not self.model_dump(exclude_none=True):
            raise ValueError("an expect names at least one check")
        return self


class Repeat(_Strict):
    times: int = Field(ge=1)
    step: Step | None = None
    steps: list[Step] | None = None

    @model_validator(mode="after")
    def _one_body(self) -> Repeat:
        if (self.step is None) == (self.steps is None):
            raise ValueError("a repeat has exactly one of `step` or `steps`")
        return self


class Step(_Strict):
    text: str | None = None
    tool_use: ToolUse | None = None
    blocks: list[Block] | None = Field(default=None, min_length=1)
    expect: Expect | None = None
    status: int | None = Field(default=None, ge=400, le=599)
    sse_error: str | None = None
    stall: float | None = Field(default=None, ge=0)
    hold: str | None = Field(default=None, min_length=1)  # a gate's name
    repeat: Repeat | None = None
    # Only with `status`: the error body and headers (e.g. retry-after).
    error_type: str | None = None
    message: str | None = None
    headers: dict[str, str] | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Step:
        kinds = [kind for kind in STEP_KINDS if getattr(self, kind) is not None]
        if len(kinds) != 1:
            raise ValueError(f"a step has exactly one of {', '.join(STEP_KINDS)}; got {kinds}")
        extras = [k for k in ("error_type", "message", "headers") if getattr(self, k) is not None]
        if extras and kinds[0] not in ("status", "sse_error"):
            raise ValueError(f"{', '.join(extras)} only go with `status` or `sse_error`")
        return self

    @property
    def kind(self) -> str:
        return next(kind for kind in STEP_KINDS if getattr(self, kind) is not None)


Repeat.model_rebuild()


class Conversation(_Strict):
    when_prompt_contains: str
    steps: list[Step] = Field(default_factory=list)
    final_text: str | None = None


class Script(_Strict):
    steps: list[Step] = Field(default_factory=list)
    final_text: str = "Done."
    conversations: list[Conversation] = Field(default_factory=list)


def load_script(source: Mapping[str, Any] | str | Path) -> Script:
    """A validated script from a mapping or a YAML/JSON file; every problem at once."""
    if isinstance(source, Mapping):
        raw: Any = dict(source)
        origin = "script"
    else:
        path = Path(source)
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as error:
            raise InputError(f"cannot read model script {path}", str(error)) from error
        origin = str(path)
    try:
        return Script.model_validate(raw)
    except ValidationError as error:
        problems = "\n".join(
            f"  - {'.'.join(str(p) for p in item['loc']) or '(top)'}: {item['msg']}"
            for item in error.errors()
        )
        raise InputError(
            f"{origin}: invalid model script",
            f"{problems}\nSee sandbox/scenarios/MODEL_SCRIPTS.md for the step format.",
        ) from error


def expand(steps: Sequence[Step]) -> list[Step]:
    """Unroll every ``repeat`` so the player only walks a flat list."""
    flat: list[Step] = []
    for step in steps:
        if step.repeat is None:
            flat.append(step)
            continue
        body = [step.repeat.step] if step.repeat.step is not None else list(step.repeat.steps or [])
        for _ in range(step.repeat.times):
            flat.extend(expand(body))
    return flat


# --- reading the incoming request -------------------------------------------


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content) if isinstance(content, list) else []


def block_text(content: Any) -> str:
    """Text of a message or tool_result content (a string or a list of blocks)."""
    parts = []
    for block in _blocks(content):
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            parts.append(json.dumps(block, sort_keys=True))
    return "\n".join(parts)


def current_prompt(body: Mapping[str, Any]) -> str:
    """The latest user message that is a prompt, not a tool result.

    Claude Code puts ``role: system`` entries between turns; those are skipped.
    """
    for message in reversed(list(body.get("messages") or [])):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        blocks = _blocks(message.get("content"))
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
            continue
        return block_text(blocks)
    return ""


def last_tool_result(body: Mapping[str, Any]) -> dict[str, Any] | None:
    for message in reversed(list(body.get("messages") or [])):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        for block in reversed(_blocks(message.get("content"))):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                return block
    return None


def tool_names(body: Mapping[str, Any]) -> list[str]:
    return [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]


def unmet(expect: Expect, body: Mapping[str, Any]) -> list[str]:
    """Why ``body`` does not meet ``expect``; empty when it does."""
    reasons: list[str] = []
    result = last_tool_result(body)
    result_text = block_text(result.get("content")) if result else ""
    if expect.last_tool_result_contains is not None or expect.last_tool_result_is_error is not None:
        if result is None:
            reasons.append("the request holds no tool_result")
        else:
            wanted = expect.last_tool_result_contains
            if wanted is not None and wanted not in result_text:
                seen = result_text[:500]
                reasons.append(f"the last tool_result does not contain {wanted!r}; it was {seen!r}")
            flag = expect.last_tool_result_is_error
            if flag is not None and bool(result.get("is_error", False)) != flag:
                reasons.append(f"the last tool_result has is_error={not flag}, expected {flag}")
    if expect.prompt_contains is not None:
        prompt = current_prompt(body)
        if expect.prompt_contains not in prompt:
            reasons.append(
                f"the prompt does not contain {expect.prompt_contains!r}; it was {prompt[:500]!r}"
            )
    if expect.earlier_turns_contain is not None:
        reasons += _earlier_unmet(expect.earlier_turns_contain, body)
    names = tool_names(body)
    missing = [n for n in expect.tools_include or [] if n not in names]
    if missing:
        reasons.append(f"tools {missing} are not offered; offered: {names}")
    present = [n for n in expect.tools_exclude or [] if n in names]
    if present:
        reasons.append(f"tools {present} are offered but should not be")
    return reasons


def earlier_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The messages before the current prompt (``current_prompt``'s message)."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        blocks = _blocks(message.get("content"))
        if message.get("role") == "user" and not any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks
        ):
            return messages[:index]
    return []


def _earlier_unmet(wanted: list[str], body: Mapping[str, Any]) -> list[str]:
    earlier = [block_text(m.get("content")) for m in earlier_messages(body)]
    if wanted == [""]:
        return [] if not earlier else [f"{len(earlier)} earlier message(s) came before the prompt"]
    at = 0
    for text in wanted:
        while at < len(earlier) and text not in earlier[at]:
            at += 1
        if at == len(earlier):
            shown = [e[:200] for e in earlier]
            return [f"no earlier turn (in order) contains {text!r}; earlier turns: {shown!r}"]
    return []


def pick_conversation(script: Script, body: Mapping[str, Any]) -> int | None:
    """Index of the first conversation whose selector matches the prompt, else None."""
    prompt = current_prompt(body)
    for index, conversation in enumerate(script.conversations):
        if conversation.when_prompt_contains in prompt:
            return index
    return None
