"""The scripted model over real HTTP: wire format, script steps, journal, failures."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import requests

from tusk.errors import InputError
from tusk.sandbox.model_script import load_script
from tusk.sandbox.model_server import ModelServer
from tusk.sandbox.model_testing import ScriptedModel

REPO = Path(__file__).resolve().parents[2]


def sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def assemble(events: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Rebuild content blocks the way an SDK client does."""
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for name, data in events:
        if name == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"])
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[data["index"]]["text"] += delta["text"]
            else:
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
    for index, raw in partial.items():
        blocks[index]["input"] = json.loads(raw)
    return [blocks[i] for i in sorted(blocks)]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def tool_result(content: Any, *, is_error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": "toolu_x", "content": content}
    return {"role": "user", "content": [{**block, "is_error": is_error}]}


def post(url: str, messages: list[dict[str, Any]], **extra: Any) -> requests.Response:
    body = {"model": "claude-test", "max_tokens": 10, "messages": messages, **extra}
    return requests.post(f"{url}/v1/messages?beta=true", json=body, timeout=10)


def test_streamed_tool_use_reassembles_into_the_scripted_input(
    scripted_model: ScriptedModel,
) -> None:
    tool = {"name": "mcp__github__get_issue", "input": {"repo": "alice/widgets", "number": 1}}
    url = scripted_model.start({"steps": [{"tool_use": tool}]})
    response = post(url, [user("go")], stream=True)
    assert response.headers["content-type"] == "text/event-stream"
    events = sse(response.text)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert events[0][1]["message"]["model"] == "claude-test"
    # The input arrives in more than one delta, as from the real API.
    assert names.count("content_block_delta") == 2
    (block,) = assemble(events)
    assert (block["type"], block["name"], block["input"]) == ("tool_use", *tool.values())
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_plain_json_request_gets_a_whole_message(scripted_model: ScriptedModel) -> None:
    url = scripted_model.start({"steps": [{"text": "Hello there."}]})
    message = post(url, [user("hi")]).json()
    assert message["type"] == "message" and message["role"] == "assistant"
    assert message["content"] == [{"type": "text", "text": "Hello there."}]
    assert message["stop_reason"] == "end_turn"


def test_blocks_step_sends_several_blocks_with_distinct_tool_ids(
    scripted_model: ScriptedModel,
) -> None:
    url = scripted_model.start(
        {
            "steps": [
                {
                    "blocks": [
                        {"text": "Two calls."},
                        {"tool_use": {"name": "a", "input": {"x": 1}}},
                        {"tool_use": {"name": "b", "input": {}}},
                    ]
                }
            ]
        }
    )
    blocks = assemble(sse(post(url, [user("go")], stream=True).text))
    assert [b["type"] for b in blocks] == ["text", "tool_use", "tool_use"]
    assert blocks[0]["text"] == "Two calls."
    assert blocks[1]["id"] != blocks[2]["id"]


def test_exhausted_script_answers_the_final_text(scripted_model: ScriptedModel) -> None:
    url = scripted_model.start({"steps": [{"text": "one"}], "final_text": "All finished."})
    texts = [post(url, [user("x")]).json()["content"][0]["text"] for _ in range(3)]
    assert texts == ["one", "All finished.", "All finished."]
    assert [e["kind"] for e in scripted_model.journal()] == ["text", "final", "final"]


def test_default_final_text_is_done(scripted_model: ScriptedModel) -> None:
    url = scripted_model.start({})
    assert post(url, [user("x")]).json()["content"][0]["text"] == "Done."


def test_unmet_expect_fails_loudly_and_does_not_advance(scripted_model: ScriptedModel) -> None:
    scripted_model.tolerate_failures()
    url = scripted_model.start(
        {"steps": [{"expect": {"last_tool_result_contains": "Typo"}}, {"text": "ok"}]}
    )
    for _ in range(2):
        response = post(url, [user("go"), tool_result("Something else")])
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["type"] == "invalid_request_error"
        assert "expect at step 0" in error["message"] and "'Typo'" in error["message"]
    failures = scripted_model.failures()
    assert [(f["n"], f["step"]) for f in failures] == [(1, 0), (2, 0)]
    assert "Something else" in failures[0]["reasons"][0]
    assert scripted_model.journal()[0]["error"].startswith("scripted model: expect at step 0")


def test_met_expect_reads_tool_result_content_given_as_blocks(
    scripted_model: ScriptedModel,
) -> None:
    url = scripted_model.start(
        {
            "steps": [
                {
                    "expect": {
                        "last_tool_result_contains": "Typo",
                        "last_tool_result_is_error": False,
                    }
                },
                {"text": "ok"},
            ]
        }
    )
    content = [{"type": "text", "text": "Typo in README"}]
    assert post(url, [user("go"), tool_result(content)]).json()["content"][0]["text"] == "ok"
    assert scripted_model.failures() == []


def test_expect_without_any_tool_result_is_unmet(scripted_model: ScriptedModel) -> None:
    scripted_model.tolerate_failures()
    url = scripted_model.start({"steps": [{"expect": {"last_tool_result_contains": "x"}}]})
    assert post(url, [user("go")]).status_code == 400
    assert scripted_model.failures()[0]["reasons"] == ["the request holds no tool_result"]


def test_expect_checks_offered_tools(scripted_model: ScriptedModel) -> None:
    scripted_model.tolerate_failures()
    url = scripted_model.start(
        {"steps": [{"expect": {"tools_include": ["history"], "tools_exclude": ["create_issue"]}}]}
    )
    tools = [{"name": "create_issue", "input_schema": {}}]
    assert post(url, [user("go")], tools=tools).status_code == 400
    (failure,) = scripted_model.failures()
    assert len(failure["reasons"]) == 2


def test_status_step_answers_the_http_error_with_headers(scripted_model: ScriptedModel) -> None:
    url = scripted_model.start(
        {"steps": [{"status": 429, "headers": {"retry-after": "7"}}, {"text": "after"}]}
    )
    response = post(url, [user("go")], stream=True)
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    assert response.json()["error"]["type"] == "rate_limit_error"
    assert post(url, [user("go")]).json()["content"][0]["text"] == "after"


def test_sse_error_breaks_the_stream_after_it_started(scripted_model: ScriptedModel) -> None:
    url = scripted_model.start({"steps": [{"sse_error": "overloaded_error"}] * 2})
    events = sse(post(url, [user("go")], stream=True).text)
    assert [name for name, _ in events] == ["message_start", "error"]
    assert events[1][1]["error"]["type"] == "overloaded_error"
    # The retry Claude Code sends without streaming gets the whole error instead.
    response = post(url, [user("go")])
    assert (response.status_code, response.json()["error"]["type"]) == (529, "overloaded_error")


def test_stall_waits_through_the_injected_sleep(scripted_model: ScriptedModel) -> None:
    waited: list[float] = []
    url = scripted_model.start(
        {"steps": [{"stall": 30}, {"stall": 15}, {"text": "late"}]}, sleep=waited.append
    )
    assert post(url, [user("go")]).json()["content"][0]["text"] == "late"
    assert waited == [45]
    assert scripted_model.journal()[0]["stalled"] == 45


def test_a_hold_keeps_the_answer_until_its_gate_is_released() -> None:
    import threading

    server = ModelServer({"steps": [{"text": "first"}, {"hold": "followup"}, {"text": "after"}]})
    url = server.start()
    try:
        assert post(url, [user("go")]).json()["content"][0]["text"] == "first"
        answers: list[str] = []
        waiting = threading.Thread(
            target=lambda: answers.append(post(url, [user("go")]).json()["content"][0]["text"])
        )
        waiting.start()
        waiting.join(timeout=0.5)
        assert waiting.is_alive() and answers == []  # held
        server.release("followup")
        waiting.join(timeout=5)
        assert answers == ["after"]
        assert server.journal()[1]["held"] == ["followup"]
    finally:
        server.stop()


def test_repeat_unrolls_steps_with_fresh_tool_ids(scripted_model: ScriptedModel) -> None:
    call = {"tool_use": {"name": "mcp__github__get_issue", "input": {"number": 1}}}
    url = scripted_model.start({"steps": [{"repeat": {"times": 3, "step": call}}]})
    blocks = [post(url, [user("go")]).json()["content"][0] for _ in range(4)]
    assert len({b["id"] for b in blocks[:3]}) == 3
    assert blocks[3] == {"type": "text", "text": "Done."}
    assert [e["kind"] for e in scripted_model.journal()] == ["tool_use"] * 3 + ["final"]


def test_conversations_are_chosen_by_the_latest_prompt_past_system_entries(
    scripted_model: ScriptedModel,
) -> None:
    url = scripted_model.start(
        {
            "steps": [{"text": "main 1"}, {"text": "main 2"}],
            "conversations": [
                {
                    "when_prompt_contains": "one-line summary",
                    "steps": [{"text": "summary"}],
                    "final_text": "no more summaries",
                }
            ],
        }
    )
    history = [user("Fix the typo"), {"role": "assistant", "content": "main 1"}]
    resume = [*history, {"role": "system", "content": "# Environment update"}]
    resume.append(user("Write a one-line summary"))
    texts = [
        post(url, [user("Fix the typo")]).json()["content"][0]["text"],
        post(url, resume).json()["content"][0]["text"],
        post(url, [*resume, tool_result("x")]).json()["content"][0]["text"],
        post(url, [*history, tool_result("y")]).json()["content"][0]["text"],
    ]
    assert texts == ["main 1", "summary", "no more summaries", "main 2"]


def test_journal_is_served_over_http_and_query_strings_are_ignored(
    scripted_model: ScriptedModel,
) -> None:
    url = scripted_model.start({"steps": [{"text": "x"}]})
    post(url, [user("go")])
    assert requests.get(f"{url}/_model/journal", timeout=10).status_code == 401
    secret = scripted_model.server.admin_secret if scripted_model.server else ""
    journal = requests.get(
        f"{url}/_model/journal", headers={"X-Tusk-Admin": secret}, timeout=10
    ).json()
    assert journal[0]["path"] == "/v1/messages"
    assert journal[0]["request"]["messages"] == [user("go")]
    assert requests.post(f"{url}/v2/other", json={}, timeout=10).status_code == 404


@pytest.mark.parametrize(
    ("script", "where"),
    [
        ({"steps": [{"txt": "typo"}]}, "steps.0.txt"),
        ({"steps": [{"text": "a", "tool_use": {"name": "b"}}]}, "steps.0"),
        ({"steps": [{"text": "a", "message": "b"}]}, "steps.0"),
        ({"steps": [{"repeat": {"times": 0, "step": {"text": "a"}}}]}, "steps.0.repeat.times"),
        ({"conversations": [{"steps": []}]}, "conversations.0.when_prompt_contains"),
    ],
)
def test_invalid_script_is_refused_with_the_key_path(script: dict[str, Any], where: str) -> None:
    with pytest.raises(InputError) as caught:
        load_script(script)
    assert where in caught.value.hint


def test_script_loads_from_a_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "script.yml"
    path.write_text("steps:\n  - tool_use: {name: t, input: {a: 1}}\n  - text: Done here.\n")
    with ModelServer(path) as server:
        assert post(server.url, [user("go")]).json()["content"][0]["input"] == {"a": 1}


def test_cli_prints_the_base_url_first(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"steps": [{"text": "from the cli"}]}))
    argv = [sys.executable, "-m", "tusk.cli.main", "sandbox", "model", "--port", "0"]
    process = subprocess.Popen([*argv, "--script", str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert post(url, [user("go")]).json()["content"][0]["text"] == "from the cli"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_fixture_fails_the_test_on_an_unmet_expect(tmp_path: Path) -> None:
    (tmp_path / "test_unmet.py").write_text(
        textwrap.dedent(
            """
            import requests

            def test_it(scripted_model):
                url = scripted_model.start({"steps": [{"expect": {"prompt_contains": "zzz"}}]})
                body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
                requests.post(url + "/v1/messages", json=body, timeout=10)
            """
        )
    )
    argv = [sys.executable, "-m", "pytest", "-p", "tusk.sandbox.model_testing", "--noconftest"]
    done = subprocess.run(
        [*argv, "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stdout
    assert "1 unmet expect(s)" in done.stdout and "'zzz'" in done.stdout


def test_expect_never_reached_after_the_run_started_is_a_failure(
    scripted_model: ScriptedModel,
) -> None:
    # The run stops after the tool call (a crash, a refusal): the expect that
    # would have checked the tool's result never sees a request.
    scripted_model.tolerate_failures()
    tool = {"name": "mcp__github__get_issue", "input": {"repo": "alice/widgets", "number": 1}}
    url = scripted_model.start(
        {"steps": [{"tool_use": tool}, {"expect": {"last_tool_result_contains": "Typo"}}]}
    )
    post(url, [user("go")])
    (failure,) = scripted_model.failures()
    assert (failure["step"], failure["conversation"]) == (1, "default")
    assert "never reached" in failure["reasons"][0]


def test_a_script_no_request_started_has_no_unreached_failures(
    scripted_model: ScriptedModel,
) -> None:
    scripted_model.start({"steps": [{"expect": {"prompt_contains": "x"}}]})
    assert scripted_model.failures() == []


def test_expect_checks_the_earlier_turns_before_the_prompt_in_order() -> None:
    from tusk.sandbox.model_script import Expect, unmet

    def body(*messages: tuple[str, str]) -> dict[str, Any]:
        return {"messages": [{"role": role, "content": text} for role, text in messages]}

    resumed = body(("user", "earlier task"), ("assistant", "earlier answer"), ("user", "now"))
    wanted = Expect(earlier_turns_contain=["earlier task", "earlier answer"], prompt_contains="now")
    assert unmet(wanted, resumed) == []
    backwards = Expect(earlier_turns_contain=["earlier answer", "earlier task"])
    assert unmet(backwards, resumed) != []
    assert unmet(Expect(earlier_turns_contain=[""]), body(("user", "now"))) == []
    [reason] = unmet(Expect(earlier_turns_contain=[""]), resumed)
    assert "2 earlier message(s) came before the prompt" in reason
