"""Transcript rendering and the hygiene of every comment a run posts."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tusk.steps.run_claude.writeup.summary import render_transcript
from tusk.steps.run_claude.writeup.transcript import (
    RESULT_CHARS,
    blocks_from_events,
    defuse_mentions,
    fence_for,
    redact,
    shorten,
    split_comments,
)


def tool_pair(tool_id: str, name: str, arguments: dict, content, is_error: bool = False) -> list:
    result = {"type": "tool_result", "tool_use_id": tool_id, "content": content}
    if is_error:
        result["is_error"] = True
    return [
        {
            "type": "assistant",
            "message": {
                "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": arguments}]
            },
        },
        {"type": "user", "message": {"content": [result]}},
    ]


def test_whole_transcript_renders_each_turn_call_result_and_error() -> None:
    events = [
        {"type": "tusk", "subtype": "pass", "name": "Main session", "prompt": "Fix the typo"},
        {
            "type": "system",
            "subtype": "init",
            "model": "m-1",
            "claude_code_version": "2.1.328",
            "tools": ["Bash", "mcp__github__get_issue"],
            "mcp_servers": [{"name": "github", "status": "connected"}],
        },
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "Reading."}]}},
        *tool_pair("t1", "mcp__github__get_issue", {"repo": "a/b", "number": 1}, "Typo here"),
        *tool_pair(
            "t2", "mcp__github__create_comment", {"body": "x"}, "DUPLICATE_WRITE: no", is_error=True
        ),
        {
            "type": "system",
            "subtype": "api_retry",
            "attempt": 1,
            "max_retries": 2,
            "error_status": 500,
            "error": "server_error",
        },
        {
            "type": "result",
            "subtype": "success",
            "num_turns": 3,
            "duration_ms": 12,
            "result": "Done.",
            "is_error": False,
            "total_cost_usd": 0.5,
        },
    ]
    expected = """## Transcript of job `job-1`

9 events rebuilt from the model proxy's own record of this run (what
Claude Code sent the model and what the model answered, kept where the agent cannot write),
not from Claude Code's output. Long tool results are shortened, head and tail kept.

---

### Main session

<details><summary>Prompt</summary>

```markdown
Fix the typo
```

</details>

*Session started:* model `m-1`, Claude Code 2.1.328, 2 tools, MCP servers: github: connected

**Agent:**

> Reading.

🔧 **`mcp__github__get_issue`**

```json
{
  "repo": "a/b",
  "number": 1
}
```

↩️ result of `mcp__github__get_issue`

```
Typo here
```

🔧 **`mcp__github__create_comment`**

```json
{
  "body": "x"
}
```

❌ error from `mcp__github__create_comment`

```
DUPLICATE_WRITE: no
```

⚠️ **API retry:**

> API retry 1/2 after 500 server_error

🏁 **Result** (success · 3 turns · 12 ms · $0.5000)

> Done.

