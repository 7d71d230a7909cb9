"""The model proxy's own record of each exchange, and the transcript events built from
it: what the log issue reports rests on it, not on Claude Code's stream. Pure."""

from __future__ import annotations

import json
from pathlib import Path

from tusk.steps.run_claude.proxy.exchanges import (
    AnswerTap,
    Record,
    tool_results,
    transcript_events,
)
from tusk.steps.run_claude.writeup.transcript import blocks_from_events

SSE = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"m1"}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    b'"content_block":{"type":"text","text":""}}\n\n'
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Fix"}}\n\n'
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta",'
    b'"text":"ing."}}\n\n'
    b'data: {"type":"content_block_stop","index":0}\n\n'
    b'data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use",'
    b'"id":"toolu_1","name":"mcp__github__create_comment","input":{}}}\n\n'
    b'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",'
    b'"partial_json":"{\\"body\\": \\"hi"}}\n\n'
    b'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta",'
    b'"partial_json":"\\"}"}}\n\n'
    b'data: {"type":"content_block_stop","index":1}\n\n'
    b'data: {"type":"message_stop"}\n\n'
)


def test_a_streamed_answer_is_recorded_as_the_blocks_that_passed() -> None:
    tap = AnswerTap(streaming=True)
    for i in range(0, len(SSE), 7):  # chunks cut anywhere, as the network cuts them
        tap.feed(SSE[i : i + 7])
    assert tap.blocks() == [
        {"type": "text", "text": "Fixing."},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "mcp__github__create_comment",
            "input": {"body": "hi"},
        },
    ]


def test_a_whole_answer_is_recorded_and_thinking_left_out() -> None:
    body = {"content": [{"type": "thinking", "thinking": "x"}, {"type": "text", "text": "ok"}]}
    tap = AnswerTap(streaming=False)
    tap.feed(json.dumps(body).encode())
    assert tap.blocks() == [{"type": "text", "text": "ok"}]


def test_the_tool_results_a_request_carries_back_are_its_last_messages() -> None:
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"}
    request = {
        "messages": [
            {"role": "user", "content": "the task"},
            {"role": "assistant", "content": [{"type": "text", "text": "x"}]},
            {"role": "user", "content": [result, {"type": "text", "text": "note"}]},
        ]
    }
    assert tool_results(json.dumps(request).encode()) == [result]
    assert tool_results(b"not json") == []


def test_the_transcript_is_the_record_passes_answers_and_results(tmp_path: Path) -> None:
    record = Record(tmp_path / "record.jsonl")
    record.pass_started("Main session", "Fix the typo.")
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    record.exchange(results=[], answer=[tool_use])
    done = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "README.md"}
    record.exchange(results=[done], answer=[{"type": "text", "text": "Done."}])
    with record.path.open() as lines:
        blocks = blocks_from_events(transcript_events(lines))
    assert [(b.kind, b.title) for b in blocks] == [
        ("pass", "Main session"),
        ("tool_use", "Bash"),
        ("tool_result", "Bash"),
        ("text", ""),
    ]
    assert blocks[2].body == "README.md" and blocks[3].body == "Done."
