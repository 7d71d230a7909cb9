"""The `tusk` command: one subcommand per job, listed by --help, errors turned into exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tusk import cli


def test_help_lists_one_subcommand_per_job(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        cli.main(["--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    for name in ("poll", "receive-shard", "merge-shards", "build-context", "run-claude", "go-away"):
        assert f"    {name}" in out
    assert {command.name for command in cli.COMMANDS} >= {"mcp", "config", "sandbox"}


def test_no_arguments_prints_help_instead_of_failing_obscurely(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        cli.main([])
    assert "COMMAND" in capsys.readouterr().out


def test_user_error_in_a_subcommand_exits_one_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["config", "check", str(tmp_path / "absent.yml")]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "file not found" in captured.err
