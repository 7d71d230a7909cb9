"""Claude Code's stream-json events as view models for the transcript template,
and the text hygiene every comment posted from a run gets: secrets redacted,
@mentions defused, code fences that content cannot close, and splitting over
GitHub's 65,536-character comment limit without breaking a fence."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from tusk.text.markdown import MENTION_START

COMMENT_LIMIT = 65_536
RESULT_CHARS = 2_000  # a tool result is shown up to this, head and tail kept
INPUT_STRING_CHARS = 3_000  # each string inside a tool's input likewise
TEXT_CHARS = 20_000  # assistant text is the agent's own words: keep most of it

# Added by the supervisor to the saved stream, so the transcript shows the
# passes (main run, continues) and why it stopped a session.
TUSK_EVENT = "tusk"


class View(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Block(View):
    """One item of the transcript, in stream order."""

    kind: Literal["pass", "init", "text", "tool_use", "tool_result", "notice", "result"]
    title: str = ""
    body: str = ""
    fence: str = "```"
    lang: str = ""
    is_error: bool = False


class Transcript(View):
    jobid: str
    blocks: tuple[Block, ...]
    events: int


def shorten(text: str, limit: int) -> str:
    """Head and tail of ``text``, saying how much was left out of the middle."""
    if len(text) <= limit:
        return text
    tail = limit // 4
    head = limit - tail
    omitted = len(text) - head - tail
    return f"{text[:head]}\n… ({omitted} characters omitted) …\n{text[-tail:]}"


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run inside ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _shorten_strings(value: Any) -> Any:
    if isinstance(value, str):
        return shorten(value, INPUT_STRING_CHARS)
    if isinstance(value, dict):
        return {key: _shorten_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shorten_strings(item) for item in value]
    return value


def result_text(content: Any) -> str:
    """A tool result's text, whether Claude Code gave a string or a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(json.dumps(block, sort_keys=True))
        return "\n".join(parts)
    return json.dumps(content)


def _code(kind: Any, title: str, body: str, *, lang: str = "", is_error: bool = False) -> Block:
    title = title.replace("`", "'")  # titles sit inside inline code
    return Block(
        kind=kind, title=title, body=body, fence=fence_for(body), lang=lang, is_error=is_error
    )


def blocks_from_events(events: Iterable[dict[str, Any]]) -> list[Block]:
    names: dict[str, str] = {}
    out: list[Block] = []
    for event in events:
        kind = event.get("type")
        if kind == TUSK_EVENT:
            out.extend(_tusk_blocks(event))
        elif kind == "system":
            out.extend(_system_blocks(event))
        elif kind == "assistant":
            for block in _content(event):
                if block.get("type") == "text" and str(block.get("text", "")).strip():
                    out.append(Block(kind="text", body=shorten(str(block["text"]), TEXT_CHARS)))
                elif block.get("type") == "tool_use":
                    name = str(block.get("name"))
                    names[str(block.get("id"))] = name
                    shown = json.dumps(_shorten_strings(block.get("input")), indent=2)
                    out.append(_code("tool_use", name, shown, lang="json"))
        elif kind == "user":
            for block in _content(event):
                if block.get("type") == "tool_result":
                    name = names.get(str(block.get("tool_use_id")), "unknown tool")
                    text = shorten(result_text(block.get("content")), RESULT_CHARS)
                    out.append(
                        _code("tool_result", name, text, is_error=bool(block.get("is_error")))
                    )
                elif block.get("type") == "text":
                    out.append(Block(kind="notice", title="User", body=str(block.get("text"))))
        elif kind == "result":
            out.append(_result_block(event))
    return out


def _tusk_blocks(event: dict[str, Any]) -> list[Block]:
    if event.get("subtype") == "pass":
        prompt = shorten(str(event.get("prompt", "")), TEXT_CHARS)
        return [_code("pass", str(event.get("name", "")), prompt, lang="markdown")]
    return [
        Block(kind="notice", title="Supervisor", body=str(event.get("text", "")), is_error=True)
    ]


def _system_blocks(event: dict[str, Any]) -> list[Block]:
    subtype = event.get("subtype")
    if subtype == "init":
        servers = ", ".join(
            f"{s.get('name')}: {s.get('status')}" for s in event.get("mcp_servers") or []
        )
        body = (
            f"model `{event.get('model')}`, Claude Code {event.get('claude_code_version')}, "
            f"{len(event.get('tools') or [])} tools, MCP servers: {servers or 'none'}"
        )
        return [Block(kind="init", title="Session started", body=body)]
    if subtype == "api_retry":
        body = (
            f"API retry {event.get('attempt')}/{event.get('max_retries')} after "
            f"{event.get('error_status')} {event.get('error')}"
        )
        return [Block(kind="notice", title="API retry", body=body, is_error=True)]
    if subtype == "permission_denied":
        body = f"`{event.get('tool_name')}`: {event.get('message', '')}"
        return [Block(kind="notice", title="Permission denied", body=body, is_error=True)]
    return []


