"""The live watch: loops over every tool, results as string or list, init checks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tusk.steps.run_claude.session.watch import StreamWatch, canonical_result


def init(status: str = "connected", name: str = "github") -> str:
    return json.dumps(
        {
            "type": "system",
            "subtype": "init",
            "session_id": "s-1",
            "tools": ["Bash", "mcp__github__get_issue", "mcp__github__history"],
            "mcp_servers": [{"name": name, "status": status}],
        }
    )


def call(tool_id: str, name: str = "mcp__github__get_issue", **arguments: Any) -> str:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": arguments or {"n": 1}}
    return json.dumps({"type": "assistant", "message": {"content": [block]}})


def result(tool_id: str, content: Any = "same", is_error: bool = False) -> str:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error:
        block["is_error"] = True
    return json.dumps({"type": "user", "message": {"content": [block]}})


def feed_pairs(watch: StreamWatch, count: int, **kwargs: Any) -> list[Any]:
    verdicts = []
    for index in range(count):
        verdicts.append(watch.feed(call(f"t{index}", **kwargs.get("call", {}))))
        verdicts.append(watch.feed(result(f"t{index}", **kwargs.get("result", {}))))
    return [v for v in verdicts if v is not None]


def test_six_identical_calls_with_identical_results_are_a_loop() -> None:
    watch = StreamWatch(loop_threshold=6)
    assert feed_pairs(watch, 5) == []
    watch.feed(call("t5"))
    verdict = watch.feed(result("t5"))
    assert verdict is not None and verdict.kind == "loop"
    assert "6 consecutive identical calls to mcp__github__get_issue" in verdict.reason


def test_builtin_tool_loops_are_caught_too() -> None:
    watch = StreamWatch(loop_threshold=3)
    found = feed_pairs(watch, 3, call={"name": "Bash", "command": "ls"})
    assert [v.kind for v in found] == ["loop"]


def test_same_call_with_changing_results_is_not_a_loop() -> None:
    watch = StreamWatch(loop_threshold=3)
    for index in range(6):
        watch.feed(call(f"t{index}"))
        assert watch.feed(result(f"t{index}", content=f"page {index}")) is None
    assert watch.stop is None


def test_a_different_call_in_between_resets_the_streak() -> None:
    watch = StreamWatch(loop_threshold=3)
    feed_pairs(watch, 2)
    watch.feed(call("other", number=2))
    watch.feed(result("other"))
    assert feed_pairs(watch, 2) == []


def test_list_results_compare_by_content_and_error_flag() -> None:
    watch = StreamWatch(loop_threshold=3)
    listed = [{"type": "text", "text": "x"}]
    assert feed_pairs(watch, 2, result={"content": listed}) == []
    watch.feed(call("t9"))
    assert watch.feed(result("t9", content=listed, is_error=True)) is None
    assert canonical_result(listed) == canonical_result([{"text": "x", "type": "text"}])


def test_results_are_paired_with_calls_by_id_not_by_order() -> None:
    """Two tool_use blocks in one message, results in reverse order."""
    watch = StreamWatch(loop_threshold=2)
    message = {
        "type": "assistant",
        "message": {
            "content": [
                {"type": "tool_use", "id": "a", "name": "Read", "input": {"p": "x"}},
                {"type": "tool_use", "id": "b", "name": "Bash", "input": {"c": "y"}},
            ]
        },
    }
    watch.feed(json.dumps(message))
    assert watch.feed(result("b", content="bash out")) is None
    assert watch.feed(result("a", content="read out")) is None
    watch.feed(call("c", name="Read", p="x"))
    verdict = watch.feed(result("c", content="read out"))
    assert verdict is not None and "Read" in verdict.reason


def test_result_without_its_call_is_ignored() -> None:
    watch = StreamWatch(loop_threshold=2)
    for _ in range(4):
        assert watch.feed(result("ghost")) is None


def test_init_records_session_and_server_tools() -> None:
    watch = StreamWatch(loop_threshold=6)
    assert watch.feed(init()) is None
    assert watch.session_id == "s-1"
    assert watch.server_tools() == ["mcp__github__get_issue", "mcp__github__history"]


@pytest.mark.parametrize("status", ["failed", "pending", "needs-auth"])
def test_init_with_mcp_server_not_connected_stops_the_run(status: str) -> None:
    verdict = StreamWatch(loop_threshold=6).feed(init(status))
    assert verdict is not None and verdict.kind == "mcp_not_connected"
    assert status in verdict.reason


def test_init_without_the_github_server_stops_the_run() -> None:
    verdict = StreamWatch(loop_threshold=6).feed(init(name="other"))
    assert verdict is not None and "absent" in verdict.reason


def test_garbage_lines_do_not_break_the_watch() -> None:
    watch = StreamWatch(loop_threshold=2)
    for line in ["", "not json", "[1, 2]", "{"]:
        assert watch.feed(line) is None
    assert watch.events == 0
    watch.feed(call("t1"))
    assert watch.events == 1 and watch.tool_calls == 1


def test_result_event_is_kept() -> None:
    watch = StreamWatch(loop_threshold=2)
    watch.feed(json.dumps({"type": "result", "subtype": "success", "session_id": "s-9"}))
    assert watch.result is not None and watch.session_id == "s-9"


def test_stop_is_reported_once() -> None:
    watch = StreamWatch(loop_threshold=2)
    found = feed_pairs(watch, 5)
    assert len(found) == 1
