"""tusk.yml refused clearly: duplicate keys, anchors and aliases (alias bombs), files
over the size cap, the bot among the allowed users, unknown Claude Code tools, root as
the agent's user; and every problem in plain words with its key path and an example."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tusk.cli import main as cli
from tusk.contracts.config import CLAUDE_CODE_TOOLS, load_settings, parse_settings
from tusk.contracts.config_text import MAX_CONFIG_BYTES
from tusk.errors import ConfigError

MINIMAL = "bot: tusk-bot\ncontrol_repo: alice/tusk-control\nallowed_users: [alice]\n"
REPO = Path(__file__).resolve().parents[2]
CLAUDE = REPO / "node_modules" / ".bin" / "claude"


def problems_in(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "tusk.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    return caught.value.problems


def problems_of(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_settings(data, source="tusk.yml")
    return caught.value.problems


BASE = {"bot": "tusk-bot", "control_repo": "alice/tusk-control", "allowed_users": ["alice"]}


def test_a_key_given_twice_is_refused_not_silently_overwritten(tmp_path: Path) -> None:
    text = MINIMAL + "staged: false\nlimits:\n  max_turns: 10\n  max_turns: 500\n"
    problems = problems_in(tmp_path, text)
    assert problems == [
        "(YAML) line 7: the key 'max_turns' is given twice in one block (first on line 6); "
        "keep one of them"
    ]
    problems = problems_in(tmp_path, MINIMAL + "staged: true\nstaged: false\n")
    assert problems[0].startswith("(YAML) line 5: the key 'staged' is given twice")


def test_the_same_key_in_different_blocks_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "tusk.yml"
    path.write_text(MINIMAL + "labels:\n  bug: bug\ngo_away:\n  phrase: go away\n")
    assert load_settings(path).labels.bug == "bug"


@pytest.mark.parametrize(
    "text",
    [
        MINIMAL + "labels: &l\n  bug: bug\ngo_away: *l\n",
        MINIMAL.replace("[alice]", "&users [alice]") + "limits: {}\n",
    ],
)
def test_anchors_and_aliases_are_refused(tmp_path: Path, text: str) -> None:
    (problem,) = problems_in(tmp_path, text)
    assert problem.startswith("(YAML) line ")
    assert "no anchors or aliases" in problem or "(nor aliases that use it)" in problem


def test_an_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for name, prev in zip("bcdefghij", "abcdefghi", strict=True):
        lines.append(f"{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]")
    started = time.monotonic()
    (problem,) = problems_in(tmp_path, "\n".join(lines) + "\n")
    assert "anchor &a" in problem and time.monotonic() - started < 5  # not expanded


def test_a_file_over_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    text = MINIMAL + "# padding\n" * (MAX_CONFIG_BYTES // 10 + 1)
    (problem,) = problems_in(tmp_path, text)
    assert problem == (
        "(file) is larger than 256 KB, which no tusk.yml needs: check that this is the right file"
    )


def test_a_file_just_under_the_cap_is_read(tmp_path: Path) -> None:
    padding = "#" * 99 + "\n"
    text = MINIMAL + padding * ((MAX_CONFIG_BYTES - len(MINIMAL)) // 100)
    assert len(text.encode()) <= MAX_CONFIG_BYTES
    path = tmp_path / "tusk.yml"
    path.write_text(text)
    assert load_settings(path).bot == "tusk-bot"


@pytest.mark.parametrize("spelling", ["tusk-bot", "Tusk-Bot"])
def test_the_bot_among_the_allowed_users_is_refused(spelling: str) -> None:
    (problem,) = problems_of({**BASE, "allowed_users": ["alice", spelling]})
    assert problem.startswith("allowed_users: lists the bot itself (tusk-bot)")
    assert "remove it" in problem


def test_an_unknown_builtin_tool_is_refused_with_the_likely_name() -> None:
    (problem,) = problems_of({**BASE, "agent": {"builtin_tools": ["Bsh", "Read", "Zzz"]}})
    assert problem.startswith(
        "agent.builtin_tools: 'Bsh' (did you mean 'Bash'?), 'Zzz': not a Claude Code tool"
    )
    assert "Claude Code would drop without a word" in problem and "WebFetch" in problem


def test_no_builtin_tools_at_all_is_allowed() -> None:
    assert parse_settings({**BASE, "agent": {"builtin_tools": []}}, source="x").agent


@pytest.mark.parametrize(
    ("user", "words"),
    [
        ("root", "must not be root"),
        ("Root!", "must be the start of a Linux user name"),
        ("a" * 21, "at most 20 characters"),
        ("-agent", "beginning with a letter or '_'"),
    ],
)
def test_the_agents_linux_user_is_checked(user: str, words: str) -> None:
    (problem,) = problems_of({**BASE, "agent": {"linux_user": user}})
    assert problem.startswith("agent.linux_user: ") and words in problem


def test_config_check_refuses_root_in_plain_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    path = tmp_path / "tusk.yml"
    path.write_text(MINIMAL + "agent:\n  linux_user: root\n")
    assert cli.main(["config", "check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "agent.linux_user: must not be root" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("patch", "line"),
    [
        (
            {"limits": {"max_turns": "ten"}},
            "limits.max_turns: must be a whole number (got 'ten'); for example `max_turns: 60`",
        ),
        (
            {"limits": {"max_turns": 0}},
            "limits.max_turns: must be at least 1 (got 0); for example `max_turns: 60`",
        ),
        (
            {"staged": "maybe"},
            "staged: must be true or false (got 'maybe'); for example `staged: false`",
        ),
        (
            {"allowed_users": "alice"},
            "allowed_users: must be a list (got 'alice'); for example "
            "`allowed_users: [alice, bob]`",
        ),
        (
            {"control_repo": "tusk-control"},
            "control_repo: must be a repository as owner/name (e.g. my-org/tusk-control) "
            "(got 'tusk-control'); for example `control_repo: my-org/tusk-control`",
        ),
        (
            {"bot": "@tusk-bot"},
            "bot: must be a GitHub login (letters, digits and single hyphens, e.g. octocat) "
            "(got '@tusk-bot'); for example `bot: my-bot`",
        ),
        (
            {"go_away": {"reaction": "thumbsup"}},
            "go_away.reaction: must be one of ['+1', '-1', 'confused', 'eyes', 'heart', "
            "'hooray', 'laugh', 'rocket'] or null (got 'thumbsup'); for example "
            "`reaction: '+1'`",
        ),
    ],
)
def test_problems_read_as_plain_words_with_path_and_example(patch: dict, line: str) -> None:
    assert problems_of({**BASE, **patch}) == [line]


@pytest.mark.parametrize(
    "patch",
    [
        {"limits": {"max_turns": "ten"}},
        {"allowed_users": "alice"},
        {"control_repo": "x"},
        {"agent": {"builtin_tools": "Bash"}},
        {"limits": 5},
        {"agent": {"network": "closed"}},
    ],
)
def test_no_pydantic_internals_and_no_regex_reach_the_user(patch: dict) -> None:
    text = "\n".join(problems_of({**BASE, **patch}))
    for internal in ("Input should be", "valid tuple", "Value error,", "^[", "pattern", "]{"):
        assert internal not in text, text


@pytest.mark.skipif(not CLAUDE.exists(), reason="node_modules/.bin/claude is missing: npm ci")
def test_the_known_tool_names_are_exactly_those_the_pinned_claude_code_accepts(
    scripted_model: object, tmp_path: Path
) -> None:
    """Claude Code drops a --tools name it does not know; its init event lists the rest."""
    url = scripted_model.start({"steps": [{"text": "ok"}]})  # type: ignore[attr-defined]
    probe = sorted(CLAUDE_CODE_TOOLS | {"NotATool", "TodoWrite", "LS", "MultiEdit"})
    env = {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }
    argv = [str(CLAUDE), "-p", "hi", "--output-format", "stream-json", "--verbose"]
    argv += ["--setting-sources", "", "--tools", ",".join(probe)]
    done = subprocess.run(
        argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180, check=False
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    init = next(e for e in events if e.get("subtype") == "init")
    assert set(init["tools"]) == CLAUDE_CODE_TOOLS, done.stderr[-2000:]
