"""`tusk mcp serve --context` with a file that is not a context document: each
problem named, no traceback, nothing served."""

from __future__ import annotations

from pathlib import Path

import pytest

from tusk.cli.main import main


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        ("{bad\n", ["  - the file: Invalid JSON"]),
        ('{"version": 1}', ["  - jobid: Field required", "  - timestamp: Field required"]),
    ],
    ids=["not_json", "not_a_context_document"],
)
def test_a_bad_context_file_is_refused_with_each_problem(
    text: str,
    problems: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "tusk.yml"
    config.write_text("bot: tusk-bot\ncontrol_repo: alice/tusk-control\nallowed_users: [alice]\n")
    context = tmp_path / "context.json"
    context.write_text(text)
    for name, value in {
        "TUSK_MCP_BEARER": "0123456789abcdef0123",
        "TUSK_AGENT_TOKEN": "agent",
        "TUSK_READ_TOKEN": "read",
    }.items():
        monkeypatch.setenv(name, value)
    args = ["--config", str(config), "--context", str(context), "--run-dir", str(tmp_path / "r")]
    code = main(["mcp", "serve", *args])
    error = capsys.readouterr().err
    assert code == 1
    assert f"error: {context}: not a Tusk context document" in error
    assert all(problem in error for problem in problems), error
    assert "Traceback" not in error and "pydantic.dev" not in error
