"""The run's own record of what the model was told and answered, kept by the model
proxy: the evidence the log issue's transcript is built from.

Claude Code's stream-json is written by a process of the agent's own uid: in its box
Claude Code is non-dumpable, so its tools cannot take its stdout, but without the
box they can (``pidfd_getfd``), and a line written there is not evidence. The proxy
sees every exchange itself, in run-claude's process: each answer's blocks (text,
tool calls) as they passed, and the tool results the next request carried back.
``Record`` appends them, with the supervisor's pass lines, to
``RUN_DIR/record.jsonl`` (runner-only), and ``transcript_events`` turns that file
into the events the transcript is rendered from.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

RECORD_FILE = "record.jsonl"
MAX_BLOCK_CHARS = 200_000  # what one block keeps of a very long answer


class Record:
    """``RUN_DIR/record.jsonl``, appended to from the proxy's and the supervisor's threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def _append(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)

    def task(self, text: str) -> None:
        """What the run was asked (task.md), for the conversation a later run resumes."""
        self._append({"type": "task", "text": text})

    def pass_started(self, name: str, prompt: str) -> None:
        self._append({"type": "pass", "name": name, "prompt": prompt})

    def exchange(self, *, results: list[dict[str, Any]], answer: list[dict[str, Any]]) -> None:
        self._append({"type": "exchange", "results": results, "answer": answer})


def tool_results(body: bytes) -> list[dict[str, Any]]:
    """The tool results a Messages request carries back: its last message's."""
    try:
        data = json.loads(body or b"{}")
    except (ValueError, RecursionError):
        return []
    messages = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return []
    last = messages[-1]
    content = last.get("content")
    if last.get("role") != "user" or not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


class AnswerTap:
    """Fed the raw bytes of one answer as they pass; knows its content blocks."""

    def __init__(self, *, streaming: bool) -> None:
        self.streaming = streaming
        self._buffer = bytearray()
        self._blocks: dict[int, dict[str, Any]] = {}
        self._partial: dict[int, str] = {}

    def feed(self, chunk: bytes) -> None:
        self._buffer += chunk
        if not self.streaming:
            return
        *lines, rest = bytes(self._buffer).split(b"\n")
        self._buffer = bytearray(rest)
        for line in lines:
            if line.startswith(b"data:"):
                self._event(line[5:])

    def _event(self, raw: bytes) -> None:
        try:
            data = json.loads(raw)
        except ValueError:
            return
        if not isinstance(data, dict) or not isinstance(data.get("index"), int):
            return
        index, kind = data["index"], data.get("type")
        if kind == "content_block_start" and isinstance(data.get("content_block"), dict):
            self._blocks[index] = dict(data["content_block"])
        elif kind == "content_block_delta" and isinstance(data.get("delta"), dict):
            self._delta(index, data["delta"])
        elif kind == "content_block_stop" and index in self._partial:
            block = self._blocks.get(index)
            try:
                parsed = json.loads(self._partial.pop(index) or "{}")
            except ValueError:
                parsed = None
            if block is not None and parsed is not None:
                block["input"] = parsed

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self._blocks.get(index)
        if block is None:
            return
        if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
            block["text"] = (str(block.get("text", "")) + delta["text"])[:MAX_BLOCK_CHARS]
        elif delta.get("type") == "input_json_delta":
            partial = self._partial.get(index, "") + str(delta.get("partial_json", ""))
            self._partial[index] = partial[:MAX_BLOCK_CHARS]

    def blocks(self) -> list[dict[str, Any]]:
        """The answer's text and tool-use blocks (thinking is left out)."""
        if self.streaming:
            found = [self._blocks[i] for i in sorted(self._blocks)]
        else:
            try:
                data = json.loads(bytes(self._buffer) or b"{}")
            except ValueError:
                data = {}
            content = data.get("content") if isinstance(data, dict) else None
            found = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        return [b for b in found if b.get("type") in ("text", "tool_use")]


def transcript_events(lines: Iterable[str]) -> list[dict[str, Any]]:
    """The record as the transcript's events: each pass, then for each exchange the
    tool results the model was given and the blocks it answered."""
    events: list[dict[str, Any]] = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        if entry.get("type") == "pass":
            name, prompt = entry.get("name", ""), entry.get("prompt", "")
            events.append({"type": "tusk", "subtype": "pass", "name": name, "prompt": prompt})
        elif entry.get("type") == "exchange":
            if entry.get("results"):
                events.append({"type": "user", "message": {"content": entry["results"]}})
            if entry.get("answer"):
                events.append({"type": "assistant", "message": {"content": entry["answer"]}})
    return events