def _result_block(event: dict[str, Any]) -> Block:
    facts = [
        f"{event.get('subtype')}",
        f"{event.get('num_turns')} turns",
        f"{event.get('duration_ms')} ms",
    ]
    cost = event.get("total_cost_usd")
    if isinstance(cost, int | float):
        facts.append(f"${cost:.4f}")
    errors = "; ".join(str(e) for e in event.get("errors") or [])
    text = str(event.get("result") or errors)
    return Block(
        kind="result",
        title=" · ".join(facts),
        body=shorten(text, TEXT_CHARS),
        is_error=bool(event.get("is_error")),
    )


def _content(event: dict[str, Any]) -> list[dict[str, Any]]:
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict)]


def read_events(lines: Iterable[str]) -> list[dict[str, Any]]:
    events = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


# --------------------------------------------------------------------------- hygiene

_TOKEN_PATTERNS = re.compile(
    r"sk-ant-[A-Za-z0-9_-]{8,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"
)
MIN_SECRET_CHARS = 8  # shorter values are words, not secrets; replacing them garbles text
REDACTED = "[redacted]"


def redact(text: str, secrets: Sequence[str]) -> str:
    """Replace every known secret value and every token-shaped string."""
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) >= MIN_SECRET_CHARS:
            text = text.replace(secret, REDACTED)
    return _TOKEN_PATTERNS.sub(REDACTED, text)


# Every "@" GitHub may link (the one mention grammar, tusk.text.markdown), unless it
# follows a backtick that opens a code span.
_MENTION = re.compile(r"(?<!`)" + MENTION_START)


def defuse_mentions(text: str) -> str:
    """``@name`` → ``@\u200bname``: reads the same, notifies nobody."""
    return _MENTION.sub("@\u200b", text)


_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _fence_after(fence: tuple[str, str] | None, line: str) -> tuple[str, str] | None:
    """The fence open after ``line``: (opening line, marker), or None outside fences."""
    if fence is None:
        match = _FENCE_OPEN.match(line)
        return (line.rstrip("\n"), match.group(1)) if match else None
    marker = fence[1]
    stripped = line.strip()
    closes = (
        len(stripped) >= len(marker)
        and set(stripped) == {marker[0]}
        and not line.startswith("    ")
    )
    return None if closes else fence


def split_comments(text: str, *, limit: int = COMMENT_LIMIT, label: str = "part") -> list[str]:
    """Split markdown into comments of at most ``limit`` characters, in order.

    A cut inside a code fence closes the fence and reopens it in the next
    part, so every part renders on its own. Each part gets a ``label i/n``
    header when there is more than one.
    """
    if len(text) <= limit:
        return [text]
    budget = limit - len(f"<sub>{label} 99999/99999</sub>\n\n")
    width = budget // 4  # longer lines are cut; a piece always fits a fresh part
    lines: list[str] = []
    for raw in text.splitlines(keepends=True):
        lines.extend(_cut(raw, width))
    parts: list[str] = []
    current: list[str] = []
    size = 0
    fence: tuple[str, str] | None = None
    for line in lines:
        after = _fence_after(fence, line)
        closing = len(after[1]) + 2 if after else 0
        if current and size + len(line) + closing > budget:
            if fence is not None:
                current.append(("" if current[-1].endswith("\n") else "\n") + fence[1] + "\n")
            parts.append("".join(current))
            current = [fence[0] + "\n"] if fence is not None else []
            size = sum(len(piece) for piece in current)
        current.append(line)
        size += len(line)
        fence = after
    if current:
        parts.append("".join(current))
    total = len(parts)
    return [f"<sub>{label} {i}/{total}</sub>\n\n{part}" for i, part in enumerate(parts, 1)]


def _cut(line: str, width: int) -> list[str]:
    """A line longer than ``width`` as several lines, none starting with a fence
    marker (which would open or close a fence that was not there)."""
    pieces = []
    start = 0
    while len(line) - start > width:
        end = start + width
        while end > start + 1 and _FENCE_OPEN.match(line[end : end + 8]):
            end -= 1
        pieces.append(line[start:end] + "\n")
        start = end
    pieces.append(line[start:])
    return pieces