"""
    assert render_transcript("job-1", events) == expected


def test_tool_output_cannot_close_its_fence() -> None:
    events = tool_pair("t", "Bash", {"command": "cat x"}, "a\n````\n# Heading\n</details>")
    rendered = render_transcript("j", events)
    assert "`````\na\n````\n# Heading\n</details>\n`````" in rendered


def test_agent_text_cannot_open_a_fence_or_close_details() -> None:
    events = [
        {
            "type": "assistant",
            "message": {"content": [{"type": "text", "text": "```\n</details>\n# big"}]},
        }
    ]
    rendered = render_transcript("j", events)
    assert "> \\```" in rendered and "&lt;/details&gt;" in rendered and "> \\# big" in rendered


def test_long_results_keep_head_and_tail() -> None:
    text = "H" * 5000 + "T" * 5000
    events = tool_pair("t", "Read", {"file_path": "f"}, [{"type": "text", "text": text}])
    [_, result] = blocks_from_events(events)
    assert result.body.startswith("H" * 100) and result.body.endswith("T" * 100)
    assert "characters omitted" in result.body
    assert len(result.body) < RESULT_CHARS + 100


def test_long_input_strings_are_shortened_not_dropped() -> None:
    events = tool_pair("t", "Write", {"file_path": "f", "content": "x" * 10_000}, "ok")
    [call, _] = blocks_from_events(events)
    assert '"file_path": "f"' in call.body and "characters omitted" in call.body


def test_supervisor_stop_is_shown() -> None:
    blocks = blocks_from_events(
        [{"type": "tusk", "subtype": "stopped", "kind": "loop", "text": "6 identical calls"}]
    )
    assert blocks[0].is_error and blocks[0].body == "6 identical calls"


def test_shorten_is_identity_under_the_limit() -> None:
    assert shorten("abc", 10) == "abc"


def test_fence_is_longer_than_any_backtick_run() -> None:
    assert fence_for("no ticks") == "```"
    assert fence_for("a ````` b") == "``````"


def test_known_secret_values_and_token_shapes_are_redacted() -> None:
    key = "sk-test-0123456789abcdef"
    text = f"ANTHROPIC_API_KEY={key} ghp_{'a' * 36} github_pat_{'B' * 30} short=agent"
    cleaned = redact(text, [key, "agent"])
    assert key not in cleaned and "ghp_" not in cleaned and "github_pat_" not in cleaned
    assert "short=agent" in cleaned  # an 5-letter "secret" is a word, not replaced


def test_mentions_notify_nobody_but_emails_stay() -> None:
    assert defuse_mentions("@alice and bob@example.com") == "@\u200balice and bob@example.com"


def test_short_text_is_one_comment_without_header() -> None:
    assert split_comments("hello", limit=100) == ["hello"]


def test_split_reopens_a_fence_cut_in_the_middle() -> None:
    body = "intro\n```json\n" + "".join(f"line {i}\n" for i in range(400)) + "```\noutro\n"
    parts = split_comments(body, limit=1200, label="part")
    assert len(parts) > 2
    for part in parts:
        assert len(part) <= 1200
        fences = re.findall(r"^```", part, flags=re.M)
        assert len(fences) % 2 == 0, part
    middle = parts[1]
    assert middle.startswith("<sub>part 2/") and "```json\n" in middle


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet="ab #\n", max_size=300),
            st.just("```\n"),
            st.just("````\n"),
            st.text(alphabet="x", min_size=2000, max_size=5000),
        ),
        max_size=40,
    ),
    st.integers(min_value=1500, max_value=4000),
)
def test_split_parts_fit_and_keep_every_character_in_order(pieces: list[str], limit: int) -> None:
    text = "".join(pieces)
    parts = split_comments(text, limit=limit)
    assert all(len(part) <= limit for part in parts)
    if len(parts) > 1:
        stripped = [re.sub(r"^<sub>part \d+/\d+</sub>\n\n", "", p) for p in parts]
        joined = "".join(stripped)
        # Only fence lines and line breaks are added; the text itself survives in order.
        assert _without_fence_lines(joined) == _without_fence_lines(text)


def _without_fence_lines(text: str) -> str:
    # A fence line may be indented up to three spaces; the split reopens it as written.
    return re.sub(r"^ {0,3}`{3,}[^`\n]*$", "", text, flags=re.M).replace("\n", "")


def test_a_cut_inside_a_long_line_never_makes_a_fence() -> None:
    for position in range(1, 3000):  # wherever the cut falls, it must not start a fence
        text = "x" * position + "```" + "y" * (9000 - position) + "\n"
        for part in split_comments(text, limit=6000):
            body = re.sub(r"^<sub>part \d+/\d+</sub>\n\n", "", part)
            assert not any(line.startswith("```") for line in body.splitlines()), position


@pytest.mark.parametrize("limit", [65_536])
def test_five_thousand_events_fit_in_comments(limit: int) -> None:
    events = []
    for index in range(2500):
        events += tool_pair(f"t{index}", "Bash", {"command": f"echo {index}"}, "y" * 300)
    parts = split_comments(render_transcript("j", events), limit=limit)
    assert len(parts) > 1 and all(len(part) <= limit for part in parts)
