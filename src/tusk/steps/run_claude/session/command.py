"""Claude Code's command line, and the lines Tusk adds to the saved event stream."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tusk.steps.run_claude.writeup.transcript import TUSK_EVENT


def claude_argv(
    claude: Path,
    *,
    mcp_config: Path,
    builtin_tools: Sequence[str],
    allowed_tools: Sequence[str],
    max_turns: int,
    model: str | None = None,
    resume: str | None = None,
    disallowed_tools: Sequence[str] = (),
    streamed_input: bool = False,
) -> list[str]:
    """Claude Code's command line. No secret and no prompt: the prompt goes to stdin,
    since the list flags would swallow a trailing prompt. ``streamed_input``: stdin
    carries stream-json user messages, and the session lasts until stdin closes
    (follow-ups, ``docs/claude-code-streamed-input.md``)."""
    argv = [
        str(claude),
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--mcp-config",
        str(mcp_config),
        "--strict-mcp-config",
        "--setting-sources",
        "",
        "--max-turns",
        str(max_turns),
    ]
    if streamed_input:
        argv += ["--input-format", "stream-json", "--replay-user-messages"]
    if model:
        argv += ["--model", model]
    if resume:
        argv += ["--resume", resume]
    argv += ["--tools", ",".join(builtin_tools)]
    argv += ["--allowedTools", *allowed_tools]
    if disallowed_tools:
        argv += ["--disallowedTools", *disallowed_tools]
    return argv


def tusk_event(subtype: str, **fields: Any) -> str:
    return json.dumps({"type": TUSK_EVENT, "subtype": subtype, **fields}) + "\n"


def user_message(text: str) -> str:
    """One user message on a streamed input: a line of stream-json."""
    content = [{"type": "text", "text": text}]
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}}) + "\n"
