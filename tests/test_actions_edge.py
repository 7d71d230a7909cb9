"""The Actions edge: workflow commands are escaped so data cannot forge a command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tusk import actions_edge


def test_data_escaping_keeps_a_message_on_one_line() -> None:
    assert actions_edge.escape_data("50%\r\n::error::pwned") == "50%25%0D%0A::error::pwned"


def test_property_escaping_also_covers_colon_and_comma() -> None:
    assert actions_edge.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


@pytest.fixture
def in_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")


@pytest.fixture
def on_a_laptop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)


def test_error_annotation_escapes_title_and_detail(
    in_actions: None, capsys: pytest.CaptureFixture[str]
) -> None:
    actions_edge.error("Bad: config, really", detail="line one\nline two 100%")
    out = capsys.readouterr().out
    assert out == "::error title=Bad%3A config%2C really::line one%0Aline two 100%25\n"


def test_warning_without_detail_uses_title_as_message(
    in_actions: None, capsys: pytest.CaptureFixture[str]
) -> None:
    actions_edge.warning("careful\n::error::no")
    assert capsys.readouterr().out == "::warning::careful%0A::error::no\n"


def test_mask_announces_every_line_of_a_secret(
    in_actions: None, capsys: pytest.CaptureFixture[str]
) -> None:
    actions_edge.mask("first\nsecond\n\n")
    assert capsys.readouterr().out == "::add-mask::first\n::add-mask::second\n"


def test_outside_actions_no_workflow_command_is_printed(
    on_a_laptop: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a laptop `::error::` lines would only double every message (and a mask
    command would print the very secret it hides)."""
    actions_edge.error("Bad config", detail="bot: required key is missing")
    actions_edge.warning("careful")
    actions_edge.mask("s3cret")
    actions_edge.group("Claude Code: Main session")
    actions_edge.end_group()
    captured = capsys.readouterr()
    assert "::" not in captured.out + captured.err
    assert "s3cret" not in captured.out + captured.err
    assert captured.err.splitlines() == [
        "error: Bad config: bot: required key is missing",
        "warning: careful",
        "== Claude Code: Main session",
    ]


def test_outputs_use_heredoc_form_safe_for_newlines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(target))
    actions_edge.set_outputs({"url": "https://x/1", "body": "a\nEOF\nb", "ok": True})
    text = target.read_text(encoding="utf-8")
    blocks = re.findall(r"^(\w+)<<(tusk_[0-9a-f]{32})\n(.*?)\n\2\n", text, re.S | re.M)
    assert [(name, value) for name, _, value in blocks] == [
        ("url", "https://x/1"),
        ("body", "a\nEOF\nb"),
        ("ok", "true"),
    ]
    assert len({delimiter for _, delimiter, _ in blocks}) == 3


def test_outputs_outside_actions_go_to_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GITHUB_OUTPUT", raising=False)
    actions_edge.set_outputs({"n": 3})
    captured = capsys.readouterr()
    assert captured.out == "" and "output n=3" in captured.err


def test_summary_appends_markdown_with_a_final_newline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    actions_edge.append_summary("### one")
    actions_edge.append_summary("two\n")
    assert target.read_text(encoding="utf-8") == "### one\ntwo\n"
