"""A run's conversation on its thread, kept from the model proxy's record (MISSION C3).

What a later run on the same thread resumes from: what this run was asked (the
task, then any follow-up pass) and what it answered (its text and, shortened,
the tool calls it made and what they returned), as turns. It is built from
``RUN_DIR/record.jsonl``, which the proxy writes in run-claude's process: never
from Claude Code's session files, which the agent's user writes and could fill
with planted turns. The self-check passes are Tusk's own questions, not the
conversation, and are left out.

The write-up posts it on the log issue as one comment (gzip, base64, so no
markdown touches it) and seals its SHA-256 into the run's audit chain (one more
line, ``tusk.audit.chain.with_conversation``; the markers name it too), so the
chain's head, and ``tusk audit verify``, cover it; a later run uses it only when
the comment's record hashes to the digest the verified chain holds
(``read_record``). Pure.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tusk.audit.on_issue import RECORD_CLOSE, RECORD_OPEN, RECORD_PART, record_bytes
from tusk.text.markers import first_marker, render_marker

VERSION = 1
MAIN_PASS = "Main session"  # the pass that asks the task (``session.passes``)
SELF_CHECK = "Self-check"  # Tusk's own questions after it: not the conversation
PART_KEY = RECORD_PART  # its write-up part, and its marker
TOOL_LINE_CHARS = 300  # what one tool call or result keeps in the record
COMMENT_ROOM = 60_000  # characters of base64 one comment holds, below GitHub's 65,536
LEFT_OUT = "(earlier parts of this answer were left out)"
TOO_LONG = "(the answer was too long to keep)"
OPEN = RECORD_OPEN
CLOSE = RECORD_CLOSE

Role = Literal["user", "assistant"]


@dataclass(frozen=True)
class Turn:
    role: Role
    blocks: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n\n".join(self.blocks)


@dataclass(frozen=True)
class ConversationRecord:
    jobid: str
    turns: tuple[Turn, ...]

    def canonical(self) -> bytes:
        """The bytes the digest is of: canonical JSON."""
        data = {
            "version": VERSION,
            "jobid": self.jobid,
            "turns": [{"role": t.role, "blocks": list(t.blocks)} for t in self.turns],
        }
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    def digest(self) -> str:
        return hashlib.sha256(self.canonical()).hexdigest()

    @property
    def chars(self) -> int:
        return sum(len(turn.text) for turn in self.turns)


def _short(text: str, limit: int = TOOL_LINE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(block.get("text", "")) if isinstance(block, dict) else str(block)
            for block in content
        )
    return ""


def from_record(lines: Iterable[str], *, jobid: str) -> ConversationRecord | None:
    """The conversation in a proxy record: the task (its ``task`` entry, else the main
    pass's prompt), the answers, follow-up passes as further user turns. None when the
    main session never started."""
    turns: list[Turn] = []
    task: str | None = None
    answer: list[str] = []
    collecting = False

    def close_answer() -> None:
        if turns and turns[-1].role == "user":
            turns.append(Turn("assistant", tuple(answer) or ("(no answer was recorded)",)))
        answer.clear()

    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind == "task":
            task = str(entry.get("text") or "")
        elif kind == "pass":
            name = str(entry.get("name") or "")
            if name.startswith(SELF_CHECK):
                close_answer()
                collecting = False
            elif name == MAIN_PASS or collecting:  # a follow-up: the next user turn
                close_answer()
                asked = task if name == MAIN_PASS and task else str(entry.get("prompt") or "")
                turns.append(Turn("user", (asked,)))
                collecting = True
        elif kind == "exchange" and collecting:
            for result in entry.get("results") or []:
                if isinstance(result, dict):
                    mark = "error" if result.get("is_error") else "result"
                    answer.append(f"[{mark}: {_short(_result_text(result.get('content')))}]")
            for block in entry.get("answer") or []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and str(block.get("text") or "").strip():
                    answer.append(str(block["text"]))
                elif block.get("type") == "tool_use":
                    given = json.dumps(block.get("input") or {}, ensure_ascii=False)
                    answer.append(f"[called {block.get('name')}: {_short(given)}]")
    close_answer()
    return ConversationRecord(jobid, tuple(turns)) if turns else None


# --------------------------------------------------------------------------- on the log issue


def redacted(record: ConversationRecord, redact: Callable[[str], str]) -> ConversationRecord:
    """``record`` with each block passed through ``redact`` (the run's secrets taken out)."""
    turns = tuple(Turn(t.role, tuple(redact(block) for block in t.blocks)) for t in record.turns)
    return ConversationRecord(record.jobid, turns)


def encode(record: ConversationRecord) -> str:
    data = base64.b64encode(gzip.compress(record.canonical(), mtime=0)).decode("ascii")
    return "\n".join(data[i : i + 76] for i in range(0, len(data), 76))


def fitted(record: ConversationRecord, room: int = COMMENT_ROOM) -> ConversationRecord:
    """``record`` small enough for one comment: whole earlier turns left out first, then
    whole earlier blocks of the one answer left (never a block cut in the middle)."""
    turns = list(record.turns)
    while len(encode(ConversationRecord(record.jobid, tuple(turns)))) > room and len(turns) > 2:
        turns = turns[2:]
    while len(encode(ConversationRecord(record.jobid, tuple(turns)))) > room:
        last = turns[-1]
        kept = [block for block in last.blocks if block != LEFT_OUT]
        if len(kept) <= 1:
            turns[-1] = Turn(last.role, (TOO_LONG,))
            break
        turns[-1] = Turn(last.role, (LEFT_OUT, *kept[1:]))
    return ConversationRecord(record.jobid, tuple(turns))


def comment_body(record: ConversationRecord) -> str:
    """The write-up part (below its ``writeup`` marker) that keeps ``record``."""
    marker = render_marker(PART_KEY, {"jobid": record.jobid, "digest": record.digest()})
    return (
        f"{marker}\n### 💬 Conversation record\n\n"
        "What this run was asked and answered on its thread, from the model proxy's own "
        "record. A later mention on the same thread resumes from it when it hashes to the "
        "digest the audit log below names.\n\n"
        f"<details><summary>record (gzip, base64)</summary>\n\n{OPEN}{encode(record)}{CLOSE}\n\n"
        "</details>\n"
    )


def decode(body: str) -> ConversationRecord | str:
    """The record a comment body holds, or what is wrong with it."""
    raw = record_bytes(body)
    if isinstance(raw, str):
        return raw
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return "its comment cannot be read"
    try:
        turns = tuple(
            Turn(turn["role"], tuple(str(block) for block in turn["blocks"]))
            for turn in data["turns"]
            if turn["role"] in ("user", "assistant")
        )
        record = ConversationRecord(str(data["jobid"]), turns)
    except (KeyError, TypeError):
        return "its comment holds no record of the expected shape"
    if record.canonical() != raw:
        return "its comment's record is not in canonical form"
    return record


def read_record(
    comments: Sequence[Mapping[str, Any]], *, jobid: str, bot: str, digest: str | None
) -> ConversationRecord | str | None:
    """The record of ``jobid`` among a log issue's ``comments`` (the bot's only), verified
    against ``digest`` (the audit log's): the record, what is wrong (missing, unreadable,
    not the digest), or None when the run named no record at all."""
    bodies = [
        str(comment.get("body") or "")
        for comment in comments
        if str((comment.get("user") or {}).get("login") or "").lower() == bot.lower()
        and (first_marker(str(comment.get("body") or ""), PART_KEY) or {}).get("jobid") == jobid
    ]
    if digest is None:
        why = (
            "its audit chain holds no digest for its record (written up before the chain held one)"
        )
        return None if not bodies else why
    if not bodies:
        return "its record is missing from the log issue"
    found = decode(bodies[0])
    if isinstance(found, str):
        return found
    if found.jobid != jobid or found.digest() != digest:
        return f"its record does not match the digest its audit chain holds ({digest[:12]}…)"
    return found
